package app

import (
	"time"

	"github.com/ccmesh/ccmesh/app/balance"
	"github.com/ccmesh/ccmesh/app/desktop"
	"github.com/ccmesh/ccmesh/breaker"
)

// The tray's look is app/desktop's (desktop.View, tested in the plain
// build), and so are the latest breaker changes it shows (desktop.Recent);
// the app gathers what it shows.

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
		Today: desktop.Today(a.today.Get(now)), Recent: a.recent.Get(), Now: now}
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

// noteTransition records a reported transition for the tray
// (desktop.Recent). It runs on the request path.
func (a *App) noteTransition(t breaker.Transition) { a.recent.Note(t, a.endpointName(t.ID)) }
