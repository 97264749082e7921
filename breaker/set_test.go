package breaker

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		p    Profile
		want Settings
	}{
		{Claude, Settings{FailureThreshold: 8, SuccessThreshold: 3, Timeout: 90 * time.Second, ErrorRateThreshold: 0.7,
			MinRequests: 15, RateLimitTimeout: 5 * time.Second, MaxRateLimitTimeout: 60 * time.Second, QuotaTimeout: time.Hour}},
		{OpenAI, Settings{FailureThreshold: 4, SuccessThreshold: 2, Timeout: 60 * time.Second, ErrorRateThreshold: 0.6,
			MinRequests: 10, RateLimitTimeout: 5 * time.Second, MaxRateLimitTimeout: 60 * time.Second, QuotaTimeout: time.Hour}},
	} {
		t.Run(tc.p.String(), func(t *testing.T) {
			if got := Defaults(tc.p); got != tc.want {
				t.Errorf("Defaults(%v) = %+v, want %+v", tc.p, got, tc.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	claude := Defaults(Claude)
	for _, tc := range []struct {
		name string
		cfg  Config
		p    Profile
		o    Overrides
		want func(s *Settings)
	}{
		{"zero config is the defaults", Config{}, Claude, Overrides{}, func(*Settings) {}},
		{"profile value kept", Config{Claude: Settings{FailureThreshold: 20, Timeout: time.Minute}}, Claude, Overrides{},
			func(s *Settings) { s.FailureThreshold, s.Timeout = 20, time.Minute }},
		{"other profile ignored", Config{OpenAI: Settings{FailureThreshold: 20}}, Claude, Overrides{}, func(*Settings) {}},
		{"override wins", Config{Claude: Settings{FailureThreshold: 20}}, Claude,
			Overrides{FailureThreshold: ptr(2), ErrorRateThreshold: ptr(0.5), Disabled: ptr(true), QuotaTimeout: ptr(Millis(60_000))},
			func(s *Settings) {
				s.FailureThreshold, s.ErrorRateThreshold, s.Disabled, s.QuotaTimeout = 2, 0.5, true, time.Minute
			}},
		{"override disables a disabled profile's opt-out", Config{Claude: Settings{Disabled: true}}, Claude,
			Overrides{Disabled: ptr(false)}, func(*Settings) {}},
		{"unusable values take the default", Config{Claude: Settings{SuccessThreshold: -1, MinRequests: -5}}, Claude,
			Overrides{FailureThreshold: ptr(0), Timeout: ptr(Millis(-1000)), ErrorRateThreshold: ptr(-0.1)},
			func(*Settings) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := claude
			tc.want(&want)
			if got := Resolve(tc.cfg, tc.p, tc.o); got != want {
				t.Errorf("Resolve = %+v, want %+v", got, want)
			}
		})
	}
}

func TestSet(t *testing.T) {
	t.Run("get is lazy and stable", func(t *testing.T) {
		s := NewSet(Config{}, nil)
		a, b := s.Get(1), s.Get(1)
		if a != b || a.ID() != 1 {
			t.Fatalf("Get(1) twice = %p, %p (id %d), want one breaker with id 1", a, b, a.ID())
		}
		if s.Get(2) == a {
			t.Fatal("Get(2) returned endpoint 1's breaker")
		}
	})
	t.Run("config changes keep the state", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := NewSet(Config{}, nil)
			b := s.Get(1)
			report(t, b, Claude, failure(Broken))
			report(t, b, Claude, failure(Broken))
			s.SetConfig(Config{Claude: Settings{FailureThreshold: 3}})
			wantState(t, b, Closed, ReasonNone)
			report(t, b, Claude, failure(Broken))
			wantState(t, b, Open, Broken)
		})
	})
	t.Run("overrides before and after get", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := NewSet(Config{}, nil)
			threshold := 1
			s.SetOverrides(1, Overrides{FailureThreshold: &threshold})
			threshold = 100 // the Set keeps its own copy
			b := s.Get(1)
			report(t, b, OpenAI, failure(Broken))
			wantState(t, b, Open, Broken)

			c := s.Get(2)
			s.SetOverrides(2, Overrides{Timeout: ptr(Millis(1000))})
			report(t, c, OpenAI, failure(QuotaExhausted))
			s.SetOverrides(2, Overrides{QuotaTimeout: ptr(Millis(60_000))}) // cooldown already fixed
			if v := wantState(t, c, Open, QuotaExhausted); v.Until.Sub(v.OpenedAt) != time.Hour {
				t.Errorf("cooldown = %v, want the 1h fixed when it opened", v.Until.Sub(v.OpenedAt))
			}
		})
	})
	t.Run("remove forgets state and overrides", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := NewSet(Config{}, nil)
			s.SetOverrides(1, Overrides{FailureThreshold: ptr(1)})
			old := s.Get(1)
			report(t, old, Claude, failure(Broken))
			s.Remove(1)
			b := s.Get(1)
			if b == old {
				t.Fatal("Get after Remove returned the old breaker")
			}
			report(t, b, Claude, failure(Broken))
			wantState(t, b, Closed, ReasonNone)
		})
	})
	t.Run("zero set", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var s Set
			s.SetOverrides(3, Overrides{FailureThreshold: ptr(1)})
			b := s.Get(3)
			report(t, b, Claude, failure(Broken))
			wantState(t, b, Open, Broken)
			s.SetConfig(Config{})
			s.Remove(3)
		})
	})
}

