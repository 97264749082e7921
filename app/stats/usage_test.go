package stats

import (
	"reflect"
	"testing"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// testPrice prices "priced" at $1 per million tokens of any kind, and
// nothing else.
func testPrice(model string, _ int64, u proxy.Usage) proxy.Cost {
	if model != "priced" {
		return proxy.Cost{}
	}
	return proxy.Cost{USD: float64(u.Input+u.Output+u.CacheRead+u.CacheWrite) / 1e6, Priced: true}
}

func failedAttempt(id int64, name, model string, u *proxy.Usage) proxy.Attempt {
	return proxy.Attempt{EndpointID: id, Endpoint: name, ErrorType: proxy.ErrStatus, Status: 500,
		Outcome: breaker.Failure, Model: model, Usage: u}
}

func answeredAttempt(id int64, name, model string, u *proxy.Usage) proxy.Attempt {
	return proxy.Attempt{EndpointID: id, Endpoint: name, Status: 200, Outcome: breaker.Success, Model: model, Usage: u}
}

// A log row carries its attempts' usage and cost summed
// (docs/BEHAVIOUR.md#request-log), and the statistics count the client
// request once, under the attempt that answered, and every attempt apart
// (docs/BEHAVIOUR.md#statistics).
func TestFillUsage(t *testing.T) {
	cost := func(usd float64) *float64 { return &usd }
	tests := []struct {
		name       string
		rec        proxy.Record
		wantUsage  store.LogUsage
		wantCost   *float64
		wantDeltas []store.UsageDelta
	}{
		{
			name:       "reached no endpoint",
			rec:        proxy.Record{Status: 403, ModelAsked: "m"},
			wantDeltas: []store.UsageDelta{{Model: "m", Counts: store.Counts{Requests: 1}}},
		},
		{
			name: "failed over twice, then answered",
			rec: proxy.Record{Status: 200, Attempts: []proxy.Attempt{
				failedAttempt(1, "a", "priced", nil), failedAttempt(2, "b", "priced", nil),
				answeredAttempt(3, "c", "priced", &proxy.Usage{Input: 10, Output: 5}),
			}},
			wantUsage: store.LogUsage{Tokens: store.Tokens{Input: 10, Output: 5}},
			wantCost:  cost(15e-6),
			wantDeltas: []store.UsageDelta{
				{EndpointID: 1, Endpoint: "a", Model: "priced", Counts: store.Counts{Attempts: 1, Errors: 1}},
				{EndpointID: 2, Endpoint: "b", Model: "priced", Counts: store.Counts{Attempts: 1, Errors: 1}},
				{EndpointID: 3, Endpoint: "c", Model: "priced", Counts: store.Counts{Requests: 1, Succeeded: 1, Attempts: 1, Tokens: store.Tokens{Input: 10, Output: 5}, CostUSD: 15e-6}},
			},
		},
		{
			name: "every attempt's usage and price add up",
			rec: proxy.Record{Status: 200, Attempts: []proxy.Attempt{
				failedAttempt(1, "a", "priced", &proxy.Usage{Input: 100, CacheRead: 1000, Estimated: true}),
				answeredAttempt(2, "b", "priced", &proxy.Usage{Input: 7, Output: 3, CacheWrite: 20, Reasoning: 2}),
			}},
			wantUsage: store.LogUsage{Tokens: store.Tokens{Input: 107, Output: 3, CacheRead: 1000, CacheWrite: 20, Reasoning: 2}, Estimated: true},
			wantCost:  cost(1130e-6),
			wantDeltas: []store.UsageDelta{
				{EndpointID: 1, Endpoint: "a", Model: "priced", Counts: store.Counts{Attempts: 1, Errors: 1, Tokens: store.Tokens{Input: 100, CacheRead: 1000}, CostUSD: 1100e-6}},
				{EndpointID: 2, Endpoint: "b", Model: "priced", Counts: store.Counts{Requests: 1, Succeeded: 1, Attempts: 1, Tokens: store.Tokens{Input: 7, Output: 3, CacheWrite: 20, Reasoning: 2}, CostUSD: 30e-6}},
			},
		},
		{
			name: "no price: the cost is unknown, not 0",
			rec: proxy.Record{Status: 200, Attempts: []proxy.Attempt{
				answeredAttempt(1, "a", "unlisted", &proxy.Usage{Input: 4, Output: 1}),
			}},
			wantUsage: store.LogUsage{Tokens: store.Tokens{Input: 4, Output: 1}},
			wantDeltas: []store.UsageDelta{
				{EndpointID: 1, Endpoint: "a", Model: "unlisted", Counts: store.Counts{Requests: 1, Succeeded: 1, Attempts: 1, Unpriced: 1, Tokens: store.Tokens{Input: 4, Output: 1}}},
			},
		},
		{
			name: "priced and unpriced attempts: the priced part",
			rec: proxy.Record{Status: 200, Attempts: []proxy.Attempt{
				failedAttempt(1, "a", "unlisted", &proxy.Usage{Input: 50}),
				answeredAttempt(2, "b", "priced", &proxy.Usage{Input: 2}),
			}},
			wantUsage: store.LogUsage{Tokens: store.Tokens{Input: 52}},
			wantCost:  cost(2e-6),
			wantDeltas: []store.UsageDelta{
				{EndpointID: 1, Endpoint: "a", Model: "unlisted", Counts: store.Counts{Attempts: 1, Errors: 1, Unpriced: 1, Tokens: store.Tokens{Input: 50}}},
				{EndpointID: 2, Endpoint: "b", Model: "priced", Counts: store.Counts{Requests: 1, Succeeded: 1, Attempts: 1, Tokens: store.Tokens{Input: 2}, CostUSD: 2e-6}},
			},
		},
		{
			name: "failed on every endpoint",
			rec: proxy.Record{Status: 502, Attempts: []proxy.Attempt{
				failedAttempt(1, "a", "m", nil), failedAttempt(2, "b", "m", nil),
			}},
			wantDeltas: []store.UsageDelta{
				{EndpointID: 1, Endpoint: "a", Model: "m", Counts: store.Counts{Attempts: 1, Errors: 1}},
				{EndpointID: 2, Endpoint: "b", Model: "m", Counts: store.Counts{Requests: 1, Attempts: 1, Errors: 1}},
			},
		},
		{
			name: "a stream broken after its 200 is no success",
			rec: proxy.Record{Status: 200, Stream: true, StreamEnd: proxy.StreamUpstreamError, Attempts: []proxy.Attempt{
				answeredAttempt(1, "a", "m", nil),
			}},
			wantDeltas: []store.UsageDelta{{EndpointID: 1, Endpoint: "a", Model: "m", Counts: store.Counts{Requests: 1, Attempts: 1, Errors: 1}}},
		},
		{
			name: "the first attempt won its hedge race",
			rec: proxy.Record{Status: 200, Attempts: []proxy.Attempt{
				{EndpointID: 1, Endpoint: "a", Status: 200, Outcome: breaker.Success, Model: "m", Hedge: "won"},
				{EndpointID: 2, Endpoint: "b", ErrorType: proxy.ErrHedgeCancelled, Outcome: breaker.Neutral, Model: "m", Hedge: "cancelled"},
			}},
			wantDeltas: []store.UsageDelta{
				{EndpointID: 1, Endpoint: "a", Model: "m", Counts: store.Counts{Requests: 1, Succeeded: 1, Attempts: 1}},
				{EndpointID: 2, Endpoint: "b", Model: "m", Counts: store.Counts{Attempts: 1, Errors: 1, Hedges: 1}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := tt.rec
			var row store.RequestLog
			FillUsage(&row, &rec, testPrice)
			if row.Usage == nil || *row.Usage != tt.wantUsage {
				t.Errorf("usage = %+v, want %+v", row.Usage, tt.wantUsage)
			}
			if !sameCost(row.CostUSD, tt.wantCost) {
				t.Errorf("cost_usd = %v, want %v", show(row.CostUSD), show(tt.wantCost))
			}
			for i := range row.Deltas {
				row.Deltas[i].CostUSD = round(row.Deltas[i].CostUSD)
			}
			if !reflect.DeepEqual(row.Deltas, tt.wantDeltas) {
				t.Errorf("deltas\n got %+v\nwant %+v", row.Deltas, tt.wantDeltas)
			}
		})
	}
}

func sameCost(got, want *float64) bool {
	if got == nil || want == nil {
		return got == want
	}
	return round(*got) == round(*want)
}

// round drops the float noise of summing costs: to the pico-dollar.
func round(v float64) float64 { return float64(int64(v*1e12+0.5)) / 1e12 }

func show(v *float64) any {
	if v == nil {
		return "null"
	}
	return *v
}

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
				rec.Attempts = append(rec.Attempts, proxy.Attempt{EndpointID: int64(i + 1), Hedge: proxy.HedgePart(p)})
			}
			var row store.RequestLog
			FillUsage(&row, rec, noPrice)
			for i, d := range row.Deltas {
				if d.Hedges != tc.want[i] {
					t.Errorf("attempt %d (%q): hedges %d, want %d", i, tc.parts[i], d.Hedges, tc.want[i])
				}
			}
		})
	}
}
