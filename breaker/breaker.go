package breaker

// PLACEHOLDER: the exported API below is the contract other packages compile
// against; the breaker helper replaces the bodies with the real state machine.

import (
	"net/http"
	"sync"
	"time"
)

// Breaker guards one endpoint.
type Breaker struct {
	id int64
	mu sync.Mutex
}

// Permit is the second step of Allow: report the attempt's outcome once.
// A value type (not a closure) so that Allow+Done does not allocate.
type Permit struct {
	b   *Breaker
	gen uint64
}

// Done reports the outcome. Calling it on a stale permit (the breaker moved
// on: force-close, expiry, a newer state) changes nothing.
func (p Permit) Done(o Outcome) {}

// ID is the endpoint id.
func (b *Breaker) ID() int64 { return b.id }

// Available reports whether routing may consider the breaker now; it
// reserves nothing.
func (b *Breaker) Available(now time.Time) bool { return true }

// View returns the breaker as routing and the UI see it at now.
func (b *Breaker) View(now time.Time) View { return View{} }

// Allow takes a permit for one attempt under profile p. In HalfOpen only one
// permit is out at a time; a permit not reported by deadline expires.
func (b *Breaker) Allow(p Profile, deadline time.Time) (Permit, error) { return Permit{b: b}, nil }

// Bypass takes a permit for an explicit request: never refused, outcome still counted.
func (b *Breaker) Bypass(p Profile, deadline time.Time) Permit { return Permit{b: b} }

// ForceOpen holds the breaker Open(Manual) until ForceClose.
func (b *Breaker) ForceOpen() {}

// ForceClose moves to Closed with every counter zeroed.
func (b *Breaker) ForceClose() {}

// Snapshot returns the persistable state.
func (b *Breaker) Snapshot() Snapshot { return Snapshot{} }

// Restore replaces the state with s (from the database at start).
func (b *Breaker) Restore(s Snapshot) {}

// Set holds one Breaker per endpoint id, shared by app and proxy.
type Set struct {
	mu sync.RWMutex
	m  map[int64]*Breaker
}

// NewSet makes a Set; onTransition (may be nil) is called outside any lock
// after every state change.
func NewSet(cfg Config, onTransition func(Transition)) *Set {
	return &Set{m: map[int64]*Breaker{}}
}

// Get returns the breaker for id, creating it Closed if missing.
func (s *Set) Get(id int64) *Breaker {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.m[id]
	if b == nil {
		b = &Breaker{id: id}
		s.m[id] = b
	}
	return b
}

// SetConfig replaces the profile defaults; state is kept.
func (s *Set) SetConfig(cfg Config) {}

// SetOverrides sets endpoint id's overrides; state is kept.
func (s *Set) SetOverrides(id int64, o Overrides) {}

// Remove forgets endpoint id.
func (s *Set) Remove(id int64) {}

// Defaults returns SPEC §7.2's parameters for p.
func Defaults(p Profile) Settings { return Settings{} }

// Resolve returns the effective settings for profile p: cfg's profile
// settings with zero fields filled from Defaults, then o applied.
func Resolve(cfg Config, p Profile, o Overrides) Settings { return Settings{} }

// ParseRetryAfter reads Retry-After (delta-seconds or HTTP-date),
// retry-after-ms and rate-limit reset headers; ok is false when none is usable.
func ParseRetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) { return 0, false }

// Class is the result of Classify.
type Class struct {
	Reason     Reason        // QuotaExhausted, RateLimited, or ReasonNone ("not a quota error")
	RetryAfter time.Duration // for RateLimited, when the upstream gave one
}

// Classify applies SPEC §7.4 to an upstream error (status among 400, 402,
// 403, 429), its headers and the first bytes of its body.
func Classify(status int, h http.Header, body []byte, now time.Time) Class { return Class{} }
