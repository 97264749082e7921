package app

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy"
)

// TestUsageDeltasHedges: the hedge of a race is its second side, whichever
// attempt the race started from (docs/BEHAVIOUR.md#hedging).
func TestUsageDeltasHedges(t *testing.T) {
	noPrice := func(string, int64, proxy.Usage) proxy.Cost { return proxy.Cost{} }
	for _, tc := range []struct {
		name  string
		parts []string // each attempt's hedge part
		want  []int64  // hedges per attempt
	}{
		{"no race", []string{"", ""}, []int64{0, 0}},
		{"first attempt raced, racer won", []string{"cancelled", "won"}, []int64{0, 1}},
		{"first attempt raced, it won", []string{"won", "cancelled"}, []int64{0, 1}},
		{"failover attempt raced", []string{"", "cancelled", "won"}, []int64{0, 0, 1}},
		{"raced, then the loop went on", []string{"", "failed", "failed", ""}, []int64{0, 0, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &proxy.Record{Status: 200}
			for i, p := range tc.parts {
				rec.Attempts = append(rec.Attempts, proxy.Attempt{EndpointID: int64(i + 1), Hedge: p})
			}
			for i, d := range usageDeltas(rec, noPrice) {
				if d.Hedges != tc.want[i] {
					t.Errorf("attempt %d (%q): hedges %d, want %d", i, tc.parts[i], d.Hedges, tc.want[i])
				}
			}
		})
	}
}
