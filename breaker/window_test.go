package breaker

import (
	"testing"
	"time"
)

func TestWindow(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type sample struct {
		at     time.Duration
		failed bool
	}
	for _, tc := range []struct {
		name      string
		samples   []sample
		at        time.Duration
		wantReqs  int
		wantFails int
	}{
		{"empty", nil, 0, 0, 0},
		{"one second", []sample{{0, true}, {500 * time.Millisecond, false}}, 999 * time.Millisecond, 2, 1},
		{"59 s later still counted", []sample{{0, true}}, 59 * time.Second, 1, 1},
		{"60 s later gone", []sample{{0, true}}, 60 * time.Second, 0, 0},
		{"partial expiry", []sample{{0, true}, {30 * time.Second, false}, {45 * time.Second, true}}, 80 * time.Second, 2, 1},
		{"long gap clears all", []sample{{0, true}, {10 * time.Second, true}}, time.Hour, 0, 0},
		{"clock stepping back keeps the sample", []sample{{10 * time.Second, true}, {5 * time.Second, true}}, 10 * time.Second, 2, 2},
		{"reused slot is reset", []sample{{0, true}, {60 * time.Second, false}}, 60 * time.Second, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w window
			for _, s := range tc.samples {
				w.add(t0.Add(s.at), s.failed)
			}
			reqs, fails := w.counts(t0.Add(tc.at))
			if reqs != tc.wantReqs || fails != tc.wantFails {
				t.Errorf("counts = %d requests, %d failures; want %d, %d", reqs, fails, tc.wantReqs, tc.wantFails)
			}
		})
	}
}

func TestWindowBeforeEpoch(t *testing.T) {
	var w window
	t0 := time.Unix(-90, 0)
	for i := range 120 {
		w.add(t0.Add(time.Duration(i)*time.Second), i%2 == 0)
	}
	if reqs, fails := w.counts(t0.Add(119 * time.Second)); reqs != 60 || fails != 30 {
		t.Errorf("counts = %d, %d; want 60, 30", reqs, fails)
	}
}
