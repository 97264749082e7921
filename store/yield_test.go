package store

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestYielder: on one P the writer pauses once it has run for yieldEvery
// since its last pause (and at once when asked), for yieldPause; off, or
// nil, it never pauses.
func TestYielder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		y := &yielder{on: true, last: time.Now()}
		start := time.Now()
		y.maybe()
		if d := time.Since(start); d != 0 {
			t.Fatalf("paused %v right after a pause", d)
		}
		time.Sleep(yieldEvery) // the writer's work, on the fake clock
		start = time.Now()
		y.maybe()
		if d := time.Since(start); d != yieldPause {
			t.Fatalf("after %v of work paused %v, want %v", yieldEvery, d, yieldPause)
		}
		start = time.Now()
		y.now()
		if d := time.Since(start); d != yieldPause {
			t.Fatalf("now() paused %v, want %v", d, yieldPause)
		}

		off := &yielder{on: false, last: time.Now()}
		var none *yielder
		time.Sleep(time.Second)
		start = time.Now()
		off.maybe()
		off.now()
		none.maybe()
		none.now()
		if d := time.Since(start); d != 0 {
			t.Fatalf("an off or nil yielder paused %v", d)
		}
	})
}
