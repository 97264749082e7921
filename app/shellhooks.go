package app

import (
	"net/http"

	"github.com/ccmesh/ccmesh/app/desktop"
	"github.com/ccmesh/ccmesh/breaker"
)

// The desktop shell (app/desktop) hands the App its window and its
// notifier; what uses them is here, untagged, so the
// headless build serves the same routes and answers them without a window.

// showWindowHandler is POST /api/window/show: how a second launch on the
// same data dir brings this instance's window up.
func (a *App) showWindowHandler(w http.ResponseWriter, r *http.Request) error {
	show := a.showWindow.Load()
	if show == nil {
		return &apiError{Status: http.StatusNotFound, Code: "no_window", Message: "this ccmesh runs headless: it has no window to show"}
	}
	go (*show)()
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// notifyTransition runs on the goroutine that reported the transition, so
// the notifier, which may wait on D-Bus, gets a goroutine of its own.
func (a *App) notifyTransition(t breaker.Transition) {
	if n := a.notifier.Load(); n != nil && t.Cause == breaker.CauseRequest && a.state.Load().Settings.Notifications {
		if title, body, ok := a.transitionNotice(t); ok {
			go func() {
				if err := (*n)(title, body); err != nil {
					a.log.Debug().Err(err).Msg("desktop notification not shown")
				}
			}()
		}
	}
}

// transitionNotice words a notification for a breaker opening or closing,
// in the UI's language and words (the tray's); the lazy Open → HalfOpen
// step is not worth one.
func (a *App) transitionNotice(t breaker.Transition) (title, body string, ok bool) {
	return desktop.TransitionNotice(a.state.Load().Settings.Language, a.endpointName(t.ID), t)
}