// TestConcurrentProbe hammers one HalfOpen breaker from many goroutines: at
// no moment may two probe permits be out.
func TestConcurrentProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewSet(Config{}, func(Transition) {})
		b := s.Get(1)
		trip(t, b, Claude)
		toHalfOpen(t, b)

		const workers, rounds = 16, 2000
		var inFlight, granted, refused atomic.Int64
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				p := profiles[w%2]
				for i := range rounds {
					switch i % 3 {
					case 0:
						b.Available(time.Now())
					case 1:
						b.View(time.Now())
					}
					permit, err := b.Allow(p, time.Time{})
					if err != nil {
						if !errors.Is(err, ErrProbeInFlight) {
							t.Errorf("Allow = %v, want a permit or ErrProbeInFlight", err)
						}
						refused.Add(1)
						continue
					}
					if n := inFlight.Add(1); n > 1 {
						t.Errorf("%d probes in flight", n)
					}
					granted.Add(1)
					inFlight.Add(-1)
					permit.Done(neutral) // stays HalfOpen: neutral counts nothing
				}
			})
		}
		wg.Wait()
		if granted.Load() == 0 {
			t.Fatal("no probe was ever granted")
		}
		v := wantState(t, b, HalfOpen, Broken)
		if v.ProbeInFlight {
			t.Error("after the run: a probe is still in flight")
		}
		t.Logf("%d probes granted, %d refused, to %d goroutines", granted.Load(), refused.Load(), workers)
	})
}

// TestConcurrentOutcomes mixes every call under -race; the breaker must end
// in a consistent state with each success and failure counted once.
func TestConcurrentOutcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var transitions atomic.Int64
		s := NewSet(Config{}, func(Transition) { transitions.Add(1) })
		b := s.Get(1)
		const workers, rounds = 8, 500
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range rounds {
					o := success
					if (i+w)%5 == 0 {
						o = failure(Broken)
					}
					b.Bypass(Claude, time.Time{}).Done(o)
					if permit, err := b.Allow(Claude, time.Time{}); err == nil {
						permit.Done(success)
					}
				}
			})
		}
		wg.Wait()
		v := b.View(time.Now())
		if v.Counts.TotalSuccesses+v.Counts.TotalFailures == 0 || v.State != Closed {
			t.Errorf("after the run: %v with %+v, want closed with outcomes counted", v.State, v.Counts)
		}
	})
}
