package platform

import (
	"os"
	"path/filepath"
)

// NewAutostart is the XDG autostart file: $XDG_CONFIG_HOME/autostart/ccmesh.desktop,
// ~/.config/autostart when that variable is unset or not absolute (the XDG
// Base Directory spec). With home not "" (tests) it is under that home.
func NewAutostart(home string) Autostart {
	return fileAutostart{path: filepath.Join(xdgConfigHome(home), "autostart", "ccmesh.desktop"),
		content: desktopEntry, on: desktopEntryOn}
}

func xdgConfigHome(home string) string {
	if home != "" {
		return filepath.Join(home, ".config")
	}
	if d := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "." // no home at all: a relative entry fails visibly when written
	}
	return filepath.Join(home, ".config")
}
