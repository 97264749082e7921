package app

import (
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/ccmesh/ccmesh/app/platform"
)

// Start at login (docs/BEHAVIOUR.md#start-at-login): the start_at_login
// setting is not kept in the database; it is whether the system's entry is
// there. The entry of each system is app/platform's; the app only says
// what it runs and answers the setting.

// autostart is this system's entry, under Options.HomeDir when it is set
// (tests).
func (a *App) autostart() platform.Autostart { return platform.NewAutostart(a.opts.HomeDir) }

// autostartArgs is what the entry runs (platform.AutostartArgs): the
// --listen address goes in only when the flag gave it.
func autostartArgs(exe string, opts Options) ([]string, error) {
	listen := ""
	if opts.ListenIsFlag {
		listen = opts.Listen
	}
	return platform.AutostartArgs(exe, opts.DataDir, listen)
}

// startAtLogin reports whether the entry is on disk (or in the registry).
func (a *App) startAtLogin() bool {
	on, err := a.autostart().Enabled()
	if err != nil && !errors.Is(err, platform.ErrAutostartUnsupported) {
		a.log.Warn().Err(err).Msg("could not read the start-at-login entry")
	}
	return on
}

// setStartAtLogin writes or removes the entry.
func (a *App) setStartAtLogin(on bool) error {
	as := a.autostart()
	var err error
	if on {
		var exe string
		var args []string
		if exe, err = os.Executable(); err == nil {
			if args, err = autostartArgs(exe, a.opts); err == nil {
				err = as.Enable(args)
			}
		}
	} else {
		err = as.Disable()
	}
	switch {
	case errors.Is(err, platform.ErrAutostartUnsupported):
		return invalid("start_at_login", "%v", err)
	case err != nil:
		verb := "remove"
		if on {
			verb = "write"
		}
		return &apiError{Status: http.StatusInternalServerError, Code: "start_at_login_failed", Field: "start_at_login",
			Message: fmt.Sprintf("could not %s the start-at-login entry %s: %v", verb, as.Where(), err)}
	}
	return nil
}
