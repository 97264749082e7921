// Package platform is ccmesh's integration with the operating system: the
// start-at-login entry of each system (docs/BEHAVIOUR.md#start-at-login)
// and the data dir's single-instance lock. It knows nothing of the app,
// which reads and writes the entry through Autostart and takes the lock
// before it opens the database.
package platform

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Start at login (docs/BEHAVIOUR.md#start-at-login): the start_at_login
// setting is not kept in the database; it is whether the system's entry is
// there. Linux has an XDG autostart file, macOS a LaunchAgent, Windows a
// value under the Run key (autostart_<os>.go). What each writes is made
// by a plain function here, so every system's text is tested everywhere.

// Autostart is one system's start-at-login entry.
type Autostart interface {
	// Enabled reports whether the entry is there and on.
	Enabled() (bool, error)
	// Enable writes the entry to run args (the program first).
	Enable(args []string) error
	// Disable removes the entry; no entry is no error.
	Disable() error
	// Where names the entry for messages.
	Where() string
}

// autostartID names the entry where a system wants a reverse-DNS name
// (macOS's LaunchAgent label).
const autostartID = "io.github.ccmesh.ccmesh"

// ErrAutostartUnsupported: this system has no start-at-login entry of ours.
var ErrAutostartUnsupported = errors.New("start at login is not available on this system")

// AutostartArgs is what the entry runs: this binary exe in the tray
// (--minimized), on the data dir dataDir, and on the --listen address
// listenFlag when the flag gave it ("" when it did not; the flag wins over
// the setting, so the entry keeps it). The data dir is always named, so
// the entry starts the instance that wrote it even when the environment at
// login differs. The admin token is never written: a token given by flag or
// environment is a secret, and the entry's instance reads or makes the one
// in the data dir.
func AutostartArgs(exe, dataDir, listenFlag string) ([]string, error) {
	data, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, fmt.Errorf("data dir of the start-at-login entry: %w", err)
	}
	args := []string{exe, "--minimized", "--data", data}
	if listenFlag != "" {
		args = append(args, "--listen", listenFlag)
	}
	return args, nil
}

// desktopEntry is the XDG autostart file that runs args (the Desktop Entry
// Specification, "Exec key"). It passes desktop-file-validate
// (autostart_linux_test.go).
func desktopEntry(args []string) ([]byte, error) {
	exec := make([]string, len(args))
	for i, a := range args {
		q, err := desktopExecArg(a)
		if err != nil {
			return nil, err
		}
		exec[i] = q
	}
	var b bytes.Buffer
	b.WriteString("[Desktop Entry]\n")
	b.WriteString("Type=Application\n")
	b.WriteString("Name=ccmesh\n")
	b.WriteString("Comment=Local proxy for Claude Code and OpenAI-style clients across several endpoints\n")
	b.WriteString("Exec=" + strings.Join(exec, " ") + "\n")
	b.WriteString("Terminal=false\n")
	b.WriteString("X-GNOME-Autostart-enabled=true\n")
	return b.Bytes(), nil
}

// desktopExecArg writes one argument of an Exec key: quoted when it holds a
// reserved character, with ", `, $ and \ escaped inside the quotes; % as %%
// (a field code otherwise); and every backslash doubled once more, since
// the key's value is a string whose own escape is \\.
func desktopExecArg(a string) (string, error) {
	if strings.ContainsFunc(a, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", fmt.Errorf("%q: a control character cannot be written in an Exec key", a)
	}
	a = strings.ReplaceAll(a, "%", "%%")
	if a != "" && !strings.ContainsAny(a, " \t\"'\\><~|&;$*?#()`") {
		return a, nil
	}
	var q strings.Builder
	q.WriteByte('"')
	for _, r := range a {
		if strings.ContainsRune("\"`$\\", r) {
			q.WriteByte('\\')
		}
		q.WriteRune(r)
	}
	q.WriteByte('"')
	return strings.ReplaceAll(q.String(), `\`, `\\`), nil
}

// desktopEntryOn: a file of ours that the desktop has switched off
// (Hidden=true per the XDG autostart spec, or GNOME's own key) is off.
func desktopEntryOn(content []byte) bool {
	for line := range strings.SplitSeq(string(content), "\n") {
		switch strings.TrimSpace(line) {
		case "Hidden=true", "X-GNOME-Autostart-enabled=false":
			return false
		}
	}
	return true
}

// launchAgent is the macOS LaunchAgent plist that runs args at login.
func launchAgent(args []string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	b.WriteString("<plist version=\"1.0\">\n<dict>\n")
	b.WriteString("\t<key>Label</key>\n\t<string>" + autostartID + "</string>\n")
	b.WriteString("\t<key>ProgramArguments</key>\n\t<array>\n")
	for _, a := range args {
		b.WriteString("\t\t<string>")
		if err := xml.EscapeText(&b, []byte(a)); err != nil {
			return nil, err
		}
		b.WriteString("</string>\n")
	}
	b.WriteString("\t</array>\n")
	b.WriteString("\t<key>RunAtLoad</key>\n\t<true/>\n")
	b.WriteString("\t<key>ProcessType</key>\n\t<string>Interactive</string>\n")
	b.WriteString("</dict>\n</plist>\n")
	return b.Bytes(), nil
}

// runKeyValue is the command line the Windows Run key value holds: the
// program quoted (a Windows path has no "), then each argument as
// CommandLineToArgvW reads it back.
func runKeyValue(args []string) string {
	if len(args) == 0 {
		return ""
	}
	parts := []string{`"` + args[0] + `"`}
	for _, a := range args[1:] {
		parts = append(parts, windowsArg(a))
	}
	return strings.Join(parts, " ")
}

// windowsArg quotes a for CommandLineToArgvW: inside quotes, backslashes
// are literal except a run of them before a quote, which is doubled, the
// quote itself escaped; a run at the end is doubled before the closing quote.
func windowsArg(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\n\v\"") {
		return a
	}
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for i := 0; i < len(a); i++ {
		switch c := a[i]; c {
		case '\\':
			slashes++
		case '"':
			b.WriteString(strings.Repeat(`\`, 2*slashes+1))
			b.WriteByte('"')
			slashes = 0
		default:
			b.WriteString(strings.Repeat(`\`, slashes))
			b.WriteByte(c)
			slashes = 0
		}
	}
	b.WriteString(strings.Repeat(`\`, 2*slashes))
	b.WriteByte('"')
	return b.String()
}
