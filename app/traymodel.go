package app

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/ccmesh/ccmesh/app/balance"
	"github.com/ccmesh/ccmesh/app/desktop"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/store"
)

// The tray's look is app/desktop's (desktop.View, tested in the plain
// build); the app gathers what it shows.

// The tray's types and constants, under the names the rest of the app uses.
type (
	TrayView   = desktop.TrayView
	TrayLabels = desktop.TrayLabels
)

// Overall health, which picks the tray icon's colour (docs/BEHAVIOUR.md#tray).
const (
	HealthAll    = desktop.HealthAll
	HealthSome   = desktop.HealthSome
	HealthNone   = desktop.HealthNone
	HealthPaused = desktop.HealthPaused
)

// TrayPauseFor is how long the tray's "Pause for 15 minutes" pauses.
const TrayPauseFor = desktop.TrayPauseFor

// TrayBreakerLines is how many of the latest breaker changes the tray shows.
const TrayBreakerLines = desktop.TrayBreakerLines

// TrayIcon returns a 32×32 PNG: a filled disc in the colour of overall.
func TrayIcon(overall string) []byte { return desktop.TrayIcon(overall) }

// TrayView computes the tray's state from health, today's totals, the
// latest breaker changes, the pause and the settings.
func (a *App) TrayView() TrayView { return a.trayView(time.Now()) }

func (a *App) trayView(now time.Time) TrayView {
	f := desktop.Facts{Lang: a.state.Load().Settings.Language, Listen: a.opts.Listen,
		Today: desktop.Today(a.today.Get(now)), Recent: a.recent.get(), Now: now}
	hs := a.Health()
	f.Total = len(hs)
	for _, h := range hs {
		if h.Status != "disabled" {
			f.Enabled++
		}
		if h.Status == "healthy" {
			f.Healthy++
		}
	}
	pause := a.pause.Now()
	f.Paused, f.PausedUntil = pause.On, pause.Until
	if low, ok := a.bal.Lowest(); ok {
		f.Lowest = &desktop.Lowest{Amount: balance.Words(*low.Reading), Endpoint: low.Endpoint}
	}
	if u := a.upd.Status(); u.Available {
		f.Update = &desktop.Update{Latest: u.Latest, URL: u.URL, Notes: u.Notes}
	}
	return desktop.View(f)
}

// recentChanges keeps the latest breaker changes for the tray, newest
// first, as the audit trail records them (docs/BEHAVIOUR.md#tray): loaded
// from it at start, then added as transitions are reported, so the tray
// never reads the database. Restores at start-up are left out: they bring
// back a state, they do not change it.
type recentChanges struct {
	mu   sync.Mutex
	list []store.BreakerEvent
}

// recentLoad is how many audit rows load reads to find TrayBreakerLines
// that are not restores.
const recentLoad = 50

func (r *recentChanges) load(ctx context.Context, db *store.DB) error {
	evs, err := db.ListBreakerEvents(ctx, 0, recentLoad)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = nil
	for _, ev := range evs { // newest first, in the order they were written
		if ev.Cause != breaker.CauseRestore.String() && len(r.list) < TrayBreakerLines {
			r.list = append(r.list, ev)
		}
	}
	return nil
}

// add puts ev in its place by time (one reported at the same moment as
// another goes first): transitions of concurrent requests may be
// reported out of order.
func (r *recentChanges) add(ev store.BreakerEvent) {
	if ev.Cause == breaker.CauseRestore.String() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	i := len(r.list)
	for i > 0 && !ev.At.Before(r.list[i-1].At) {
		i--
	}
	if i >= TrayBreakerLines {
		return
	}
	r.list = slices.Insert(r.list, i, ev)
	if len(r.list) > TrayBreakerLines {
		r.list = r.list[:TrayBreakerLines]
	}
}

func (r *recentChanges) get() []store.BreakerEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}

// noteTransition records a reported transition for the tray. It runs on
// the request path: a lock and a copy of a few words.
func (a *App) noteTransition(t breaker.Transition) {
	if t.Cause == breaker.CauseRestore {
		return
	}
	a.recent.add(store.BreakerEvent{At: t.At, EndpointID: t.ID, Endpoint: a.endpointName(t.ID),
		Cause: t.Cause.String(), From: t.From.String(), To: t.To.String(), Reason: t.Reason.String()})
}
