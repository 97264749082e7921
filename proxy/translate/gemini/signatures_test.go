package gemini

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Entries live the TTL since they were stored or last read; time is the
// bubble's fake clock.
func TestSignatureStoreTTL(t *testing.T) {
	tests := []struct {
		name     string
		readAt   []time.Duration // reads of the entry, since it was stored
		checkAt  time.Duration
		wantKept bool
	}{
		{"fresh", nil, 59 * time.Minute, true},
		{"expired", nil, time.Hour, false},
		{"a read keeps it another TTL", []time.Duration{50 * time.Minute}, 109 * time.Minute, true},
		{"but not longer", []time.Duration{50 * time.Minute}, 110 * time.Minute, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := NewSignatureStore(1<<20, time.Hour)
				s.Put("c", "id", "sig")
				start := time.Now()
				for _, at := range tt.readAt {
					time.Sleep(at - time.Since(start))
					if _, ok := s.Get("c", "id"); !ok {
						t.Fatalf("gone at %v", at)
					}
				}
				time.Sleep(tt.checkAt - time.Since(start))
				_, ok := s.Get("c", "id")
				if ok != tt.wantKept {
					t.Errorf("kept at %v = %v, want %v", tt.checkAt, ok, tt.wantKept)
				}
				if n, want := s.Len(), map[bool]int{true: 1, false: 0}[tt.wantKept]; n != want {
					t.Errorf("Len = %d, want %d", n, want)
				}
			})
		})
	}
}

// Past the memory cap the least recently used entries go first, and the
// size never exceeds the cap.
func TestSignatureStoreCap(t *testing.T) {
	sig := strings.Repeat("s", 100)
	one := entrySize(sigKey{"c", "id0"}, sig)
	s := NewSignatureStore(3*one, time.Hour)
	for i := range 3 {
		s.Put("c", fmt.Sprintf("id%d", i), sig)
	}
	s.Get("c", "id0") // id1 is now the least recently used
	s.Put("c", "id3", sig)
	for id, want := range map[string]bool{"id0": true, "id1": false, "id2": true, "id3": true} {
		if _, ok := s.Get("c", id); ok != want {
			t.Errorf("%s kept = %v, want %v", id, ok, want)
		}
	}
	if s.size > s.maxBytes {
		t.Errorf("size %d over the cap %d", s.size, s.maxBytes)
	}
	s.Put("c", "huge", strings.Repeat("x", 4*one))
	if _, ok := s.Get("c", "huge"); ok || s.Len() != 3 {
		t.Errorf("an entry larger than the cap was kept (or evicted the others): Len %d", s.Len())
	}
}

func TestSignatureStoreKeys(t *testing.T) {
	s := NewSignatureStore(1<<20, time.Hour)
	s.Put("a", "id", "A")
	s.Put("b", "id", "B")
	s.Put("a", "id", "A2") // replaced, not added
	s.Put("a", "", "x")
	s.Put("a", "empty", "")
	for _, c := range []struct{ conv, id, want string }{{"a", "id", "A2"}, {"b", "id", "B"}, {"c", "id", ""}, {"a", "empty", ""}} {
		if got, _ := s.Get(c.conv, c.id); got != c.want {
			t.Errorf("Get(%s, %s) = %q, want %q", c.conv, c.id, got, c.want)
		}
	}
	if s.Len() != 2 {
		t.Errorf("Len = %d, want 2", s.Len())
	}
	var nilStore *SignatureStore
	nilStore.Put("a", "id", "x")
	if _, ok := nilStore.Get("a", "id"); ok {
		t.Error("a nil store gave a signature")
	}
}

func TestSignatureStoreConcurrent(t *testing.T) {
	s := NewSignatureStore(64*entrySize(sigKey{"c", "id00"}, "sig"), time.Hour)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				id := fmt.Sprintf("id%d", (g*200+i)%97)
				s.Put("c", id, "sig")
				s.Get("c", id)
			}
		}()
	}
	wg.Wait()
	if s.size > s.maxBytes || s.Len() > 64 {
		t.Errorf("size %d (cap %d), %d entries", s.size, s.maxBytes, s.Len())
	}
}

// BenchmarkSignatureStorePut stores signatures of Gemini's usual size
// (a few hundred bytes of base64) and reports the heap each entry really
// takes beside the size the store accounts for it, which the cap counts.
func BenchmarkSignatureStorePut(b *testing.B) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := NewSignatureStore(1<<40, time.Hour)
	b.ResetTimer()
	for range b.N {
		// Each id and signature its own string, as decoding makes them.
		s.Put("client\x00session", newCallID(), strings.Repeat("A", 400))
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N), "heap-B/entry")
	b.ReportMetric(float64(s.size)/float64(b.N), "counted-B/entry")
	runtime.KeepAlive(s)
}
