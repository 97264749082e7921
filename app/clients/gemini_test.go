package clients

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var geminiWant = map[string]string{geminiBaseURLEnv: "http://127.0.0.1:3457", geminiKeyEnv: "ccmesh"}

const geminiLines = "GOOGLE_GEMINI_BASE_URL='http://127.0.0.1:3457'\nGEMINI_API_KEY='ccmesh'\n"

// TestDotenvEdits: the two variables are set where they are assigned, or
// added at the end; every other byte — comments, order, quotes, export
// lines, a value over several lines — stays.
func TestDotenvEdits(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"no file", "", geminiLines},
		{"other lines kept, no newline at the end", "# mine\nFOO=bar", "# mine\nFOO=bar\n" + geminiLines},
		{"replaced in place with comments and order kept",
			"# top\nA=1\nGEMINI_API_KEY=old-key # my key\n\nB=\"two words\"\nGOOGLE_GEMINI_BASE_URL=https://x.example\nC='c'\n",
			"# top\nA=1\nGEMINI_API_KEY='ccmesh' # my key\n\nB=\"two words\"\nGOOGLE_GEMINI_BASE_URL='http://127.0.0.1:3457'\nC='c'\n"},
		{"export lines keep export and indentation",
			"export GEMINI_API_KEY=\"old\"\n  export GOOGLE_GEMINI_BASE_URL = 'http://old'\n",
			"export GEMINI_API_KEY='ccmesh'\n  export GOOGLE_GEMINI_BASE_URL='http://127.0.0.1:3457'\n"},
		{"every assignment of a key set (dotenv takes the last)",
			"GEMINI_API_KEY=a\nX=1\nGEMINI_API_KEY=b\n",
			"GEMINI_API_KEY='ccmesh'\nX=1\nGEMINI_API_KEY='ccmesh'\nGOOGLE_GEMINI_BASE_URL='http://127.0.0.1:3457'\n"},
		{"an empty value", "GEMINI_API_KEY=\nX=1\n", "GEMINI_API_KEY='ccmesh'\nX=1\nGOOGLE_GEMINI_BASE_URL='http://127.0.0.1:3457'\n"},
		{"colon form", "GEMINI_API_KEY: old\n", "GEMINI_API_KEY='ccmesh'\nGOOGLE_GEMINI_BASE_URL='http://127.0.0.1:3457'\n"},
		{"a quoted value over lines that looks like an assignment stays",
			"NOTE=\"line one\nGEMINI_API_KEY=inside\"\n",
			"NOTE=\"line one\nGEMINI_API_KEY=inside\"\n" + geminiLines},
		{"CRLF lines kept", "A=1\r\nGEMINI_API_KEY=old\r\nB=2\r\n",
			"A=1\r\nGEMINI_API_KEY='ccmesh'\r\nB=2\r\nGOOGLE_GEMINI_BASE_URL='http://127.0.0.1:3457'\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := editDotenv(c.in, geminiKeys, geminiWant)
			if err != nil {
				t.Fatalf("edit: %v", err)
			}
			if got != c.want {
				t.Errorf("got:\n%q\nwant:\n%q", got, c.want)
			}
			if err := checkDotenv(c.in, got, geminiWant); err != nil {
				t.Errorf("result does not check: %v", err)
			}
		})
	}
}

