package app

import (
	"os"
	"path/filepath"
)

// autostart is the XDG autostart file: $XDG_CONFIG_HOME/autostart/ccmesh.desktop,
// ~/.config/autostart when that variable is unset or not absolute (the XDG
// Base Directory spec). With Options.HomeDir (tests) it is under that home.
func (a *App) autostart() autostart {
	return fileAutostart{path: filepath.Join(a.xdgConfigHome(), "autostart", "ccmesh.desktop"),
		content: desktopEntry, on: desktopEntryOn}
}

func (a *App) xdgConfigHome() string {
	if a.opts.HomeDir != "" {
		return filepath.Join(a.opts.HomeDir, ".config")
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
