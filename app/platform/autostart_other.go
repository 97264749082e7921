//go:build !linux && !darwin && !windows

package platform

// NewAutostart: no start-at-login entry on this system.
func NewAutostart(home string) Autostart { return noAutostart{} }

type noAutostart struct{}

func (noAutostart) Enabled() (bool, error) { return false, ErrAutostartUnsupported }
func (noAutostart) Enable([]string) error  { return ErrAutostartUnsupported }
func (noAutostart) Disable() error         { return nil }
func (noAutostart) Where() string          { return "(none)" }
