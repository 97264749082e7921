package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parseMetrics parses a /metrics answer with Prometheus' own text parser.
func parseMetrics(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return fams
}

// sample is the value of the series name{labels} (a histogram's: its
// count), and whether it exists. labels must be the series' whole set.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		var got []string
		for _, l := range m.GetLabel() {
			got = append(got, l.GetName()+"="+l.GetValue())
		}
		if !slices.Equal(got, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// rateLimited answers every message with a 429 that asks for a minute.
func rateLimited(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "application/json")
		w.Header().Set("retry-after", "60")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// postMessage sends one Claude request for model and waits until it is logged.
func (h *harness) postMessage(t *testing.T, model string) int {
	t.Helper()
	logged := h.watchLog()
	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/messages", strings.NewReader(`{"model":"`+model+`","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("anthropic-version", "2023-06-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	logged()
	return res.StatusCode
}

// Known traffic — a failover from a rate-limited endpoint, a success, a
// 429 the client gets — gives exact counts in /metrics, read with the
// Prometheus text parser.
func TestMetricsCountKnownTraffic(t *testing.T) {
	h := newHarness(t)
	good, _ := fakeAnthropic(t)
	h.mustCreate(`{"name":"flaky","protocol":"anthropic","base_url":"` + rateLimited(t).URL + `","api_key":"` + secretKey + `"}`)
	h.mustCreate(`{"name":"good","protocol":"anthropic","base_url":"` + good.URL + `","api_key":"` + secretKey + `"}`)

	for _, s := range []struct {
		model string
		want  int
	}{
		{"claude-sonnet-4-5", 200},        // flaky 429 → good: a failover
		{"claude-sonnet-4-5", 200},        // flaky's breaker is open: good at once
		{"@flaky/claude-sonnet-4-5", 429}, // named: the client gets the 429
	} {
		if got := h.postMessage(t, s.model); got != s.want {
			t.Fatalf("POST %s: status %d, want %d", s.model, got, s.want)
		}
	}

	r := h.do("GET", "/metrics", "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /metrics: status %d: %s", r.status, r.body)
	}
	fams := parseMetrics(t, r.body)
	const perCall = (5*3.0 + 2*15.0) / 1e6 // claude-sonnet-4-5: 5 in, 2 out at $3 and $15 per million
	tests := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"ccmesh_requests_total", []string{"endpoint=good", "outcome=success", "protocol=anthropic", "status_class=2xx"}, 2},
		{"ccmesh_requests_total", []string{"endpoint=flaky", "outcome=error", "protocol=anthropic", "status_class=4xx"}, 1},
		{"ccmesh_attempts_total", []string{"endpoint=good", "outcome=success", "protocol=anthropic", "status_class=2xx"}, 2},
		{"ccmesh_attempts_total", []string{"endpoint=flaky", "outcome=rate_limited", "protocol=anthropic", "status_class=4xx"}, 2},
		{"ccmesh_request_duration_seconds", []string{"endpoint=good", "protocol=anthropic"}, 2},
		{"ccmesh_request_duration_seconds", []string{"endpoint=flaky", "protocol=anthropic"}, 1},
		{"ccmesh_request_time_to_first_byte_seconds", []string{"endpoint=good", "protocol=anthropic"}, 2},
		{"ccmesh_tokens_total", []string{"endpoint=good", "kind=input"}, 10},
		{"ccmesh_tokens_total", []string{"endpoint=good", "kind=output"}, 4},
		{"ccmesh_cost_usd_total", []string{"endpoint=good"}, 2 * perCall},
		{"ccmesh_breaker_state", []string{"endpoint=flaky", "state=open"}, 1},
		{"ccmesh_breaker_state", []string{"endpoint=flaky", "state=closed"}, 0},
		{"ccmesh_breaker_state", []string{"endpoint=good", "state=closed"}, 1},
		{"ccmesh_breaker_state", []string{"endpoint=good", "state=half_open"}, 0},
		{"ccmesh_log_rows_dropped_total", nil, 0},
		{"ccmesh_log_rows_failed_total", nil, 0},
		{"ccmesh_build_info", []string{"version=" + Version}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name+"{"+strings.Join(tt.labels, ",")+"}", func(t *testing.T) {
			got, ok := sample(fams, tt.name, tt.labels...)
			if !ok {
				t.Fatalf("no series %s%v in:\n%s", tt.name, tt.labels, r.body)
			}
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if fams[name] == nil {
			t.Errorf("no %s: the Go and process collectors are missing", name)
		}
	}
	// Nothing a client chooses becomes a label: no model, no path.
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.Contains(l.GetValue(), "claude") || strings.Contains(l.GetValue(), "/v1") {
					t.Errorf("%s has label %s=%q", f.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// The main listener's /metrics wants the admin token, like the admin API.
func TestMetricsNeedTheAdminToken(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name string
		mod  func(*http.Request)
		want int
	}{
		{"with the token", func(*http.Request) {}, http.StatusOK},
		{"without", func(r *http.Request) { r.Header.Del("Authorization") }, http.StatusUnauthorized},
		{"wrong token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer not-the-admin-token") }, http.StatusUnauthorized},
		{"foreign Host", func(r *http.Request) { r.Host = "evil.example" }, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := h.do("GET", "/metrics", "", tt.mod).status; got != tt.want {
				t.Errorf("status %d, want %d", got, tt.want)
			}
		})
	}
}

