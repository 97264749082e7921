package breaker

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

func TestForceOpenClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, rec := newBreaker(t, Overrides{})
		report(t, b, Claude, failure(Broken))
		b.ForceOpen()
		v := wantState(t, b, Open, Manual)
		if !v.Until.IsZero() {
			t.Errorf("manual open until %v, want zero", v.Until)
		}
		if b.Available(time.Now().Add(100 * 24 * time.Hour)) {
			t.Error("manual open available 100 days later")
		}
		if _, err := b.Allow(Claude, time.Time{}); !errors.Is(err, ErrOpen) {
			t.Errorf("Allow = %v, want ErrOpen", err)
		}
		b.ForceClose()
		if v := wantState(t, b, Closed, ReasonNone); v.Counts != (Counts{}) {
			t.Errorf("counts after force close = %+v, want zero", v.Counts)
		}
		trs := rec.take()
		if len(trs) != 2 || trs[0].Cause != CauseForceOpen || trs[1].Cause != CauseForceClose ||
			trs[0].From != Closed || trs[0].To != Open || trs[1].From != Open || trs[1].To != Closed {
			t.Errorf("transitions = %+v, want force_open closed→open then force_close open→closed", trs)
		}
	})
}

func TestDisabled(t *testing.T) {
	t.Run("endpoint override", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b, rec := newBreaker(t, Overrides{Disabled: ptr(true)})
			for _, p := range profiles {
				for range 20 {
					report(t, b, p, failure(Broken))
				}
				report(t, b, p, failure(QuotaExhausted))
				report(t, b, p, rateLimited(time.Minute))
			}
			v := wantState(t, b, Closed, ReasonNone)
			if !b.Available(time.Now()) {
				t.Error("disabled breaker not available")
			}
			if v.Counts.TotalFailures != 44 || v.Counts.ConsecutiveFailures != 44 || v.Counts.WindowFailures != 44 {
				t.Errorf("counts = %+v, want 44 failures counted", v.Counts)
			}
			if trs := rec.take(); len(trs) != 0 {
				t.Errorf("transitions = %+v, want none", trs)
			}
		})
	})
	t.Run("one profile", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := NewSet(Config{Claude: Settings{Disabled: true}}, nil)
			b := s.Get(1)
			for range 20 {
				report(t, b, Claude, failure(Broken))
			}
			wantState(t, b, Closed, ReasonNone)

			b = s.Get(2)
			trip(t, b, OpenAI)
			if _, err := b.Allow(OpenAI, time.Time{}); !errors.Is(err, ErrOpen) {
				t.Errorf("Allow(openai) = %v, want ErrOpen", err)
			}
			report(t, b, Claude, success) // Claude requests still pass
			report(t, b, Claude, failure(QuotaExhausted))
			if v := wantState(t, b, Open, Broken); v.Until.Sub(v.OpenedAt) != Defaults(OpenAI).Timeout {
				t.Errorf("a disabled profile's failure changed the cooldown to %v", v.Until.Sub(v.OpenedAt))
			}
			if !b.Available(time.Now()) {
				t.Error("Available = false, want true: Claude requests are not guarded")
			}
		})
	})
	t.Run("open state resumes when enabled again", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := &recorder{}
			s := NewSet(Config{}, rec.record)
			b := s.Get(1)
			report(t, b, Claude, failure(QuotaExhausted))
			s.SetOverrides(1, Overrides{Disabled: ptr(true)})
			wantState(t, b, Closed, ReasonNone)
			s.SetOverrides(1, Overrides{})
			wantState(t, b, Open, QuotaExhausted)
		})
	})
}

func TestBypass(t *testing.T) {
	for _, p := range profiles {
		d := Defaults(p)
		t.Run(p.String()+"/closed counts normally", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, _ := newBreaker(t, Overrides{})
				for range d.FailureThreshold {
					b.Bypass(p, time.Time{}).Done(failure(Broken))
				}
				wantState(t, b, Open, Broken)
			})
		})
		t.Run(p.String()+"/half-open counts as a probe without the slot", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, _ := newBreaker(t, Overrides{})
				trip(t, b, p)
				toHalfOpen(t, b)
				probe, err := b.Allow(p, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				for range d.SuccessThreshold - 1 {
					b.Bypass(p, time.Time{}).Done(success)
				}
				if v := wantState(t, b, HalfOpen, Broken); !v.ProbeInFlight || v.Counts.HalfOpenSuccesses != d.SuccessThreshold-1 {
					t.Fatalf("probe=%v successes=%d, want the probe still out and %d", v.ProbeInFlight, v.Counts.HalfOpenSuccesses, d.SuccessThreshold-1)
				}
				b.Bypass(p, time.Time{}).Done(rateLimited(7 * time.Second))
				if v := wantState(t, b, Open, RateLimited); v.Until.Sub(v.OpenedAt) != 7*time.Second {
					t.Errorf("cooldown = %v, want 7s", v.Until.Sub(v.OpenedAt))
				}
				probe.Done(success) // stale now
				wantState(t, b, Open, RateLimited)
			})
		})
		t.Run(p.String()+"/half-open bypass success closes", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, _ := newBreaker(t, Overrides{})
				trip(t, b, p)
				toHalfOpen(t, b)
				for range d.SuccessThreshold {
					b.Bypass(p, time.Time{}).Done(success)
				}
				wantState(t, b, Closed, ReasonNone)
			})
		})
		for _, reason := range []Reason{Broken, RateLimited, QuotaExhausted, Manual} {
			t.Run(fmt.Sprintf("%v/open(%v) never changes", p, reason), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					b, rec := newBreaker(t, Overrides{})
					switch reason {
					case Manual:
						b.ForceOpen()
					case Broken:
						trip(t, b, p)
					default:
						report(t, b, p, Outcome{Kind: Failure, Reason: reason, RetryAfter: 30 * time.Second})
					}
					before := wantState(t, b, Open, reason)
					rec.take()
					b.Bypass(p, time.Time{}).Done(success)
					b.Bypass(p, time.Time{}).Done(failure(QuotaExhausted))
					b.Bypass(p, time.Time{}).Done(neutral)
					after := wantState(t, b, Open, reason)
					if !after.Until.Equal(before.Until) || !after.OpenedAt.Equal(before.OpenedAt) {
						t.Errorf("cooldown moved: %v..%v → %v..%v", before.OpenedAt, before.Until, after.OpenedAt, after.Until)
					}
					if after.Counts.TotalSuccesses != before.Counts.TotalSuccesses+1 || after.Counts.TotalFailures != before.Counts.TotalFailures+1 {
						t.Errorf("totals %+v → %+v, want one more success and failure", before.Counts, after.Counts)
					}
					if after.Counts.ConsecutiveFailures != before.Counts.ConsecutiveFailures {
						t.Errorf("consecutive failures %d → %d, want unchanged", before.Counts.ConsecutiveFailures, after.Counts.ConsecutiveFailures)
					}
					if trs := rec.take(); len(trs) != 0 {
						t.Errorf("transitions = %+v, want none", trs)
					}
				})
			})
		}
	}
}

func TestZeroBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b Breaker
		trip(t, &b, OpenAI)
		if v := b.View(time.Now()); v.Until.Sub(v.OpenedAt) != Defaults(OpenAI).Timeout {
			t.Errorf("zero breaker cooldown = %v, want the OpenAI default", v.Until.Sub(v.OpenedAt))
		}
	})
}
