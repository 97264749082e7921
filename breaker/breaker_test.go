package breaker

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

func TestClosedOpensAfterConsecutiveFailures(t *testing.T) {
	for _, p := range profiles {
		for _, tc := range []struct {
			name         string
			outcome      Outcome
			wantReason   Reason
			wantCooldown func(Settings) time.Duration
		}{
			{"broken", failure(Broken), Broken, func(s Settings) time.Duration { return s.Timeout }},
			{"failure without reason is broken", failure(ReasonNone), Broken, func(s Settings) time.Duration { return s.Timeout }},
			{"rate limited without retry-after", rateLimited(0), RateLimited, func(s Settings) time.Duration { return s.RateLimitTimeout }},
		} {
			t.Run(fmt.Sprintf("%v/%s", p, tc.name), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					b, _ := newBreaker(t, Overrides{})
					d := Defaults(p)
					// A success in between resets the run.
					for range d.FailureThreshold - 1 {
						report(t, b, p, tc.outcome)
					}
					report(t, b, p, success)
					// Let the window forget these, so only the run can trip.
					advance(windowSeconds * time.Second)
					for range d.FailureThreshold - 1 {
						report(t, b, p, tc.outcome)
					}
					v := wantState(t, b, Closed, ReasonNone)
					if got, want := v.Counts.ConsecutiveFailures, d.FailureThreshold-1; got != want {
						t.Fatalf("consecutive failures = %d, want %d", got, want)
					}
					report(t, b, p, tc.outcome)
					v = wantState(t, b, Open, tc.wantReason)
					if got, want := v.Until.Sub(v.OpenedAt), tc.wantCooldown(d); got != want {
						t.Errorf("cooldown = %v, want %v", got, want)
					}
					if _, err := b.Allow(p, time.Time{}); !errors.Is(err, ErrOpen) {
						t.Errorf("Allow while open = %v, want ErrOpen", err)
					}
				})
			})
		}
	}
}

// failurePattern returns n outcomes with k Broken failures, the last one a
// failure, and no run of failureThreshold failures in a row, so that only
// the error-rate rule can trip.
func failurePattern(t *testing.T, n, k, failureThreshold int) []Outcome {
	t.Helper()
	run := failureThreshold - 1
	runs := (k + run - 1) / run
	lead := n - k - (runs - 1)
	if lead < 0 || k == 0 {
		t.Fatalf("no pattern of %d samples with %d failures and runs < %d", n, k, failureThreshold)
	}
	var out []Outcome
	for range lead {
		out = append(out, success)
	}
	for i := range k {
		if i > 0 && i%run == 0 {
			out = append(out, success)
		}
		out = append(out, failure(Broken))
	}
	return out
}

func TestClosedOpensOnErrorRate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		p        Profile
		samples  int
		failures int
		wantOpen bool
	}{
		// Claude: min_requests 15, rate 0.7 (11/15 ≈ 0.73 trips, 10/15 ≈ 0.67 does not).
		{"claude min_requests-1 samples", Claude, 14, 13, false},
		{"claude min_requests samples over the rate", Claude, 15, 11, true},
		{"claude min_requests samples under the rate", Claude, 15, 10, false},
		// OpenAI: min_requests 10, rate 0.6 (6/10 is exactly the threshold).
		{"openai min_requests-1 samples", OpenAI, 9, 7, false},
		{"openai min_requests samples at the rate", OpenAI, 10, 6, true},
		{"openai min_requests samples under the rate", OpenAI, 10, 5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, _ := newBreaker(t, Overrides{})
				for _, o := range failurePattern(t, tc.samples, tc.failures, Defaults(tc.p).FailureThreshold) {
					report(t, b, tc.p, o)
				}
				v := b.View(time.Now())
				if got := v.State == Open; got != tc.wantOpen {
					t.Fatalf("open = %v (state %v, counts %+v), want %v", got, v.State, v.Counts, tc.wantOpen)
				}
				if tc.wantOpen && (v.Reason != Broken || v.Until.Sub(v.OpenedAt) != Defaults(tc.p).Timeout) {
					t.Errorf("opened as %q for %v, want broken for %v", v.Reason, v.Until.Sub(v.OpenedAt), Defaults(tc.p).Timeout)
				}
			})
		})
	}
}

