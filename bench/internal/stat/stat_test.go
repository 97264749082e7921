package stat

import (
	"math"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ds := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	tests := []struct {
		p    float64
		want time.Duration
	}{
		{50, 5}, {90, 9}, {99, 10}, {100, 10}, {1, 1},
	}
	for _, tt := range tests {
		if got := Percentile(ds, tt.p); got != tt.want {
			t.Errorf("Percentile(1..10, %v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("Percentile(nil) = %v, want 0", got)
	}
}

func TestPercentileOfPrefixes(t *testing.T) {
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, tc := range []struct {
		p    float64
		n    int
		want time.Duration
	}{{50, 100, 50 * time.Millisecond}, {99, 100, 99 * time.Millisecond}, {99, 50, 50 * time.Millisecond}, {50, 1, time.Millisecond}, {99, 0, 0}} {
		if got := Percentile(ds[:tc.n], tc.p); got != tc.want {
			t.Errorf("p%v of %d = %v, want %v", tc.p, tc.n, got, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
	}
	for _, tt := range tests {
		if got := Median(tt.xs); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}
