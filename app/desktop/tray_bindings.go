//go:build desktop && bindings

package desktop

// Wails' bindings step builds with the bindings tag and no display; the
// tray needs neither there.
func startTray(d *desktop) {}