func TestErrorRateWindowForgetsOldSamples(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBreaker(t, Overrides{})
		p := Claude
		pattern := failurePattern(t, 15, 11, Defaults(p).FailureThreshold)
		for _, o := range pattern[:14] {
			report(t, b, p, o)
		}
		advance(windowSeconds * time.Second)
		if got := b.View(time.Now()).Counts.WindowRequests; got != 0 {
			t.Fatalf("window requests after 60 s = %d, want 0", got)
		}
		report(t, b, p, pattern[14])
		wantState(t, b, Closed, ReasonNone)
	})
}

func TestImmediateOpen(t *testing.T) {
	for _, p := range profiles {
		for _, tc := range []struct {
			name         string
			o            Overrides
			outcome      Outcome
			wantReason   Reason
			wantCooldown time.Duration
		}{
			{"quota", Overrides{}, failure(QuotaExhausted), QuotaExhausted, time.Hour},
			{"quota timeout override", Overrides{QuotaTimeout: ptr(Millis(10 * 60_000))}, failure(QuotaExhausted), QuotaExhausted, 10 * time.Minute},
			{"retry-after", Overrides{}, rateLimited(30 * time.Second), RateLimited, 30 * time.Second},
			{"retry-after 1ns", Overrides{}, rateLimited(time.Nanosecond), RateLimited, time.Nanosecond},
			{"huge retry-after capped", Overrides{}, rateLimited(10 * time.Hour), RateLimited, 60 * time.Second},
			{"retry-after at the cap", Overrides{}, rateLimited(60 * time.Second), RateLimited, 60 * time.Second},
			{"cap override", Overrides{MaxRateLimitTimeout: ptr(Millis(2 * 60_000))}, rateLimited(10 * time.Hour), RateLimited, 2 * time.Minute},
		} {
			t.Run(fmt.Sprintf("%v/%s", p, tc.name), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					b, _ := newBreaker(t, tc.o)
					report(t, b, p, tc.outcome)
					v := wantState(t, b, Open, tc.wantReason)
					if got := v.Until.Sub(v.OpenedAt); got != tc.wantCooldown {
						t.Errorf("cooldown = %v, want %v", got, tc.wantCooldown)
					}
				})
			})
		}
	}
}

func TestCooldownEdges(t *testing.T) {
	for _, p := range profiles {
		d := Defaults(p)
		for _, tc := range []struct {
			name     string
			open     func(t *testing.T, b *Breaker)
			reason   Reason
			cooldown time.Duration
		}{
			{"broken", func(t *testing.T, b *Breaker) { trip(t, b, p) }, Broken, d.Timeout},
			{"rate limited with retry-after", func(t *testing.T, b *Breaker) { report(t, b, p, rateLimited(42*time.Second)) }, RateLimited, 42 * time.Second},
			{"rate limited without retry-after", func(t *testing.T, b *Breaker) {
				for range d.FailureThreshold {
					report(t, b, p, rateLimited(0))
				}
			}, RateLimited, d.RateLimitTimeout},
			{"quota", func(t *testing.T, b *Breaker) { report(t, b, p, failure(QuotaExhausted)) }, QuotaExhausted, d.QuotaTimeout},
		} {
			t.Run(fmt.Sprintf("%v/%s", p, tc.name), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					b, _ := newBreaker(t, Overrides{})
					opened := time.Now()
					tc.open(t, b)
					until := opened.Add(tc.cooldown)
					if b.Available(until.Add(-time.Nanosecond)) {
						t.Fatal("Available at cooldown-1ns = true, want false")
					}
					if v := b.View(until.Add(-time.Nanosecond)); v.State != Open || v.Reason != tc.reason || !v.Until.Equal(until) {
						t.Fatalf("View at cooldown-1ns = %v(%q) until %v, want open(%q) until %v", v.State, v.Reason, v.Until, tc.reason, until)
					}
					advance(tc.cooldown - time.Nanosecond)
					if _, err := b.Allow(p, time.Time{}); !errors.Is(err, ErrOpen) {
						t.Fatalf("Allow at cooldown-1ns = %v, want ErrOpen", err)
					}
					advance(2 * time.Nanosecond)
					permit, err := b.Allow(p, time.Time{})
					if err != nil {
						t.Fatalf("Allow at cooldown+1ns = %v, want the probe permit", err)
					}
					v := b.View(time.Now())
					if v.State != HalfOpen || !v.ProbeInFlight || v.Reason != tc.reason {
						t.Fatalf("after the probe: %v(%q) probe=%v, want half_open(%q) with the probe out", v.State, v.Reason, v.ProbeInFlight, tc.reason)
					}
					permit.Done(neutral)
				})
			})
		}
	}
}

