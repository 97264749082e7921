// Package pause is whether the proxy is paused and, for a timed pause,
// when it resumes by itself (docs/BEHAVIOUR.md#pause). A timed pause is
// one time.AfterFunc: nothing runs while it waits, and a later change
// (a resume, another pause) stops it. It tells the app through the port
// Host; the app's pause.go serves the routes and answers the tray.
package pause

import (
	"sync"
	"sync/atomic"
	"time"
)

// Host is the app as the pause needs it.
type Host interface {
	// Apply pauses the proxy, or resumes it.
	Apply(on bool)
	// Changed announces a change (the UI's header and the tray follow
	// it). It runs under the pause's lock, so changes are announced in
	// the order they were made.
	Changed()
}

// Now is the pause at one moment.
type Now struct {
	On    bool
	Until time.Time // zero: until resumed
}

// State is the pause: its state now and a timed pause's timer.
type State struct {
	host  Host
	mu    sync.Mutex // serialises changes, so their announcements go out in order
	timer *time.Timer
	gen   uint64 // which change armed the timer: a timer that fired late does nothing

	now atomic.Pointer[Now] // read without mu (Info, the tray)
}

// New is a State that is not paused, telling host of its changes.
func New(host Host) *State { return &State{host: host} }

// Now is the pause as it is now; it takes no lock.
func (p *State) Now() Now {
	if n := p.now.Load(); n != nil {
		return *n
	}
	return Now{}
}

// Set pauses the proxy (on) or resumes it; a pause with d > 0 ends by
// itself after d, otherwise it lasts until resumed. Either way a timed
// pause's timer from before is cancelled.
func (p *State) Set(on bool, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.disarm()
	next := Now{On: on}
	if on && d > 0 {
		next.Until = time.Now().Add(d)
		gen := p.gen
		p.timer = time.AfterFunc(d, func() { p.ended(gen) })
	}
	p.apply(next)
}

// ended is a timed pause's timer: it resumes unless another change came
// after the one that armed it.
func (p *State) ended(gen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen != gen {
		return
	}
	p.timer = nil
	p.apply(Now{})
}

// apply makes next the pause state and announces a change. Callers hold mu.
func (p *State) apply(next Now) {
	prev := p.Now()
	p.host.Apply(next.On)
	p.now.Store(&next)
	if prev.On != next.On || !prev.Until.Equal(next.Until) {
		p.host.Changed()
	}
}

// Stop cancels a timed pause's timer (at Close); the state stays.
func (p *State) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.disarm()
}

// Armed reports whether a timed pause's timer waits.
func (p *State) Armed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.timer != nil
}

// disarm stops a timed pause's timer; if it fired already and waits for
// mu, the new gen makes it do nothing. Callers hold mu.
func (p *State) disarm() {
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	p.gen++
}
