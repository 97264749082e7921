package platform

import (
	"errors"

	"golang.org/x/sys/windows/registry"
)

// runKey is the current user's Run key: Windows starts each value's
// command line at login.
const runKey = `Software\Microsoft\Windows\CurrentVersion\Run`

// runKeyName is ccmesh's value under runKey.
const runKeyName = "ccmesh"

// NewAutostart is the value runKeyName under HKCU\…\Run, holding
// runKeyValue's command line; home is not used (the key is the user's).
func NewAutostart(home string) Autostart { return runKeyAutostart{} }

type runKeyAutostart struct{}

func (runKeyAutostart) Where() string { return `HKCU\` + runKey + `\` + runKeyName }

func (runKeyAutostart) Enabled() (bool, error) {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer k.Close()
	_, _, err = k.GetStringValue(runKeyName)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (runKeyAutostart) Enable(args []string) error {
	k, _, err := registry.CreateKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		return err
	}
	defer k.Close()
	return k.SetStringValue(runKeyName, runKeyValue(args))
}

func (runKeyAutostart) Disable() error {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer k.Close()
	if err := k.DeleteValue(runKeyName); err != nil && !errors.Is(err, registry.ErrNotExist) {
		return err
	}
	return nil
}