func TestHalfOpen(t *testing.T) {
	for _, p := range profiles {
		d := Defaults(p)
		t.Run(p.String()+"/successes close", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, _ := newBreaker(t, Overrides{})
				trip(t, b, p)
				toHalfOpen(t, b)
				for range d.SuccessThreshold - 1 {
					report(t, b, p, success)
				}
				v := wantState(t, b, HalfOpen, Broken)
				if got, want := v.Counts.HalfOpenSuccesses, d.SuccessThreshold-1; got != want {
					t.Fatalf("half-open successes = %d, want %d", got, want)
				}
				report(t, b, p, success)
				v = wantState(t, b, Closed, ReasonNone)
				want := Counts{TotalSuccesses: uint64(d.SuccessThreshold), TotalFailures: uint64(d.FailureThreshold)}
				if v.Counts != want || !v.OpenedAt.IsZero() || !v.Until.IsZero() {
					t.Errorf("closed with counts %+v opened %v until %v, want %+v and zero times", v.Counts, v.OpenedAt, v.Until, want)
				}
			})
		})
		t.Run(p.String()+"/probe failure reopens with its reason", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, _ := newBreaker(t, Overrides{})
				trip(t, b, p)
				toHalfOpen(t, b)
				report(t, b, p, success)
				report(t, b, p, failure(QuotaExhausted))
				v := wantState(t, b, Open, QuotaExhausted)
				if got := v.Until.Sub(v.OpenedAt); got != d.QuotaTimeout {
					t.Errorf("cooldown = %v, want %v", got, d.QuotaTimeout)
				}
				if v.Counts.Reopens != 1 || v.Counts.HalfOpenSuccesses != 0 {
					t.Errorf("reopens %d, half-open successes %d, want 1 and 0", v.Counts.Reopens, v.Counts.HalfOpenSuccesses)
				}
			})
		})
		t.Run(p.String()+"/one probe at a time; neutral releases it", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, _ := newBreaker(t, Overrides{})
				trip(t, b, p)
				toHalfOpen(t, b)
				permit, err := b.Allow(p, time.Time{})
				if err != nil {
					t.Fatalf("first Allow = %v", err)
				}
				if b.Available(time.Now()) {
					t.Error("Available with the probe out = true, want false")
				}
				if _, err := b.Allow(p, time.Time{}); !errors.Is(err, ErrProbeInFlight) {
					t.Fatalf("second Allow = %v, want ErrProbeInFlight", err)
				}
				permit.Done(neutral)
				permit.Done(success) // a second Done of the same permit is stale
				v := wantState(t, b, HalfOpen, Broken)
				if v.ProbeInFlight || v.Counts.HalfOpenSuccesses != 0 {
					t.Fatalf("after neutral: probe=%v successes=%d, want released and 0", v.ProbeInFlight, v.Counts.HalfOpenSuccesses)
				}
				if !b.Available(time.Now()) {
					t.Error("Available after neutral = false, want true")
				}
			})
		})
	}
}

