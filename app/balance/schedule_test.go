package balance

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The schedule reads every interval while some endpoint has a connector,
// and holds no timer when none has or the interval is 0.
func TestSchedule(t *testing.T) {
	cases := []struct {
		name  string
		every time.Duration
		any   bool
		wait  time.Duration
		reads int32
		armed bool
	}{
		{"default 10 min", 10 * time.Minute, true, 35 * time.Minute, 3, true},
		{"never", 0, true, 24 * time.Hour, 0, false},
		{"no connector", 10 * time.Minute, false, 24 * time.Hour, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var reads atomic.Int32
				s := NewSchedule(func(context.Context) { reads.Add(1) })
				s.Set(c.every, c.any)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { s.Run(ctx); close(done) }()
				time.Sleep(c.wait)
				synctest.Wait()
				if got := reads.Load(); got != c.reads {
					t.Errorf("reads after %v = %d, want %d", c.wait, got, c.reads)
				}
				if s.Armed() != c.armed {
					t.Errorf("armed = %v, want %v", s.Armed(), c.armed)
				}
				cancel()
				<-done
			})
		})
	}
}

// Set takes effect at once: adding the first connector arms the timer,
// removing the last disarms it, a new interval counts from the change.
func TestScheduleSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reads atomic.Int32
		s := NewSchedule(func(context.Context) { reads.Add(1) })
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go s.Run(ctx)
		synctest.Wait()
		if s.Armed() {
			t.Fatal("armed with nothing to read")
		}
		s.Set(10*time.Minute, true)
		synctest.Wait()
		if !s.Armed() {
			t.Fatal("not armed after the first connector")
		}
		time.Sleep(10*time.Minute + time.Second)
		if got := reads.Load(); got != 1 {
			t.Errorf("reads = %d, want 1", got)
		}
		s.Set(time.Hour, true)
		time.Sleep(59 * time.Minute)
		synctest.Wait()
		if got := reads.Load(); got != 1 {
			t.Errorf("reads 59 min after a 1 h interval = %d, want 1", got)
		}
		s.Set(time.Hour, false)
		synctest.Wait()
		if s.Armed() {
			t.Error("still armed after the last connector went")
		}
		time.Sleep(24 * time.Hour)
		if got := reads.Load(); got != 1 {
			t.Errorf("reads with no connector = %d, want 1", got)
		}
	})
}
