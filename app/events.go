package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ccmesh/ccmesh/app/events"
)

// The hub the live stream is fed by is the package app/events.
type (
	// Hub fans events out to subscribers (events.Hub).
	Hub = events.Hub
	// Event is one server-sent event (events.Event).
	Event = events.Event
)

// NewHub returns an empty hub.
func NewHub() *Hub { return events.NewHub() }

// eventStream is GET /api/events: server-sent events for the UI. It sends
// the current lists at once, then every change.
func (a *App) eventStream(w http.ResponseWriter, r *http.Request) {
	ch, unsubscribe := a.events.Subscribe()
	defer unsubscribe()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	write := func(name string, data []byte) bool {
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data); err != nil {
			return false
		}
		_ = rc.Flush() // Wails' writer streams without being a Flusher (docs/DESKTOP.md)
		return true
	}
	for _, ev := range []struct {
		name string
		v    any
	}{{"info", a.Info()}, {"endpoints", a.endpointReplies()}, {"health", a.Health()}, {"settings", a.state.Load().Settings}, {"update", a.upd.Status()}} {
		data, _ := json.Marshal(ev.v)
		if !write(ev.name, data) {
			return
		}
	}
	// A comment every 15 s keeps a browser's connection (and any proxy on
	// the way) from timing out; the desktop window's stream is in-process
	// and gets none, so an idle window wakes nothing of ours.
	var tick <-chan time.Time
	if !inProcess(r) {
		keepAlive := time.NewTicker(keepAliveEvery)
		defer keepAlive.Stop()
		tick = keepAlive.C
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-a.closing:
			return
		case ev := <-ch:
			if !write(ev.Name, ev.Data) {
				return
			}
		case <-tick:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			_ = rc.Flush()
		}
	}
}

// keepAliveEvery is how often a browser's event stream gets a comment.
var keepAliveEvery = 15 * time.Second

// endStreams ends every /api/events stream (at shutdown).
func (a *App) endStreams() { a.closingOne.Do(func() { close(a.closing) }) }
