package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Event is one server-sent event: a name and its JSON payload, marshalled
// once however many subscribers receive it.
type Event struct {
	Name string
	Data []byte
}

// Hub fans events out to subscribers. Publishing never blocks: a subscriber
// whose buffer is full misses the event, and since every event carries a
// whole list (or a whole row), the next one of its kind repairs the view.
type Hub struct {
	mu      sync.Mutex
	subs    map[chan Event]struct{}
	watches map[chan struct{}]struct{}
}

// NewHub returns an empty hub.
func NewHub() *Hub {
	return &Hub{subs: map[chan Event]struct{}{}, watches: map[chan struct{}]struct{}{}}
}

// Watch returns a channel that is signalled after changes, several
// coalescing into one, and a function that ends the watch; call it exactly
// once. It is for a reader of the App's state rather than of the events'
// payloads (the tray): a watch alone makes no event be marshalled.
func (h *Hub) Watch() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	h.watches[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.watches, ch)
		h.mu.Unlock()
	}
}

// Wake signals every watch: something changed that no subscriber asked
// to be sent (Publish and send wake them too).
func (h *Hub) Wake() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.wakeLocked()
}

func (h *Hub) wakeLocked() {
	for ch := range h.watches {
		select {
		case ch <- struct{}{}:
		default: // a signal is pending already
		}
	}
}

// Subscribe returns a channel of events and a function that ends the
// subscription; call it exactly once.
func (h *Hub) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, 64)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

// Publish marshals v and sends it to every subscriber that has room, and
// wakes every watch; with no subscriber, v is not marshalled.
func (h *Hub) Publish(name string, v any) {
	if h.Subscribers() == 0 {
		h.Wake()
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		return // our own types always marshal; nothing useful to send
	}
	h.send(Event{Name: name, Data: data})
}

func (h *Hub) send(ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.wakeLocked()
	for ch := range h.subs {
		select {
		case ch <- ev:
		default:
		}
	}
}

// Subscribers is the number of open subscriptions.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

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
	}{{"info", a.Info()}, {"endpoints", a.endpointReplies()}, {"health", a.Health()}, {"settings", a.state.Load().Settings}, {"update", a.upd.status()}} {
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
