// Package stat holds the small statistics the load generators and the
// reports share, so that their figures are computed alike.
package stat

import (
	"math"
	"slices"
	"time"
)

// Us is d in microseconds.
func Us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// Ms is d in milliseconds.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Percentile is the nearest-rank percentile (0 < p ≤ 100) of sorted; 0
// for none.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(rank, len(sorted)-1))]
}

// Median of xs (not changed); NaN for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
