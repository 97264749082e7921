package breaker

import (
	"sync"
	"testing"
	"time"
)

var (
	success  = Outcome{Kind: Success}
	neutral  = Outcome{Kind: Neutral}
	profiles = []Profile{Claude, OpenAI}
)

func failure(r Reason) Outcome { return Outcome{Kind: Failure, Reason: r} }

func rateLimited(retryAfter time.Duration) Outcome {
	return Outcome{Kind: Failure, Reason: RateLimited, RetryAfter: retryAfter}
}

// advance moves the synctest bubble's fake clock forward by exactly d: the
// receive blocks durably, so the bubble jumps to the timer.
func advance(d time.Duration) { <-time.After(d) }

// recorder collects OnTransition calls.
type recorder struct {
	mu  sync.Mutex
	trs []Transition
}

func (r *recorder) record(tr Transition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trs = append(r.trs, tr)
}

// take returns the transitions recorded since the last take.
func (r *recorder) take() []Transition {
	r.mu.Lock()
	defer r.mu.Unlock()
	trs := r.trs
	r.trs = nil
	return trs
}

// newBreaker returns endpoint 1 of a fresh Set with default config and o.
func newBreaker(t *testing.T, o Overrides) (*Breaker, *recorder) {
	t.Helper()
	rec := &recorder{}
	s := NewSet(Config{}, rec.record)
	s.SetOverrides(1, o)
	return s.Get(1), rec
}

// report runs one attempt under p with outcome o; Allow must grant it.
func report(t *testing.T, b *Breaker, p Profile, o Outcome) {
	t.Helper()
	permit, err := b.Allow(p, time.Time{})
	if err != nil {
		t.Fatalf("Allow(%v) = %v, want a permit (state %v)", p, err, b.View(time.Now()).State)
	}
	permit.Done(o)
}

// trip opens a Closed breaker with FailureThreshold Broken failures under p.
func trip(t *testing.T, b *Breaker, p Profile) {
	t.Helper()
	for range Defaults(p).FailureThreshold {
		report(t, b, p, failure(Broken))
	}
	if v := b.View(time.Now()); v.State != Open {
		t.Fatalf("after %d failures: state %v, want open", Defaults(p).FailureThreshold, v.State)
	}
}

// toHalfOpen waits out the current cooldown and lets a request consider
// the breaker, so it is HalfOpen.
func toHalfOpen(t *testing.T, b *Breaker) {
	t.Helper()
	v := b.View(time.Now())
	if v.State == Open {
		advance(time.Until(v.Until))
	}
	b.Available(time.Now())
	if v := b.View(time.Now()); v.State != HalfOpen {
		t.Fatalf("after the cooldown: state %v, want half_open", v.State)
	}
}

func wantState(t *testing.T, b *Breaker, state State, reason Reason) View {
	t.Helper()
	v := b.View(time.Now())
	if v.State != state || v.Reason != reason {
		t.Fatalf("state = %v(%q), want %v(%q)", v.State, v.Reason, state, reason)
	}
	return v
}

func ptr[T any](v T) *T { return &v }
