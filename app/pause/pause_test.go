package pause

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

type fakeHost struct {
	mu      sync.Mutex
	applied []bool
	changes int
}

func (h *fakeHost) Apply(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.applied = append(h.applied, on)
}

func (h *fakeHost) Changed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.changes++
}

func (h *fakeHost) get() ([]bool, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]bool(nil), h.applied...), h.changes
}

// A timed pause ends by itself after exactly its duration, and says so.
func TestTimedPauseEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &fakeHost{}
		p := New(h)
		start := time.Now()
		p.Set(true, 2*time.Minute)
		if n := p.Now(); !n.On || !n.Until.Equal(start.Add(2*time.Minute)) || !p.Armed() {
			t.Fatalf("after a 2-minute pause: %+v, armed %v", n, p.Armed())
		}
		time.Sleep(2*time.Minute - time.Nanosecond)
		synctest.Wait()
		if !p.Now().On {
			t.Fatal("resumed before 2 minutes")
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if n := p.Now(); n.On || !n.Until.IsZero() || p.Armed() {
			t.Fatalf("after 2 minutes: %+v, armed %v", n, p.Armed())
		}
		if applied, changes := h.get(); len(applied) != 2 || !applied[0] || applied[1] || changes != 2 {
			t.Errorf("host got %v and %d changes, want [true false] and 2", applied, changes)
		}
	})
}

// A resume cancels a timed pause's timer: nothing happens when it would
// have fired; a change that changes nothing is not announced.
func TestResumeCancelsTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &fakeHost{}
		p := New(h)
		p.Set(true, time.Minute)
		p.Set(false, 0)
		if p.Armed() || p.Now().On {
			t.Fatalf("after resume: %+v, armed %v", p.Now(), p.Armed())
		}
		p.Set(false, 0)
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if applied, changes := h.get(); len(applied) != 3 || changes != 2 {
			t.Errorf("host got %v and %d changes, want 3 applies and 2 changes", applied, changes)
		}
		p.Set(true, time.Minute)
		p.Stop()
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if !p.Now().On {
			t.Error("a pause whose timer was stopped at close ended by itself")
		}
	})
}
