package platform

import (
	"bytes"
	"encoding/xml"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Arguments worth quoting on every system.
var trickyArgs = []string{
	"/usr/bin/ccmesh", "--data", "/home/a b/ccmesh", `/x/it$s`, `C:\Users\me\ccmesh`, `C:\dir with space\`,
	`say "hi"`, "100%", "back`tick", "semi;colon", "a&b<c>d", "quote's", "~/x", "*?#()|", "数据", "",
}

func TestAutostartArgs(t *testing.T) {
	data := t.TempDir()
	got, err := AutostartArgs("/opt/ccmesh/ccmesh", data, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/opt/ccmesh/ccmesh", "--minimized", "--data", data}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// --listen from the flag wins over the setting, so the entry keeps it.
	got, _ = AutostartArgs("/opt/ccmesh/ccmesh", data, "127.0.0.1:4000")
	if want := []string{"/opt/ccmesh/ccmesh", "--minimized", "--data", data, "--listen", "127.0.0.1:4000"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// A relative data dir is written absolute: login does not start in
	// today's working directory.
	got, _ = AutostartArgs("/opt/ccmesh/ccmesh", "rel", "")
	if !filepath.IsAbs(got[3]) {
		t.Errorf("data dir %q is not absolute", got[3])
	}
}

func TestDesktopExecArg(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/usr/bin/ccmesh", "/usr/bin/ccmesh"},
		{"--minimized", "--minimized"},
		{"/home/a b/ccmesh", `"/home/a b/ccmesh"`},
		{`/x/it$s`, `"/x/it\\$s"`},
		{`C:\x`, `"C:\\\\x"`},
		{`say "hi"`, `"say \\"hi\\""`},
		{"100%", "100%%"},
		{"", `""`},
	}
	for _, tc := range tests {
		if got, err := desktopExecArg(tc.in); err != nil || got != tc.want {
			t.Errorf("desktopExecArg(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := desktopExecArg("a\nb"); err == nil {
		t.Error("a newline was written into an Exec key")
	}
}

// The Exec key reads back as the arguments, by the Desktop Entry
// Specification's rules (execArgs below).
func TestDesktopEntryRoundTrip(t *testing.T) {
	b, err := desktopEntry(trickyArgs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := execArgs(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, trickyArgs) {
		t.Errorf("Exec reads back as\n %q\nwant\n %q\n%s", got, trickyArgs, b)
	}
	for _, line := range []string{"[Desktop Entry]", "Type=Application", "Name=ccmesh", "Terminal=false"} {
		if !bytes.Contains(b, []byte(line+"\n")) {
			t.Errorf("no %q in\n%s", line, b)
		}
	}
}

func TestDesktopEntryOn(t *testing.T) {
	b, _ := desktopEntry([]string{"/usr/bin/ccmesh"})
	if !desktopEntryOn(b) {
		t.Error("our own entry reads as off")
	}
	for _, off := range []string{"Hidden=true", "X-GNOME-Autostart-enabled=false"} {
		if desktopEntryOn(append(slices.Clone(b), off+"\n"...)) {
			t.Errorf("an entry with %s reads as on", off)
		}
	}
}

// execArgs reads the Exec key of a desktop entry as a launcher does: the
// string value's escapes first, then the quoting of arguments, then %%.
func execArgs(t *testing.T, entry []byte) ([]string, error) {
	t.Helper()
	var value string
	for line := range strings.SplitSeq(string(entry), "\n") {
		if v, ok := strings.CutPrefix(line, "Exec="); ok {
			value = v
		}
	}
	var unescaped strings.Builder
	for i := 0; i < len(value); i++ {
		if value[i] == '\\' && i+1 < len(value) {
			i++
			switch value[i] {
			case 's':
				unescaped.WriteByte(' ')
			case 'n':
				unescaped.WriteByte('\n')
			case 't':
				unescaped.WriteByte('\t')
			case 'r':
				unescaped.WriteByte('\r')
			case '\\':
				unescaped.WriteByte('\\')
			default:
				t.Fatalf("unknown string escape \\%c in %q", value[i], value)
			}
			continue
		}
		unescaped.WriteByte(value[i])
	}
	s := unescaped.String()
	var args []string
	var cur strings.Builder
	inArg, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\\' && i+1 < len(s) && strings.IndexByte("\"`$\\", s[i+1]) >= 0:
			i++
			cur.WriteByte(s[i])
		case quoted && c == '"':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '"':
			quoted, inArg = true, true
		case c == ' ':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			if strings.IndexByte("\t'\\><~|&;$*?#()`", c) >= 0 {
				t.Fatalf("reserved character %q outside quotes in %q", c, s)
			}
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	for i := range args {
		args[i] = strings.ReplaceAll(args[i], "%%", "%")
	}
	return args, nil
}

// The LaunchAgent is a property list that launchd reads back as the
// arguments, RunAtLoad set.
func TestLaunchAgent(t *testing.T) {
	b, err := launchAgent(trickyArgs)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name `xml:"plist"`
		Dict    struct {
			Items []struct {
				XMLName xml.Name
				Text    string   `xml:",chardata"`
				Strings []string `xml:"string"`
			} `xml:",any"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b)
	}
	got := map[string]any{}
	items := doc.Dict.Items
	for i := 0; i+1 < len(items); i += 2 {
		if items[i].XMLName.Local != "key" {
			t.Fatalf("item %d is <%s>, want <key>", i, items[i].XMLName.Local)
		}
		switch v := items[i+1]; v.XMLName.Local {
		case "string":
			got[items[i].Text] = v.Text
		case "array":
			got[items[i].Text] = v.Strings
		case "true":
			got[items[i].Text] = true
		default:
			t.Fatalf("unexpected <%s>", v.XMLName.Local)
		}
	}
	if got["Label"] != autostartID || got["RunAtLoad"] != true || got["ProcessType"] != "Interactive" {
		t.Errorf("plist keys %v", got)
	}
	if args, _ := got["ProgramArguments"].([]string); !slices.Equal(args, trickyArgs) {
		t.Errorf("ProgramArguments %q, want %q", args, trickyArgs)
	}
	if !bytes.HasPrefix(b, []byte(`<?xml version="1.0" encoding="UTF-8"?>`)) || !bytes.Contains(b, []byte(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN"`)) {
		t.Errorf("no plist header:\n%s", b)
	}
}

func TestRunKeyValue(t *testing.T) {
	got := runKeyValue([]string{`C:\Program Files\ccmesh\ccmesh.exe`, "--minimized", "--data", `C:\Users\me\AppData\Roaming\ccmesh`})
	if want := `"C:\Program Files\ccmesh\ccmesh.exe" --minimized --data C:\Users\me\AppData\Roaming\ccmesh`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, tc := range []struct{ in, want string }{
		{`C:\dir with space\`, `"C:\dir with space\\"`},
		{`a"b`, `"a\"b"`},
		{`a\"b`, `"a\\\"b"`},
		{`a\\b`, `a\\b`},
		{"", `""`},
		{"tab\there", "\"tab\there\""},
	} {
		if got := windowsArg(tc.in); got != tc.want {
			t.Errorf("windowsArg(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// And it reads back as the arguments by CommandLineToArgvW's rules.
	args := append([]string{`C:\Program Files\ccmesh\ccmesh.exe`}, trickyArgs...)
	if back := argvW(runKeyValue(args)); !slices.Equal(back, args) {
		t.Errorf("reads back as\n %q\nwant\n %q", back, args)
	}
}

// argvW splits a command line as CommandLineToArgvW does: the program up
// to the closing quote, then arguments where 2n backslashes before a quote
// are n and the quote toggles quoting, 2n+1 are n and a literal quote, and
// backslashes before anything else are themselves.
func argvW(s string) []string {
	var args []string
	if strings.HasPrefix(s, `"`) {
		end := strings.IndexByte(s[1:], '"')
		args = append(args, s[1:1+end])
		s = s[2+end:]
	}
	var cur strings.Builder
	inArg, quoted := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			n := 0
			for i < len(s) && s[i] == '\\' {
				n++
				i++
			}
			if i < len(s) && s[i] == '"' {
				cur.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					cur.WriteByte('"')
				} else {
					quoted = !quoted
				}
			} else {
				cur.WriteString(strings.Repeat(`\`, n))
				i--
			}
			inArg = true
		case c == '"':
			quoted, inArg = !quoted, true
		case (c == ' ' || c == '\t') && !quoted:
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args
}
