package platform

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// validateDesktopFile runs desktop-file-validate (Debian: desktop-file-utils);
// without it the test fails, as a skipped check would pass unseen.
func validateDesktopFile(t *testing.T, path string) {
	t.Helper()
	tool, err := exec.LookPath("desktop-file-validate")
	if err != nil {
		t.Fatalf("desktop-file-validate is needed to check the autostart entry (apt-get install desktop-file-utils): %v", err)
	}
	if out, err := exec.Command(tool, path).CombinedOutput(); err != nil || len(out) > 0 {
		b, _ := os.ReadFile(path)
		t.Errorf("desktop-file-validate %s: %v\n%s\n%s", path, err, out, b)
	}
}

// The entry goes to $XDG_CONFIG_HOME/autostart/ccmesh.desktop, runs this
// binary in the tray on this data dir, and passes desktop-file-validate.
func TestStartAtLoginXDG(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config dir")
	t.Setenv("XDG_CONFIG_HOME", config)
	t.Setenv("HOME", t.TempDir())
	data := filepath.Join(t.TempDir(), `data $dir "quoted" 100%`)
	a := NewAutostart("")
	path := filepath.Join(config, "autostart", "ccmesh.desktop")
	on := func() bool {
		t.Helper()
		on, err := a.Enabled()
		if err != nil {
			t.Fatal(err)
		}
		return on
	}

	if on() {
		t.Fatal("on before anything was written")
	}
	exe, _ := os.Executable()
	written, err := AutostartArgs(exe, data, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Enable(written); err != nil {
		t.Fatal(err)
	}
	validateDesktopFile(t, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	args, _ := execArgs(t, b)
	if want := []string{exe, "--minimized", "--data", data}; !slices.Equal(args, want) {
		t.Errorf("Exec runs %q, want %q\n%s", args, want, b)
	}
	if !on() {
		t.Error("written but reads as off")
	}
	// Switched off by the desktop's own settings: off, and left alone.
	if err := os.WriteFile(path, append(b, "Hidden=true\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if on() {
		t.Error("Hidden=true reads as on")
	}
	if err := a.Disable(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the entry is still there after turning it off: %v", err)
	}
	if err := a.Disable(); err != nil {
		t.Errorf("turning off what is off: %v", err)
	}

	// XDG_CONFIG_HOME unset (or not absolute, which the spec says to
	// ignore): ~/.config.
	t.Setenv("XDG_CONFIG_HOME", "relative")
	if got, want := NewAutostart("").Where(), filepath.Join(os.Getenv("HOME"), ".config", "autostart", "ccmesh.desktop"); got != want {
		t.Errorf("entry at %s, want %s", got, want)
	}
}