// --metrics-listen must be a loopback address: that listener has no token.
func TestMetricsListenOnlyLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:9464", ":9464", "192.0.2.1:9464", "[::]:9464", "metrics.example:9464"} {
		t.Run(addr, func(t *testing.T) {
			_, err := New(context.Background(), Options{DataDir: t.TempDir(), AdminToken: testToken, MetricsListen: addr})
			if err == nil || !strings.Contains(err.Error(), "loopback") {
				t.Errorf("New with --metrics-listen %s: err %v, want a refusal naming loopback", addr, err)
			}
		})
	}
}

// The metrics listener answers /metrics without a token, to loopback
// Hosts only, and nothing else; it stops with Serve.
func TestMetricsListener(t *testing.T) {
	h := startHarness(t, t.TempDir(), func(o *Options) {
		o.Listen, o.ListenIsFlag, o.MetricsListen = "127.0.0.1:0", true, "127.0.0.1:0"
	})
	ln, err := h.app.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.app.Serve(ctx, ln) }()
	base := "http://" + h.app.metLn.Addr().String()
	tests := []struct {
		name, path string
		mod        func(*http.Request)
		want       int
	}{
		{"no token", "/metrics", func(*http.Request) {}, http.StatusOK},
		{"foreign Host", "/metrics", func(r *http.Request) { r.Host = "evil.example" }, http.StatusForbidden},
		{"a browser's Origin", "/metrics", func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, http.StatusForbidden},
		{"the admin API is not here", "/api/info", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+testToken) }, http.StatusNotFound},
		{"nor the proxy", "/v1/models", func(*http.Request) {}, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", base+tt.path, nil)
			tt.mod(req)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tt.want {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tt.want, body)
			}
			if tt.want == http.StatusOK {
				if _, ok := sample(parseMetrics(t, body), "ccmesh_log_rows_dropped_total"); !ok {
					t.Errorf("no ccmesh_log_rows_dropped_total in:\n%s", body)
				}
			}
		})
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	var op *net.OpError
	if _, err := http.Get(base + "/metrics"); err == nil || !errors.As(err, &op) {
		t.Errorf("the metrics listener still answers after Serve returned (err %v)", err)
	}
}

