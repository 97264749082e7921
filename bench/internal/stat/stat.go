// Package stat holds the small statistics the load generators share, so
// that their figures are computed alike.
package stat

import "time"

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
