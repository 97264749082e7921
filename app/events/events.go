// Package events is the fan-out of the admin API's live stream
// (docs/BEHAVIOUR.md#admin-api): named events with their payload marshalled
// once, sent to every subscriber with room, and watches that only say that
// something changed. It knows nothing of what the events say.
package events

import (
	"encoding/json"
	"sync"
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
// to be sent (Publish and Send wake them too).
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
	h.Send(Event{Name: name, Data: data})
}

// Send sends an event whose payload is marshalled already to every
// subscriber that has room, and wakes every watch.
func (h *Hub) Send(ev Event) {
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
