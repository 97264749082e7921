package breaker

import (
	"testing"
	"testing/synctest"
	"time"
)

// A balance reading opens a breaker as QuotaExhausted until its reset, or
// with none until a reading shows credit; credit closes only a breaker a
// reading opened; a forced-open breaker is left alone; every change says
// CauseBalance.
func TestBalanceOpenClose(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, b *Breaker, rec *recorder)
	}{
		{"no reset: held until credit", func(t *testing.T, b *Breaker, rec *recorder) {
			if !b.BalanceOpen(time.Time{}) {
				t.Fatal("BalanceOpen = false, want true")
			}
			v := wantState(t, b, Open, QuotaExhausted)
			if !v.Balance || v.ProbeDue {
				t.Errorf("view balance %v probe due %v, want true, false", v.Balance, v.ProbeDue)
			}
			advance(30 * 24 * time.Hour)
			if b.Available(time.Now()) || b.WouldBeAvailable(time.Now()) {
				t.Error("available 30 days later with no reading of credit")
			}
			if b.BalanceOpen(time.Time{}) {
				t.Error("a second reading of nothing left reported a change")
			}
			if !b.BalanceClose() {
				t.Fatal("BalanceClose = false, want true")
			}
			wantState(t, b, Closed, ReasonNone)
			wantCauses(t, rec.take(), CauseBalance, CauseBalance)
		}},
		{"reset time: probes after it", func(t *testing.T, b *Breaker, rec *recorder) {
			reset := time.Now().Add(time.Hour)
			b.BalanceOpen(reset)
			if v := wantState(t, b, Open, QuotaExhausted); !v.Until.Equal(reset) {
				t.Errorf("until = %v, want %v", v.Until, reset)
			}
			advance(59 * time.Minute)
			if b.Available(time.Now()) {
				t.Error("available before the reset")
			}
			advance(time.Minute)
			if !b.Available(time.Now()) {
				t.Error("not available at the reset")
			}
			wantState(t, b, HalfOpen, QuotaExhausted)
			if !b.BalanceClose() {
				t.Error("credit after the reset did not close the half-open breaker")
			}
			wantCauses(t, rec.take(), CauseBalance, CauseRequest, CauseBalance)
		}},
		{"credit leaves a request's quota breaker alone", func(t *testing.T, b *Breaker, rec *recorder) {
			report(t, b, Claude, failure(QuotaExhausted))
			if b.BalanceClose() {
				t.Error("BalanceClose closed a breaker a request opened")
			}
			wantState(t, b, Open, QuotaExhausted)
			wantCauses(t, rec.take(), CauseRequest)
		}},
		{"forced open stays forced", func(t *testing.T, b *Breaker, rec *recorder) {
			b.ForceOpen()
			if b.BalanceOpen(time.Time{}) {
				t.Error("BalanceOpen changed a forced-open breaker")
			}
			if b.BalanceClose() {
				t.Error("BalanceClose closed a forced-open breaker")
			}
			wantState(t, b, Open, Manual)
			wantCauses(t, rec.take(), CauseForceOpen)
		}},
		{"a request's failure after the reset drops the balance hold", func(t *testing.T, b *Breaker, rec *recorder) {
			b.BalanceOpen(time.Now().Add(time.Minute))
			toHalfOpen(t, b)
			report(t, b, Claude, failure(QuotaExhausted))
			if v := wantState(t, b, Open, QuotaExhausted); v.Balance {
				t.Error("reopened by a request, still marked as a balance's")
			}
			if b.BalanceClose() {
				t.Error("BalanceClose closed a breaker the probe's failure opened")
			}
			wantCauses(t, rec.take(), CauseBalance, CauseRequest, CauseRequest)
		}},
		{"snapshot keeps the hold across a restore", func(t *testing.T, b *Breaker, rec *recorder) {
			b.BalanceOpen(time.Time{})
			snap := b.Snapshot()
			if !snap.Balance {
				t.Fatal("snapshot lost the balance mark")
			}
			fresh, _ := newBreaker(t, Overrides{})
			fresh.Restore(snap)
			advance(time.Hour)
			if fresh.Available(time.Now()) {
				t.Error("restored balance hold is available")
			}
			if !fresh.BalanceClose() {
				t.Error("restored balance hold not closed by credit")
			}
			rec.take()
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, rec := newBreaker(t, Overrides{})
				c.run(t, b, rec)
			})
		})
	}
}

func wantCauses(t *testing.T, trs []Transition, want ...Cause) {
	t.Helper()
	got := make([]Cause, len(trs))
	for i, tr := range trs {
		got[i] = tr.Cause
	}
	if len(got) != len(want) {
		t.Fatalf("causes = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("causes = %v, want %v", got, want)
			return
		}
	}
}

// A balance mark on a snapshot that is not QuotaExhausted is dropped.
func TestSanitizeBalanceMark(t *testing.T) {
	for _, s := range []Snapshot{
		{State: Open, Reason: Broken, Balance: true, Until: time.Unix(1, 0)},
		{State: Closed, Balance: true},
	} {
		if got := sanitizeSnapshot(s); got.Balance {
			t.Errorf("sanitize(%+v).Balance = true, want false", s)
		}
	}
}
