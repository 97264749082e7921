package app

import (
	"net/http"
	"time"

	"github.com/ccmesh/ccmesh/app/config"
)

// The pause (docs/BEHAVIOUR.md#pause) is app/pause's: whether the proxy
// is paused and a timed pause's timer. The app pauses its proxy and
// announces the change as "info" (pauseHost), and serves the routes.

// pauseHost is the app as the pause tells it of changes (pause.Host).
type pauseHost struct{ a *App }

func (h pauseHost) Apply(on bool) { h.a.proxy.SetPaused(on) }

func (h pauseHost) Changed() { h.a.events.Publish("info", h.a.Info()) }

// SetPaused pauses the proxy until resumed, or resumes it: while paused,
// /v1/ requests are answered 503 and never reach an upstream. Either way a
// timed pause's timer is cancelled.
func (a *App) SetPaused(p bool) { a.pause.Set(p, 0) }

// PauseFor pauses the proxy for d, then resumes it by itself; d ≤ 0 pauses
// until resumed.
func (a *App) PauseFor(d time.Duration) { a.pause.Set(true, d) }

// Paused reports whether the proxy is paused.
func (a *App) Paused() bool { return a.pause.Now().On }

// PausedUntil is when a timed pause ends; zero when not paused or paused
// until resumed.
func (a *App) PausedUntil() time.Time { return a.pause.Now().Until }

// pauseInput is POST /api/pause's body.
type pauseInput struct {
	// Minutes until the proxy resumes by itself; 0 (or left out) pauses
	// until POST /api/resume. Longer than a day is what "until resumed" is for.
	Minutes int `json:"minutes" range:"0,1440,0 (until resumed) to 1440 (a day)"`
}

// pauseHandler is POST /api/pause: {"minutes":N}, or no body. It answers Info.
func (a *App) pauseHandler(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var in pauseInput
	if len(body) > 0 {
		if err := decodeBody(body, &in); err != nil {
			return err
		}
	}
	if err := config.CheckRanges(config.CodeOutOfRange, "", in); err != nil {
		return err
	}
	a.PauseFor(time.Duration(in.Minutes) * time.Minute)
	writeJSON(w, http.StatusOK, a.Info())
	return nil
}

// resumeHandler is POST /api/resume: it ends any pause and answers Info.
func (a *App) resumeHandler(w http.ResponseWriter, r *http.Request) error {
	a.SetPaused(false)
	writeJSON(w, http.StatusOK, a.Info())
	return nil
}
