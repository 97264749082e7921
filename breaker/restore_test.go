package breaker

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestSnapshotRestoreMidCooldown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBreaker(t, Overrides{})
		trip(t, b, Claude) // Open(Broken) for 90 s
		advance(30 * time.Second)
		snap := b.Snapshot()

		// The process is down for 20 s, then restores into a fresh breaker.
		advance(20 * time.Second)
		b2, rec := newBreaker(t, Overrides{})
		b2.Restore(snap)
		v := wantState(t, b2, Open, Broken)
		if got, want := time.Until(v.Until), 40*time.Second; got != want {
			t.Fatalf("remaining cooldown after restore = %v, want %v", got, want)
		}
		if got := b2.Snapshot(); got != snap {
			t.Errorf("Snapshot after Restore = %+v, want %+v", got, snap)
		}
		if b2.Available(v.Until.Add(-time.Nanosecond)) {
			t.Error("available 1ns before the restored cooldown ends")
		}
		if !b2.Available(v.Until.Add(time.Nanosecond)) {
			t.Error("not available 1ns after the restored cooldown ends")
		}
		trs := rec.take()
		if len(trs) != 2 {
			t.Fatalf("transitions = %+v, want restore then the lazy half-open step", trs)
		}
		if tr := trs[0]; tr.Cause != CauseRestore || tr.From != Closed || tr.To != Open || tr.Reason != Broken || tr.Snapshot != snap {
			t.Errorf("restore transition = %+v", tr)
		}
		if tr := trs[1]; tr.Cause != CauseRequest || tr.From != Open || tr.To != HalfOpen {
			t.Errorf("lazy transition = %+v", tr)
		}
	})
}

func TestRestore(t *testing.T) {
	for _, tc := range []struct {
		name           string
		snap           func(now time.Time) Snapshot
		wantState      State
		wantReason     Reason
		wantTransition bool
		wantAvailable  bool // right after Restore, at now
	}{
		{
			name:      "closed fires nothing",
			snap:      func(time.Time) Snapshot { return Snapshot{State: Closed, ConsecutiveFailures: 3} },
			wantState: Closed, wantAvailable: true,
		},
		{
			name: "expired open goes half-open lazily",
			snap: func(now time.Time) Snapshot {
				return Snapshot{State: Open, Reason: QuotaExhausted, OpenedAt: now.Add(-2 * time.Hour), Until: now.Add(-time.Hour)}
			},
			wantState: HalfOpen, wantReason: QuotaExhausted, wantTransition: true, wantAvailable: true,
		},
		{
			name: "manual is held",
			snap: func(now time.Time) Snapshot {
				return Snapshot{State: Open, Reason: Manual, OpenedAt: now.Add(-time.Hour)}
			},
			wantState: Open, wantReason: Manual, wantTransition: true,
		},
		{
			name:      "manual ignores a stored until",
			snap:      func(now time.Time) Snapshot { return Snapshot{State: Open, Reason: Manual, Until: now.Add(-time.Hour)} },
			wantState: Open, wantReason: Manual, wantTransition: true,
		},
		{
			name:      "half-open with the probe slot free",
			snap:      func(time.Time) Snapshot { return Snapshot{State: HalfOpen, Reason: RateLimited, HalfOpenSuccesses: 1} },
			wantState: HalfOpen, wantReason: RateLimited, wantTransition: true, wantAvailable: true,
		},
		{
			name: "open without a reason is broken",
			snap: func(now time.Time) Snapshot {
				return Snapshot{State: Open, OpenedAt: now, Until: now.Add(time.Minute)}
			},
			wantState: Open, wantReason: Broken, wantTransition: true,
		},
		{
			name:      "unknown state is closed",
			snap:      func(now time.Time) Snapshot { return Snapshot{State: 9, Reason: Broken, Until: now.Add(time.Hour)} },
			wantState: Closed, wantAvailable: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, rec := newBreaker(t, Overrides{})
				now := time.Now()
				b.Restore(tc.snap(now))
				trs := rec.take()
				if got := len(trs) > 0 && trs[0].Cause == CauseRestore; got != tc.wantTransition {
					t.Errorf("restore transition fired = %v (%+v), want %v", got, trs, tc.wantTransition)
				}
				if got := b.Available(now); got != tc.wantAvailable {
					t.Errorf("Available = %v, want %v", got, tc.wantAvailable)
				}
				wantState(t, b, tc.wantState, tc.wantReason)
			})
		})
	}
}

func TestRestoreMakesOldPermitsStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBreaker(t, Overrides{})
		permit, err := b.Allow(Claude, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		b.Restore(Snapshot{State: Closed})
		permit.Done(failure(QuotaExhausted))
		wantState(t, b, Closed, ReasonNone)
	})
}

func TestOnTransition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b *Breaker
		var got []Transition
		s := NewSet(Config{}, func(tr Transition) {
			// Outside the lock: the breaker must be free to use.
			if !b.mu.TryLock() {
				t.Errorf("OnTransition(%v→%v) called with the breaker locked", tr.From, tr.To)
			} else {
				b.mu.Unlock()
			}
			_ = b.View(tr.At)
			got = append(got, tr)
		})
		b = s.Get(7)
		start := time.Now()
		trip(t, b, OpenAI) // closed → open
		toHalfOpen(t, b)   // open → half_open, lazily in View
		report(t, b, OpenAI, success)
		report(t, b, OpenAI, success) // half_open → closed
		b.ForceOpen()
		b.ForceClose()
		b.Restore(Snapshot{State: Open, Reason: RateLimited, Until: time.Now().Add(time.Second)})

		type step struct {
			from, to State
			reason   Reason
			cause    Cause
			at       time.Duration
		}
		timeout := Defaults(OpenAI).Timeout
		want := []step{
			{Closed, Open, Broken, CauseRequest, 0},
			{Open, HalfOpen, Broken, CauseRequest, timeout},
			{HalfOpen, Closed, ReasonNone, CauseRequest, timeout},
			{Closed, Open, Manual, CauseForceOpen, timeout},
			{Open, Closed, ReasonNone, CauseForceClose, timeout},
			{Closed, Open, RateLimited, CauseRestore, timeout},
		}
		if len(got) != len(want) {
			t.Fatalf("got %d transitions %+v, want %d", len(got), got, len(want))
		}
		var lastGen uint64
		for i, w := range want {
			tr := got[i]
			if tr.ID != 7 || tr.From != w.from || tr.To != w.to || tr.Reason != w.reason || tr.Cause != w.cause || !tr.At.Equal(start.Add(w.at)) {
				t.Errorf("transition %d = {id %d %v→%v %q %v at +%v}, want {id 7 %v→%v %q %v at +%v}",
					i, tr.ID, tr.From, tr.To, tr.Reason, tr.Cause, tr.At.Sub(start), w.from, w.to, w.reason, w.cause, w.at)
			}
			if tr.Snapshot.State != tr.To || tr.Snapshot.Reason != tr.Reason {
				t.Errorf("transition %d snapshot = %+v, want the state after (%v %q)", i, tr.Snapshot, tr.To, tr.Reason)
			}
			if tr.Generation <= lastGen {
				t.Errorf("transition %d generation %d, not above %d", i, tr.Generation, lastGen)
			}
			lastGen = tr.Generation
		}
		if u := got[0].Snapshot.Until; !u.Equal(start.Add(timeout)) {
			t.Errorf("first snapshot until = %v, want open + %v", u, timeout)
		}
	})
}

func TestNoTransitionOnPlainRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, rec := newBreaker(t, Overrides{})
		for range 100 {
			report(t, b, Claude, success)
			report(t, b, Claude, neutral)
			b.Available(time.Now())
			b.View(time.Now())
		}
		if trs := rec.take(); len(trs) != 0 {
			t.Errorf("transitions = %+v, want none", trs)
		}
		if _, err := b.Allow(Claude, time.Time{}); errors.Is(err, ErrOpen) {
			t.Error("closed breaker refused")
		}
	})
}
