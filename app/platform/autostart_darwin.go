package platform

import (
	"os"
	"path/filepath"
)

// NewAutostart is a LaunchAgent: ~/Library/LaunchAgents/<autostartID>.plist
// (under home when it is not "": tests), which launchd runs at login
// (RunAtLoad). Written here, not loaded with launchctl: it applies from
// the next login, as on the other systems.
func NewAutostart(home string) Autostart {
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			home = "."
		}
	}
	return fileAutostart{path: filepath.Join(home, "Library", "LaunchAgents", autostartID+".plist"),
		content: launchAgent, on: func([]byte) bool { return true }}
}
