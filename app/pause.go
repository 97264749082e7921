package app

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccmesh/ccmesh/app/config"
)

// pauseState is whether the proxy is paused and, for a timed pause, when
// it resumes by itself (docs/BEHAVIOUR.md#pause). A timed pause is one
// time.AfterFunc: nothing runs while it waits, and a later change (Resume,
// another pause) stops it.
type pauseState struct {
	mu    sync.Mutex // serialises changes, so their "info" events go out in order
	timer *time.Timer
	gen   uint64 // which change armed the timer: a timer that fired late does nothing

	now atomic.Pointer[pauseNow] // read without mu (Info, the tray)
}

type pauseNow struct {
	on    bool
	until time.Time // zero: until resumed
}

func (p *pauseState) load() pauseNow {
	if n := p.now.Load(); n != nil {
		return *n
	}
	return pauseNow{}
}

// SetPaused pauses the proxy until resumed, or resumes it: while paused,
// /v1/ requests are answered 503 and never reach an upstream. Either way a
// timed pause's timer is cancelled.
func (a *App) SetPaused(p bool) { a.setPause(p, 0) }

// PauseFor pauses the proxy for d, then resumes it by itself; d ≤ 0 pauses
// until resumed.
func (a *App) PauseFor(d time.Duration) { a.setPause(true, d) }

// Paused reports whether the proxy is paused.
func (a *App) Paused() bool { return a.pause.load().on }

// PausedUntil is when a timed pause ends; zero when not paused or paused
// until resumed.
func (a *App) PausedUntil() time.Time { return a.pause.load().until }

func (a *App) setPause(on bool, d time.Duration) {
	p := &a.pause
	p.mu.Lock()
	defer p.mu.Unlock()
	p.disarm()
	next := pauseNow{on: on}
	if on && d > 0 {
		next.until = time.Now().Add(d)
		gen := p.gen
		p.timer = time.AfterFunc(d, func() { a.pauseEnded(gen) })
	}
	a.applyPause(next)
}

// pauseEnded is a timed pause's timer: it resumes unless another change
// came after the one that armed it.
func (a *App) pauseEnded(gen uint64) {
	p := &a.pause
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen != gen {
		return
	}
	p.timer = nil
	a.applyPause(pauseNow{})
}

// applyPause makes next the pause state and announces a change (the UI's
// header and the tray both follow "info"). Callers hold pause.mu.
func (a *App) applyPause(next pauseNow) {
	prev := a.pause.load()
	a.proxy.SetPaused(next.on)
	a.pause.now.Store(&next)
	if prev.on != next.on || !prev.until.Equal(next.until) {
		a.events.Publish("info", a.Info())
	}
}

// stopPause cancels a timed pause's timer (at Close); the state stays.
func (a *App) stopPause() {
	p := &a.pause
	p.mu.Lock()
	defer p.mu.Unlock()
	p.disarm()
}

// disarm stops a timed pause's timer; if it fired already and waits for
// mu, the new gen makes it do nothing. Callers hold mu.
func (p *pauseState) disarm() {
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	p.gen++
}

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
