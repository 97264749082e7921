package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/app/balance"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
)

// fakeSource is an app with one open breaker, one balance and a log
// writer that dropped two rows.
type fakeSource struct{}

func (fakeSource) Breakers(time.Time) []Breaker {
	return []Breaker{{Endpoint: "relay", State: breaker.Open}}
}

func (fakeSource) Balances() []Balance {
	left := 2.5
	return []Balance{{Endpoint: "relay", Reading: &balance.Reading{Remaining: &left, Unit: balance.USD, At: time.Unix(100, 0)}, Low: true}}
}

func (fakeSource) LogDropped() uint64      { return 2 }
func (fakeSource) LogFailed() uint64       { return 0 }
func (fakeSource) CapturesDropped() uint64 { return 0 }

// A record observed and the Source read at scrape time both show in the
// exposition, with the labels the app's metrics have always had.
func TestExposition(t *testing.T) {
	m := New(fakeSource{}, "v1.2.3", func(rec *proxy.Record) bool { return rec.Status == 200 })
	m.Observe(&proxy.Record{Protocol: anthropic.Protocol, Endpoint: "relay", Status: 200, DurationMs: 1200, TTFBMs: 300,
		Attempts: []proxy.Attempt{
			{Endpoint: "flaky", Status: 429, ErrorType: proxy.ErrRateLimit},
			{Endpoint: "relay", Status: 200, Usage: &proxy.Usage{Input: 5}, Cost: &proxy.Cost{USD: 0.25, Priced: true}},
		}})
	var none *Metrics
	none.Observe(&proxy.Record{}) // a nil Metrics counts nothing, and does not panic

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	tests := []struct{ name, line string }{
		{"request", `ccmesh_requests_total{endpoint="relay",outcome="success",protocol="anthropic",status_class="2xx"} 1`},
		{"failed attempt", `ccmesh_attempts_total{endpoint="flaky",outcome="rate_limited",protocol="anthropic",status_class="4xx"} 1`},
		{"tokens", `ccmesh_tokens_total{endpoint="relay",kind="input"} 5`},
		{"cost", `ccmesh_cost_usd_total{endpoint="relay"} 0.25`},
		{"breaker", `ccmesh_breaker_state{endpoint="relay",state="open"} 1`},
		{"breaker's other states", `ccmesh_breaker_state{endpoint="relay",state="closed"} 0`},
		{"balance", `ccmesh_balance_remaining{endpoint="relay",unit="USD"} 2.5`},
		{"low balance", `ccmesh_balance_low{endpoint="relay"} 1`},
		{"log writer", `ccmesh_log_rows_dropped_total 2`},
		{"version", `ccmesh_build_info{version="v1.2.3"} 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(string(body), tt.line+"\n") {
				t.Errorf("got no line %q in the exposition, want it\n%s", tt.line, body)
			}
		})
	}
}
