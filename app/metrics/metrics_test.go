package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

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

// TestExpositionParses: the whole exposition, with an endpoint whose name
// holds a quote, a backslash and a line feed, and a balance, reads back
// through the Prometheus text parser with each family typed once and the
// name intact.
func TestExpositionParses(t *testing.T) {
	const odd = "re\"l\\ay\nx"
	m := New(fakeSource{}, `v"1`, func(rec *proxy.Record) bool { return rec.Status == 200 })
	m.Observe(&proxy.Record{Protocol: anthropic.Protocol, Endpoint: odd, Status: 200, DurationMs: 1200, TTFBMs: 300,
		Attempts: []proxy.Attempt{{Endpoint: odd, Status: 200, Usage: &proxy.Usage{Input: 5}, Cost: &proxy.Cost{USD: 0.000021, Priced: true}}}})
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q, want the text format's", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	types := map[string]dto.MetricType{
		"ccmesh_requests_total":                    dto.MetricType_COUNTER,
		"ccmesh_request_duration_seconds":          dto.MetricType_HISTOGRAM,
		"ccmesh_cost_usd_total":                    dto.MetricType_COUNTER,
		"ccmesh_breaker_state":                     dto.MetricType_GAUGE,
		"ccmesh_balance_remaining":                 dto.MetricType_GAUGE,
		"ccmesh_balance_reading_timestamp_seconds": dto.MetricType_GAUGE,
		"ccmesh_build_info":                        dto.MetricType_GAUGE,
		"ccmesh_log_rows_dropped_total":            dto.MetricType_COUNTER,
	}
	for name, want := range types {
		f := fams[name]
		if f == nil {
			t.Errorf("no family %s", name)
			continue
		}
		if f.GetType() != want || f.GetHelp() == "" {
			t.Errorf("%s: type %v help %q, want %v with a help text", name, f.GetType(), f.GetHelp(), want)
		}
	}
	label := func(fam, name string) string {
		if f := fams[fam]; f != nil && len(f.GetMetric()) > 0 {
			for _, l := range f.GetMetric()[0].GetLabel() {
				if l.GetName() == name {
					return l.GetValue()
				}
			}
		}
		return ""
	}
	if got := label("ccmesh_requests_total", "endpoint"); got != odd {
		t.Errorf("endpoint label read back %q, want %q", got, odd)
	}
	if got := label("ccmesh_build_info", "version"); got != `v"1` {
		t.Errorf("version label read back %q", got)
	}
	h := fams["ccmesh_request_duration_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 1 || h.GetSampleSum() != 1.2 || len(h.GetBucket()) != len(durationBuckets)+1 {
		t.Errorf("duration histogram: count %d sum %v buckets %d, want 1, 1.2, %d (with +Inf)", h.GetSampleCount(), h.GetSampleSum(), len(h.GetBucket()), len(durationBuckets)+1)
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if fams[name] == nil {
			t.Errorf("no %s: the Go runtime's and the process's series are missing", name)
		}
	}
}
