package balance

import (
	"context"
	"sync"
	"time"
)

// Schedule calls read every interval while there is something to read. An
// interval of 0, or nothing to read, leaves no timer at all
// (docs/BEHAVIOUR.md#balance); Set takes effect at once.
type Schedule struct {
	read func(ctx context.Context)

	mu    sync.Mutex
	every time.Duration
	any   bool
	armed bool // a timer runs, or will as soon as Run takes the kick (for tests and the UI)
	kick  chan struct{}
}

// NewSchedule returns a schedule that calls read; Run drives it.
func NewSchedule(read func(ctx context.Context)) *Schedule {
	return &Schedule{read: read, kick: make(chan struct{}, 1)}
}

// Set changes the interval and whether any endpoint has a connector.
func (s *Schedule) Set(every time.Duration, any bool) {
	s.mu.Lock()
	changed := s.every != every || s.any != any
	s.every, s.any = every, any
	// Armed says what Set decided at once; Run re-arms its timer when it
	// takes the kick, which may be after Set's caller has answered.
	s.armed = every > 0 && any
	s.mu.Unlock()
	if changed {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// Armed reports whether a timer is running, or is about to (a Set that
// turned it on or off is seen at once).
func (s *Schedule) Armed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.armed
}

// Run calls read on the schedule until ctx ends.
func (s *Schedule) Run(ctx context.Context) {
	var (
		timer *time.Timer
		fire  <-chan time.Time
	)
	arm := func() {
		if timer != nil {
			timer.Stop()
			timer, fire = nil, nil
		}
		s.mu.Lock()
		every, on := s.every, s.every > 0 && s.any
		s.armed = on
		s.mu.Unlock()
		if on {
			timer = time.NewTimer(every)
			fire = timer.C
		}
	}
	arm()
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
			arm()
		case <-fire:
			s.read(ctx)
			arm()
		}
	}
}
