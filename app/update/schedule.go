package update

import (
	"context"
	"sync"
	"time"
)

// Every is how often a switched-on check runs.
const Every = 24 * time.Hour

// Schedule runs check once when switched on (at start, off the start-up
// path, or when the setting is turned on) and then every Every. Switched
// off it holds no timer at all and never calls check.
type Schedule struct {
	check func(ctx context.Context)

	mu    sync.Mutex
	on    bool
	armed bool // a timer is running (for tests)
	kick  chan struct{}
}

// NewSchedule returns a switched-off schedule that calls check; Run drives it.
func NewSchedule(check func(ctx context.Context)) *Schedule {
	return &Schedule{check: check, kick: make(chan struct{}, 1)}
}

// Set switches the schedule on or off; switching it on checks at once.
func (s *Schedule) Set(on bool) {
	s.mu.Lock()
	changed := s.on != on
	s.on = on
	s.mu.Unlock()
	if changed {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// Armed reports whether a timer is running.
func (s *Schedule) Armed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.armed
}

func (s *Schedule) isOn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.on
}

// Run checks on the schedule until ctx ends.
func (s *Schedule) Run(ctx context.Context) {
	var (
		timer *time.Timer
		fire  <-chan time.Time
	)
	disarm := func() {
		if timer != nil {
			timer.Stop()
			timer, fire = nil, nil
		}
		s.mu.Lock()
		s.armed = false
		s.mu.Unlock()
	}
	// checkAndArm checks now and arms the next check, if still on.
	checkAndArm := func() {
		disarm()
		if !s.isOn() {
			return
		}
		s.check(ctx)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.on && ctx.Err() == nil {
			timer = time.NewTimer(Every)
			fire = timer.C
			s.armed = true
		}
	}
	defer disarm()
	checkAndArm()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
			if s.isOn() != s.Armed() {
				checkAndArm() // turned on: check now; turned off: disarm
			}
		case <-fire:
			checkAndArm()
		}
	}
}