func TestEscalation(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, _ := newBreaker(t, Overrides{})
				timeout := Defaults(p).Timeout
				trip(t, b, p)
				for i, mult := range []time.Duration{1, 1, 1, 2, 4, 8, 16, 16, 16} {
					toHalfOpen(t, b)
					report(t, b, p, failure(Broken))
					v := wantState(t, b, Open, Broken)
					if got, want := v.Until.Sub(v.OpenedAt), mult*timeout; got != want {
						t.Errorf("reopen #%d: cooldown %v, want %v (%d×)", i+1, got, want, mult)
					}
					if v.Counts.Reopens != i+1 {
						t.Errorf("reopen #%d: Reopens = %d", i+1, v.Counts.Reopens)
					}
				}
				// A rate limit on reopening does not escalate.
				toHalfOpen(t, b)
				report(t, b, p, rateLimited(0))
				if v := wantState(t, b, Open, RateLimited); v.Until.Sub(v.OpenedAt) != Defaults(p).RateLimitTimeout {
					t.Errorf("rate-limited reopen: cooldown %v, want %v", v.Until.Sub(v.OpenedAt), Defaults(p).RateLimitTimeout)
				}
				// Closing resets the count: the next reopenings start at 1× again.
				toHalfOpen(t, b)
				for range Defaults(p).SuccessThreshold {
					report(t, b, p, success)
				}
				if v := wantState(t, b, Closed, ReasonNone); v.Counts.Reopens != 0 {
					t.Fatalf("after closing: Reopens = %d, want 0", v.Counts.Reopens)
				}
				trip(t, b, p)
				toHalfOpen(t, b)
				report(t, b, p, failure(Broken))
				if v := wantState(t, b, Open, Broken); v.Until.Sub(v.OpenedAt) != timeout || v.Counts.Reopens != 1 {
					t.Errorf("after reset: cooldown %v reopens %d, want %v and 1", v.Until.Sub(v.OpenedAt), v.Counts.Reopens, timeout)
				}
			})
		})
	}
}

func TestEscalationSaturates(t *testing.T) {
	huge := time.Duration(1 << 61)
	b := &Breaker{reopens: 50}
	st := Settings{Timeout: huge}
	if got := b.cooldown(&st, Broken, 0); got <= 0 {
		t.Errorf("16 × %v = %v, want a saturated positive duration", huge, got)
	}
}

func TestStaleDone(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.String()+"/closed permit after force close", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, _ := newBreaker(t, Overrides{})
				permit, err := b.Allow(p, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				b.ForceClose()
				permit.Done(failure(QuotaExhausted))
				if v := wantState(t, b, Closed, ReasonNone); v.Counts != (Counts{}) {
					t.Errorf("counts after a stale Done = %+v, want zero", v.Counts)
				}
			})
		})
		t.Run(p.String()+"/probe permit after force close", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, _ := newBreaker(t, Overrides{})
				trip(t, b, p)
				toHalfOpen(t, b)
				permit, err := b.Allow(p, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				b.ForceClose()
				permit.Done(failure(Broken))
				if v := wantState(t, b, Closed, ReasonNone); v.Counts != (Counts{}) {
					t.Errorf("counts after a stale Done = %+v, want zero", v.Counts)
				}
			})
		})
		t.Run(p.String()+"/closed permits after the breaker opened", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, _ := newBreaker(t, Overrides{})
				late, err := b.Allow(p, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				trip(t, b, p)
				toHalfOpen(t, b)
				late.Done(failure(Broken)) // from the Closed generation: must not reopen
				wantState(t, b, HalfOpen, Broken)
			})
		})
		t.Run(p.String()+"/zero permit", func(t *testing.T) {
			Permit{}.Done(failure(Broken)) // must not panic
		})
	}
}

