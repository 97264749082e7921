//go:build !linux && !darwin && !windows

package app

// autostart: no start-at-login entry on this system.
func (a *App) autostart() autostart { return noAutostart{} }

type noAutostart struct{}

func (noAutostart) enabled() (bool, error) { return false, errAutostartUnsupported }
func (noAutostart) enable([]string) error  { return errAutostartUnsupported }
func (noAutostart) disable() error         { return nil }
func (noAutostart) where() string          { return "(none)" }