// TestDotenvParse: values read as dotenv reads them.
func TestDotenvParse(t *testing.T) {
	got := dotenvParse("# c\nA=plain # comment\nexport B='single # kept'\nC=\"a\\nb\"\nD=`back`\nE=\nF: colon\nG=\"multi\nline\"\r\nH=x\n")
	want := map[string]string{"A": "plain", "B": "single # kept", "C": "a\nb", "D": "back", "E": "", "F": "colon", "G": "multi\nline", "H": "x"}
	if len(got) != len(want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
}

// TestDotenvQuote: every value a token may be reads back as itself, or is
// refused rather than written to read otherwise.
func TestDotenvQuote(t *testing.T) {
	for _, v := range []string{"", "plain", "it's", "a'b`c", `a'b` + "`" + `c"d`, `a'b` + "`" + `c"d\e`, "ends\\", `back\slash`, "#hash $dollar", `\n literal`} {
		q, err := dotenvQuote(v)
		if err != nil {
			t.Errorf("%q refused: %v", v, err)
			continue
		}
		if got := dotenvParse("K=" + q + "\n")["K"]; got != v {
			t.Errorf("%q written as %s reads back as %q", v, q, got)
		}
	}
	for _, v := range []string{"a\nb", `'` + "`" + `"\`, `a'b` + "`" + `c"d#e`} {
		if q, err := dotenvQuote(v); err == nil {
			t.Errorf("%q written as %s, want refused", v, q)
		}
	}
}

// TestGeminiConnect: the preview shows both files; apply writes them as
// shown, keeps every other line and value and a backup of each; a file
// changed since the preview writes nothing.
func TestGeminiConnect(t *testing.T) {
	for _, c := range []struct{ name, token, key string }{
		{"no client token: a word ccmesh takes", "", "ccmesh"},
		{"client token", "tok-0123456789abcdef", "tok-0123456789abcdef"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := testHost{home: t.TempDir(), token: c.token}
			dir := filepath.Join(h.home, ".gemini")
			os.MkdirAll(dir, 0o700)
			env := "# mine\nexport DEBUG=1\nGEMINI_API_KEY=\"real-google-key\" # was\n"
			settings := `{"ui":{"theme":"Dracula"},"n":12345678901234567891,"security":{"auth":{"selectedType":"oauth-personal"},"folderTrust":{"enabled":true}}}`
			os.WriteFile(filepath.Join(dir, ".env"), []byte(env), 0o600)
			os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o600)

			shown, err := GeminiCLIClient.Show(h)
			if err != nil {
				t.Fatalf("preview: %v", err)
			}
			g := shown.(GeminiCLI)
			wantEnv := "# mine\nexport DEBUG=1\nGEMINI_API_KEY='" + c.key + "' # was\nGOOGLE_GEMINI_BASE_URL='http://127.0.0.1:3457'\n"
			wantSettings := "{\n  \"n\": 12345678901234567891,\n  \"privacy\": {\n    \"usageStatisticsEnabled\": false\n  },\n" +
				"  \"security\": {\n    \"auth\": {\n      \"selectedType\": \"gemini-api-key\"\n    },\n    \"folderTrust\": {\n      \"enabled\": true\n    }\n  },\n" +
				"  \"ui\": {\n    \"theme\": \"Dracula\"\n  }\n}\n"
			if len(g.Files) != 2 || g.Files[0].Current != env || g.Files[0].Proposed != wantEnv || g.Files[1].Current != settings || g.Files[1].Proposed != wantSettings {
				t.Fatalf("preview files %+v\nwant env\n%s\nsettings\n%s", g.Files, wantEnv, wantSettings)
			}
			if want := "export GOOGLE_GEMINI_BASE_URL='http://127.0.0.1:3457'\nexport GEMINI_API_KEY='" + c.key + "'\n"; g.Exports != want {
				t.Errorf("exports %q, want %q", g.Exports, want)
			}
			reply, err := GeminiCLIClient.Apply(h, g.Hash)
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			for _, f := range []struct{ key, want, old string }{{"env", wantEnv, env}, {"settings", wantSettings, settings}} {
				if got := read(t, reply[f.key+"_path"]); got != f.want {
					t.Errorf("%s written:\n%s", f.key, got)
				}
				if got := read(t, reply[f.key+"_backup_path"]); got != f.old {
					t.Errorf("%s backup %q, want %q", f.key, got, f.old)
				}
			}
			if again, _ := GeminiCLIClient.Show(h); again.(GeminiCLI).Files[0].Proposed != wantEnv || again.(GeminiCLI).Files[1].Proposed != wantSettings {
				t.Errorf("a second connect changes the files again: %+v", again)
			}
			// Changed since the preview (the second file only): nothing written.
			os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{}`), 0o600)
			_, err = GeminiCLIClient.Apply(h, g.Hash)
			var cf *Conflict
			if !errors.As(err, &cf) || cf.Code != "gemini_config_changed" || !strings.Contains(cf.Message, "settings.json") {
				t.Errorf("stale apply: %v, want gemini_config_changed naming settings.json", err)
			}
			if got := read(t, filepath.Join(dir, "settings.json")); got != `{}` {
				t.Errorf("stale apply wrote %q", got)
			}
		})
	}
}

// TestGeminiNoFiles: neither file there: both made, no backups.
func TestGeminiNoFiles(t *testing.T) {
	h := testHost{home: t.TempDir()}
	shown, err := GeminiCLIClient.Show(h)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := GeminiCLIClient.Apply(h, shown.(GeminiCLI).Hash)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, reply["env_path"]); got != geminiLines {
		t.Errorf(".env %q, want %q", got, geminiLines)
	}
	var s struct {
		Security struct{ Auth struct{ SelectedType string } }
		Privacy  struct{ UsageStatisticsEnabled *bool }
	}
	if err := json.Unmarshal([]byte(read(t, reply["settings_path"])), &s); err != nil || s.Security.Auth.SelectedType != "gemini-api-key" ||
		s.Privacy.UsageStatisticsEnabled == nil || *s.Privacy.UsageStatisticsEnabled {
		t.Errorf("settings %+v (%v)", s, err)
	}
	if reply["env_backup_path"] != "" || reply["settings_backup_path"] != "" {
		t.Errorf("backups of files that were not there: %v", reply)
	}
}

// TestGeminiRefused: a file ccmesh will not change as it is stops the
// preview, for either file.
func TestGeminiRefused(t *testing.T) {
	for _, c := range []struct{ name, file, text, code string }{
		{"settings not JSON", "settings.json", "{\n  // a comment\n}", "gemini_settings_unreadable"},
		{"settings a directory", "settings.json", "", "client_config_not_a_file"},
		{".env a link", ".env", "", "client_config_symlink"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := testHost{home: t.TempDir()}
			path := filepath.Join(h.home, ".gemini", c.file)
			os.MkdirAll(filepath.Dir(path), 0o700)
			switch c.code {
			case "client_config_not_a_file":
				os.Mkdir(path, 0o700)
			case "client_config_symlink":
				os.Symlink(filepath.Join(h.home, "elsewhere"), path)
			default:
				os.WriteFile(path, []byte(c.text), 0o600)
			}
			_, err := GeminiCLIClient.Show(h)
			var cf *Conflict
			if !errors.As(err, &cf) || cf.Code != c.code || !strings.Contains(cf.Message, path) {
				t.Errorf("got %v, want %s naming %s", err, c.code, path)
			}
		})
	}
}

// TestWritePlansNoneWhenOneCannot: a file that cannot be staged stops the
// change before any file is written; nothing staged is left behind.
func TestWritePlansNoneWhenOneCannot(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "a", "first")
	os.MkdirAll(filepath.Dir(first), 0o700)
	os.WriteFile(first, []byte("old"), 0o600)
	blocker := filepath.Join(dir, "b")
	os.WriteFile(blocker, []byte("a file where a directory should be"), 0o600)
	_, err := writePlans([]FilePlan{
		{Path: first, Current: "old", Proposed: "new"},
		{Path: filepath.Join(blocker, "second"), Proposed: "new"},
	})
	if err == nil {
		t.Fatal("writePlans succeeded, want the second file's error")
	}
	if got := read(t, first); got != "old" {
		t.Errorf("first file %q, want it unchanged", got)
	}
	if entries, _ := os.ReadDir(filepath.Dir(first)); len(entries) != 1 {
		t.Errorf("left next to the first file: %v, want nothing", entries)
	}
}

// TestWritePlansPartial: a rename that fails after another succeeded
// says which file was written and where its backup is.
func TestWritePlansPartial(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first"), filepath.Join(dir, "second")
	os.WriteFile(first, []byte("old"), 0o600)
	// A directory that is not empty cannot be renamed over.
	os.MkdirAll(filepath.Join(second, "x"), 0o700)
	_, err := writePlans([]FilePlan{{Path: first, Current: "old", Proposed: "new"}, {Path: second, Proposed: "new"}})
	var pw *PartialWrite
	if !errors.As(err, &pw) || len(pw.Written) != 1 || pw.Written[0] != first || pw.NotWritten != second {
		t.Fatalf("got %v, want a PartialWrite naming %s written and %s not", err, first, second)
	}
	if !strings.Contains(err.Error(), first+" was written") || !strings.Contains(err.Error(), pw.Backups[0]) || read(t, pw.Backups[0]) != "old" {
		t.Errorf("message %q, backup %s", err, pw.Backups[0])
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 { // first, its backup, second
		t.Errorf("files: %v, want no temporary file left", entries)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// geminiHomeHost is a host whose environment names GEMINI_CLI_HOME.
type geminiHomeHost struct {
	testHost
	geminiHome string
}

func (h geminiHomeHost) Getenv(name string) string {
	if name == "GEMINI_CLI_HOME" {
		return h.geminiHome
	}
	return ""
}

// TestGeminiCLIHome: GEMINI_CLI_HOME moves both files, as it moves Gemini
// CLI's own .gemini directory.
func TestGeminiCLIHome(t *testing.T) {
	h := geminiHomeHost{testHost{home: t.TempDir()}, t.TempDir()}
	shown, err := GeminiCLIClient.Show(h)
	if err != nil {
		t.Fatal(err)
	}
	files := shown.(GeminiCLI).Files
	for i, want := range []string{filepath.Join(h.geminiHome, ".gemini", ".env"), filepath.Join(h.geminiHome, ".gemini", "settings.json")} {
		if files[i].Path != want {
			t.Errorf("file %d at %s, want %s", i, files[i].Path, want)
		}
	}
}