func TestPermitExpiry(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deadline time.Duration // from now; 0 = zero deadline
		ttl      time.Duration
	}{
		{"explicit deadline", 30 * time.Second, 30 * time.Second},
		{"zero deadline", 0, DefaultPermitTTL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, _ := newBreaker(t, Overrides{})
				trip(t, b, Claude)
				toHalfOpen(t, b)
				var deadline time.Time
				if tc.deadline > 0 {
					deadline = time.Now().Add(tc.deadline)
				}
				lost, err := b.Allow(Claude, deadline)
				if err != nil {
					t.Fatal(err)
				}
				advance(tc.ttl)
				if _, err := b.Allow(Claude, time.Time{}); !errors.Is(err, ErrProbeInFlight) {
					t.Fatalf("Allow at the deadline = %v, want ErrProbeInFlight", err)
				}
				advance(time.Nanosecond)
				if v := b.View(time.Now()); v.ProbeInFlight {
					t.Fatal("View after the deadline: probe still in flight")
				}
				next, err := b.Allow(Claude, time.Time{})
				if err != nil {
					t.Fatalf("Allow after the deadline = %v, want a new probe", err)
				}
				lost.Done(failure(Broken)) // expired: must not reopen nor free the new probe
				if v := wantState(t, b, HalfOpen, Broken); !v.ProbeInFlight {
					t.Fatal("the expired permit's Done released the new probe")
				}
				next.Done(success)
				if v := b.View(time.Now()); v.Counts.HalfOpenSuccesses != 1 {
					t.Errorf("half-open successes = %d, want 1", v.Counts.HalfOpenSuccesses)
				}
			})
		})
	}
}

// TestViewNeverTransitions: reading a breaker for display (health, tray,
// UI) leaves it as it was and reports nothing; the Open → HalfOpen step
// waits for a request (docs/BEHAVIOUR.md#breaker-persistence).
func TestViewNeverTransitions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, rec := newBreaker(t, Overrides{})
		trip(t, b, Claude)
		rec.take()
		v := b.View(time.Now())
		advance(time.Until(v.Until) + time.Nanosecond)
		for range 3 {
			v = b.View(time.Now())
		}
		if v.State != Open || !v.ProbeDue {
			t.Fatalf("view after the cooldown: %v probe due %v, want open and due", v.State, v.ProbeDue)
		}
		if got := rec.take(); len(got) != 0 {
			t.Fatalf("reading reported %d transitions, want none", len(got))
		}
		if s := b.Snapshot(); s.State != Open {
			t.Fatalf("snapshot %v after reading, want open", s.State)
		}
		if !b.Available(time.Now()) {
			t.Fatal("a request may not consider the breaker after its cooldown")
		}
		got := rec.take()
		if len(got) != 1 || got[0].To != HalfOpen || got[0].Cause != CauseRequest {
			t.Fatalf("transitions after a request asked: %+v, want one to half_open", got)
		}
		if v := b.View(time.Now()); v.State != HalfOpen || v.ProbeDue {
			t.Fatalf("view %v probe due %v, want half_open", v.State, v.ProbeDue)
		}
	})
}

// WouldBeAvailable answers as Available would, and changes nothing.
func TestWouldBeAvailable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		set := NewSet(Config{}, nil)
		b := set.Get(1)
		now := time.Now()
		if !b.WouldBeAvailable(now) {
			t.Fatal("a closed breaker must be available")
		}
		b.ForceOpen()
		if b.WouldBeAvailable(now.Add(time.Hour)) {
			t.Error("a manually opened breaker has no cooldown")
		}
		b.ForceClose()
		p, err := b.Allow(Claude, now.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		p.Done(Outcome{Kind: Failure, Reason: RateLimited, RetryAfter: 10 * time.Second})
		v := b.View(now)
		if v.State != Open || b.WouldBeAvailable(now) {
			t.Fatalf("after a 429 with a retry time: %+v, available %v", v, b.WouldBeAvailable(now))
		}
		later := v.Until.Add(time.Millisecond)
		if !b.WouldBeAvailable(later) {
			t.Error("past its cooldown the breaker would let a probe through")
		}
		if got := b.View(later); got.State != Open || !got.ProbeDue {
			t.Errorf("the dry run changed the breaker: %+v", got)
		}
		if b.Available(later) != b.WouldBeAvailable(later) {
			t.Error("Available and WouldBeAvailable disagree")
		}
	})
}