// Balance readings show as gauges; an endpoint deleted leaves the breaker
// and balance series at the next scrape, while its counters stay until
// restart.
func TestMetricsBalanceAndDeletedEndpoint(t *testing.T) {
	h := newHarness(t)
	relay := newBalanceRelay(t, 1_000_000) // $2 left
	e := h.mustCreate(`{"name":"relay","protocol":"anthropic","base_url":"` + relay.srv.URL + `/v1","api_key":"` + secretKey + `","balance":{"template":"relay","low_threshold":5}}`)
	relay.waitRead(t, "a connector added")
	if got := h.balanceOf(e.ID, "POST"); got.Reading == nil || got.Reading.Remaining == nil {
		t.Fatalf("no reading: %+v", got)
	}
	if code := h.postMessage(t, "claude-sonnet-4-5"); code != http.StatusOK {
		t.Fatalf("request: status %d", code)
	}
	scrape := func() map[string]*dto.MetricFamily {
		r := h.do("GET", "/metrics", "")
		if r.status != http.StatusOK {
			t.Fatalf("GET /metrics: status %d", r.status)
		}
		return parseMetrics(t, r.body)
	}
	requests := []string{"endpoint=relay", "outcome=success", "protocol=anthropic", "status_class=2xx"}
	before := scrape()
	after := func() map[string]*dto.MetricFamily {
		if r := h.do("DELETE", "/api/endpoints/"+itoa(e.ID), ""); r.status/100 != 2 {
			t.Fatalf("delete: status %d: %s", r.status, r.body)
		}
		return scrape()
	}()
	tests := []struct {
		name   string
		fams   map[string]*dto.MetricFamily
		series string
		labels []string
		want   float64
		exists bool
	}{
		{"remaining", before, "ccmesh_balance_remaining", []string{"endpoint=relay", "unit=USD"}, 2, true},
		{"low", before, "ccmesh_balance_low", []string{"endpoint=relay"}, 1, true},
		{"breaker", before, "ccmesh_breaker_state", []string{"endpoint=relay", "state=closed"}, 1, true},
		{"requests", before, "ccmesh_requests_total", requests, 1, true},
		{"remaining after delete", after, "ccmesh_balance_remaining", []string{"endpoint=relay", "unit=USD"}, 0, false},
		{"breaker after delete", after, "ccmesh_breaker_state", []string{"endpoint=relay", "state=closed"}, 0, false},
		{"requests after delete", after, "ccmesh_requests_total", requests, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := sample(tt.fams, tt.series, tt.labels...)
			if ok != tt.exists || got != tt.want {
				t.Errorf("%s%v = %v (present %v), want %v (present %v)", tt.series, tt.labels, got, ok, tt.want, tt.exists)
			}
		})
	}
	at, ok := sample(before, "ccmesh_balance_reading_timestamp_seconds", "endpoint=relay")
	if ago := time.Since(time.UnixMilli(int64(at * 1000))); !ok || ago < 0 || ago > time.Minute {
		t.Errorf("reading timestamp %v (present %v): %v ago, want within the last minute", at, ok, ago)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Every ccmesh series /metrics serves is in docs/BEHAVIOUR.md#metrics, and
// the Grafana dashboard is valid JSON that uses only those.
func TestMetricsDocumented(t *testing.T) {
	h := newHarness(t)
	good, _ := fakeAnthropic(t)
	h.mustCreate(`{"name":"good","protocol":"anthropic","base_url":"` + good.URL + `","api_key":"` + secretKey + `"}`)
	h.postMessage(t, "claude-sonnet-4-5")
	fams := parseMetrics(t, h.do("GET", "/metrics", "").body)
	doc, err := os.ReadFile("../docs/BEHAVIOUR.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	if i := strings.Index(section, "\n## Metrics\n"); i >= 0 {
		section = section[i:]
		if j := strings.Index(section[1:], "\n## "); j >= 0 {
			section = section[:j+1]
		}
	} else {
		t.Fatal("no ## Metrics section in docs/BEHAVIOUR.md")
	}
	series := regexp.MustCompile("ccmesh_[a-z_]+")
	documented := map[string]bool{}
	for _, n := range series.FindAllString(section, -1) {
		documented[n] = true
	}
	for name := range fams {
		if strings.HasPrefix(name, "ccmesh_") && !documented[name] {
			t.Errorf("%s is served but not in docs/BEHAVIOUR.md#metrics", name)
		}
	}
	raw, err := os.ReadFile("../docs/grafana-ccmesh.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("docs/grafana-ccmesh.json: %v", err)
	}
	if len(dash.Panels) == 0 {
		t.Fatal("docs/grafana-ccmesh.json has no panels")
	}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, n := range series.FindAllString(tg.Expr, -1) {
				if n = strings.TrimSuffix(n, "_bucket"); !documented[n] {
					t.Errorf("panel %q uses %s, which ccmesh does not serve", p.Title, n)
				}
			}
		}
	}
}
