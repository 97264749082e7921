package health

import (
	"bytes"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"
)

// Host is the app as the publisher needs it.
type Host interface {
	// Health is the health list now, as GET /api/health answers it.
	Health() any
	// Lost is what was lost so far: log rows dropped and failed, captures
	// dropped. A change is published as info (PublishInfo).
	Lost() [3]uint64
	PublishInfo()
	// Subscribers is how many listen to the live stream; with none, Wake
	// tells the watchers (the tray) that something changed.
	Subscribers() int
	Wake()
	// Send sends the health list, marshalled, as the "health" event.
	Send(data []byte)
}

// Publisher sends the health list (and info, when request log rows were
// lost) to the live stream when something that shapes it happened: a
// breaker transition, a request, a lost log row. Nothing ticks: an idle
// ccmesh does not wake up (the UI counts an Open endpoint down itself from
// retry_in_ms). Changes close together are sent once, Debounce after the
// first, which keeps "within a second" in the UI and costs the request
// path one atomic operation.
type Publisher struct {
	host   Host
	armed  atomic.Bool
	mu     sync.Mutex // one publish at a time; guards the fields below
	last   []byte
	lost   [3]uint64 // log rows dropped and failed, captures dropped, as last published
	closed bool
}

// Debounce is how long after a change the health list is sent.
const Debounce = 250 * time.Millisecond

// NewPublisher publishes to host.
func NewPublisher(host Host) *Publisher { return &Publisher{host: host} }

// Changed notes that health may have changed. Cheap and never blocking:
// it runs on the request path.
func (p *Publisher) Changed() {
	if p.armed.CompareAndSwap(false, true) {
		time.AfterFunc(Debounce, p.publish)
	}
}

func (p *Publisher) publish() {
	p.armed.Store(false) // a change from now on arms the next publish
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	h := p.host
	if now := h.Lost(); now != p.lost {
		p.lost = now
		h.PublishInfo()
	}
	if h.Subscribers() == 0 {
		p.last = nil
		h.Wake()
		return
	}
	data, err := json.Marshal(h.Health())
	if err != nil || bytes.Equal(data, p.last) {
		return
	}
	p.last = data
	h.Send(data)
}

// Close stops publishing (at shutdown); a publish under way finishes.
func (p *Publisher) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}
