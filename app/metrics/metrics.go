// Package metrics is what GET /metrics serves (docs/BEHAVIOUR.md#metrics):
// counters fed from the request records the app's log sink receives, and
// the breaker states, balances and log writer's counts read from the app
// at scrape time through the port Source. It knows nothing of the app.
package metrics

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/ccmesh/ccmesh/app/balance"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
)

// Metrics is what GET /metrics serves, in sets of its own: two Apps in one
// process (the tests) never share a series. The counters are fed from the
// records the log sink already receives, so the request path does nothing
// new but a few counter increments; breaker states, balances and the log
// writer's counts are read when scraped.
//
// The series are github.com/VictoriaMetrics/metrics': the Prometheus text
// format without protobuf, 3.4 MB less binary and 1.2 MiB less idle RSS
// than the Prometheus client (bench/NOTES.md). Each family is a Set of its
// own, so that its HELP and TYPE lines are written once, before it.
type Metrics struct {
	ok  func(*proxy.Record) bool
	src Source
	// version is the build_info line, written whole at scrape time.
	version string

	requests, attempts, duration, ttfb, tokens, cost, unpriced family

	// The series each label set resolved to: the sink runs before the
	// last bytes of a non-streamed answer are flushed, and a map read of a
	// small struct costs a fraction of building the series' name.
	reqCache     sync.Map // outcomeKey → *vm.Counter
	attCache     sync.Map // outcomeKey → *vm.Counter
	timingCache  sync.Map // timingKey → *timingSeries
	endpointSets sync.Map // endpoint name → *endpointSeries
}

// family is one metric family: its name, HELP text, TYPE and series.
type family struct {
	name, help, typ string
	set             *vm.Set
}

func newFamily(name, typ, help string) family {
	return family{name: name, help: help, typ: typ, set: vm.NewSet()}
}

// series is the name of the family's series with labels, given as name,
// value pairs in sorted order (as the Prometheus client wrote them).
func (f *family) series(labels ...string) string {
	var b strings.Builder
	b.WriteString(f.name)
	b.WriteByte('{')
	for i := 0; i < len(labels); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(labels[i])
		b.WriteString(`="`)
		b.WriteString(labelEscaper.Replace(labels[i+1]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// labelEscaper escapes a label value as the text format wants: backslash,
// double quote and line feed.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func (f *family) write(w io.Writer) {
	if len(f.set.ListMetricNames()) == 0 {
		return
	}
	writeMeta(w, f.name, f.typ, f.help)
	f.set.WritePrometheus(w)
}

func writeMeta(w io.Writer, name, typ, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

type outcomeKey struct{ endpoint, protocol, class, outcome string }

type timingKey struct{ endpoint, protocol string }

type timingSeries struct{ duration, ttfb *vm.PrometheusHistogram }

// tokenKinds are the kind label's values, in proxy.Usage's order.
var tokenKinds = [...]string{"input", "output", "cache_read", "cache_write", "reasoning"}

type endpointSeries struct {
	tokens   [len(tokenKinds)]*vm.Counter
	cost     *vm.FloatCounter
	unpriced *vm.Counter
}

// Every label's values are bounded by the configuration (endpoint names)
// or by ccmesh's own vocabulary (protocols, error types): never a model, a
// path or anything a client chooses.

// Buckets in seconds: a model's answer takes from a fraction of a second
// to minutes; its first byte comes sooner.
var (
	durationBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600}
	ttfbBuckets     = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60}
)

// Source is what the metrics read from the app when scraped.
type Source interface {
	// Breakers are the configured endpoints' breaker states now, without
	// moving any (breaker.Breaker.View).
	Breakers(now time.Time) []Breaker
	// Balances are the endpoints' last balance readings.
	Balances() []Balance
	// LogDropped, LogFailed and CapturesDropped are the log writer's
	// counts of rows dropped, rows lost and captures left out.
	LogDropped() uint64
	LogFailed() uint64
	CapturesDropped() uint64
}

// Breaker is an endpoint's breaker state.
type Breaker struct {
	Endpoint string
	State    breaker.State
}

// Balance is an endpoint's last balance reading (nil before the first)
// and whether it is under its low threshold.
type Balance struct {
	Endpoint string
	Reading  *balance.Reading
	Low      bool
}

// New is the metrics of the app src, built as version; ok says whether a
// request succeeded, as the app's statistics count it.
func New(src Source, version string, ok func(*proxy.Record) bool) *Metrics {
	return &Metrics{
		ok: ok, src: src, version: version,
		requests: newFamily("ccmesh_requests_total", "counter",
			"Client requests by the endpoint that answered (\"\" when none did), client protocol, status class and outcome."),
		attempts: newFamily("ccmesh_attempts_total", "counter",
			"Upstream attempts by endpoint, client protocol, status class and outcome (success or the error type)."),
		duration: newFamily("ccmesh_request_duration_seconds", "histogram",
			"Whole client requests, by the endpoint that answered and client protocol."),
		ttfb: newFamily("ccmesh_request_time_to_first_byte_seconds", "histogram",
			"Time until an upstream's answer headers were sent to the client, by endpoint and client protocol."),
		tokens: newFamily("ccmesh_tokens_total", "counter",
			"Tokens the upstreams reported, by endpoint and kind (input, output, cache_read, cache_write, reasoning)."),
		cost:     newFamily("ccmesh_cost_usd_total", "counter", "Cost in USD of the priced attempts, by endpoint."),
		unpriced: newFamily("ccmesh_unpriced_attempts_total", "counter", "Attempts that reported usage for a model with no price, by endpoint."),
	}
}

// Observe counts one request record. The sink calls it after FillUsage,
// so each attempt's Cost is set. A nil Metrics counts nothing.
func (m *Metrics) Observe(rec *proxy.Record) {
	if m == nil {
		return
	}
	proto := string(rec.Protocol)
	counterOf(&m.reqCache, &m.requests, outcomeKey{rec.Endpoint, proto, statusClass(rec.Status), m.requestOutcome(rec)}).Inc()
	tm := m.timing(timingKey{rec.Endpoint, proto})
	tm.duration.Update(float64(rec.DurationMs) / 1000)
	// TTFBMs is set only when an upstream's headers were relayed; a success
	// under a millisecond has them too.
	if rec.TTFBMs > 0 || m.ok(rec) && len(rec.Attempts) > 0 {
		tm.ttfb.Update(float64(rec.TTFBMs) / 1000)
	}
	for i := range rec.Attempts {
		at := &rec.Attempts[i]
		outcome := "success"
		if at.ErrorType != "" {
			outcome = string(at.ErrorType)
		}
		counterOf(&m.attCache, &m.attempts, outcomeKey{at.Endpoint, proto, statusClass(at.Status), outcome}).Inc()
		if at.Usage == nil && at.Cost == nil {
			continue
		}
		es := m.endpoint(at.Endpoint)
		if u := at.Usage; u != nil {
			for k, n := range [...]int64{u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Reasoning} {
				if n > 0 {
					es.tokens[k].AddInt64(n)
				}
			}
		}
		if c := at.Cost; c != nil {
			if c.Priced {
				es.cost.Add(c.USD)
			} else {
				es.unpriced.Inc()
			}
		}
	}
}

func counterOf(cache *sync.Map, f *family, k outcomeKey) *vm.Counter {
	if c, ok := cache.Load(k); ok {
		return c.(*vm.Counter)
	}
	c, _ := cache.LoadOrStore(k, f.set.GetOrCreateCounter(f.series(
		"endpoint", k.endpoint, "outcome", k.outcome, "protocol", k.protocol, "status_class", k.class)))
	return c.(*vm.Counter)
}

func (m *Metrics) timing(k timingKey) *timingSeries {
	if t, ok := m.timingCache.Load(k); ok {
		return t.(*timingSeries)
	}
	t, _ := m.timingCache.LoadOrStore(k, &timingSeries{
		duration: m.duration.set.GetOrCreatePrometheusHistogramExt(m.duration.series("endpoint", k.endpoint, "protocol", k.protocol), durationBuckets),
		ttfb:     m.ttfb.set.GetOrCreatePrometheusHistogramExt(m.ttfb.series("endpoint", k.endpoint, "protocol", k.protocol), ttfbBuckets),
	})
	return t.(*timingSeries)
}

func (m *Metrics) endpoint(name string) *endpointSeries {
	if e, ok := m.endpointSets.Load(name); ok {
		return e.(*endpointSeries)
	}
	es := &endpointSeries{
		cost:     m.cost.set.GetOrCreateFloatCounter(m.cost.series("endpoint", name)),
		unpriced: m.unpriced.set.GetOrCreateCounter(m.unpriced.series("endpoint", name)),
	}
	for k, kind := range tokenKinds {
		es.tokens[k] = m.tokens.set.GetOrCreateCounter(m.tokens.series("endpoint", name, "kind", kind))
	}
	e, _ := m.endpointSets.LoadOrStore(name, es)
	return e.(*endpointSeries)
}

// statusClass is "2xx" … "5xx" for a status, "none" when there was none
// (a transport failure).
func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "none"
	}
	return statusClasses[status/100-1]
}

var statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

// requestOutcome says how a request ended, in words bounded by ccmesh.
func (m *Metrics) requestOutcome(rec *proxy.Record) string {
	switch {
	case m.ok(rec):
		return "success"
	case rec.ClientGone || rec.Status == proxy.StatusClientGone:
		return "client_gone"
	case rec.Status >= 200 && rec.Status < 300:
		return "stream_error" // the stream broke after the 200 was sent
	case len(rec.Attempts) == 0:
		return "refused" // ccmesh answered itself: no endpoint, a guard, paused
	default:
		return "error"
	}
}

var breakerStates = []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen}

// Write writes the exposition: the families fed from records, the
// configured endpoints' breakers and balances and the log writer's counts
// read now (View never changes a breaker, so a scrape moves no Open
// breaker to HalfOpen), then the Go runtime's and the process's own.
func (m *Metrics) Write(w io.Writer) {
	for _, f := range []*family{&m.attempts, &m.duration, &m.ttfb, &m.requests, &m.tokens, &m.cost, &m.unpriced} {
		f.write(w)
	}
	state := family{name: "ccmesh_breaker_state"}
	if bs := m.src.Breakers(time.Now()); len(bs) > 0 {
		writeMeta(w, state.name, "gauge", "1 for the state each endpoint's circuit breaker is in, 0 for the others.")
		for _, b := range bs {
			for _, s := range breakerStates {
				val := 0
				if b.State == s {
					val = 1
				}
				fmt.Fprintf(w, "%s %d\n", state.series("endpoint", b.Endpoint, "state", s.String()), val)
			}
		}
	}
	m.writeBalances(w)
	for _, c := range []struct {
		name, help string
		n          uint64
	}{
		{"ccmesh_log_rows_dropped_total", "Request log rows dropped because the writer's queue was full.", m.src.LogDropped()},
		{"ccmesh_log_rows_failed_total", "Request log rows lost because their batch could not be written.", m.src.LogFailed()},
		{"ccmesh_log_captures_dropped_total", "Captures left out because the writer's queue held too many.", m.src.CapturesDropped()},
	} {
		writeMeta(w, c.name, "counter", c.help)
		fmt.Fprintf(w, "%s %d\n", c.name, c.n)
	}
	info := family{name: "ccmesh_build_info"}
	writeMeta(w, info.name, "gauge", "Always 1; the version is its label.")
	fmt.Fprintf(w, "%s 1\n", info.series("version", m.version))
	vm.WriteProcessMetrics(w)
}

// writeBalances writes the three balance families, each whole: a family's
// lines may not be interleaved with another's.
func (m *Metrics) writeBalances(w io.Writer) {
	var at, remaining, low strings.Builder
	af := family{name: "ccmesh_balance_reading_timestamp_seconds"}
	rf := family{name: "ccmesh_balance_remaining"}
	lf := family{name: "ccmesh_balance_low"}
	for _, b := range m.src.Balances() {
		r := b.Reading
		if r == nil {
			continue
		}
		fmt.Fprintf(&at, "%s %s\n", af.series("endpoint", b.Endpoint), formatFloat(float64(r.At.UnixMilli())/1000))
		if !r.Known() || r.Unlimited {
			continue
		}
		fmt.Fprintf(&remaining, "%s %s\n", rf.series("endpoint", b.Endpoint, "unit", string(r.Unit)), formatFloat(*r.Remaining))
		l := 0
		if b.Low {
			l = 1
		}
		fmt.Fprintf(&low, "%s %d\n", lf.series("endpoint", b.Endpoint), l)
	}
	for _, f := range []struct {
		name, help string
		lines      *strings.Builder
	}{
		{rf.name, "What the last balance reading says is left, in its unit (USD, CNY, tokens, percent).", &remaining},
		{lf.name, "1 when the last balance reading is under the endpoint's low threshold.", &low},
		{af.name, "When the last balance reading was taken (Unix time), readable or not.", &at},
	} {
		if f.lines.Len() > 0 {
			writeMeta(w, f.name, "gauge", f.help)
			io.WriteString(w, f.lines.String())
		}
	}
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Handler is the exposition itself.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.Write(w)
	})
}

// OnlyHandler serves GET /metrics alone, without a token, for the loopback
// metrics listener. Its Host must still be a loopback name and no browser
// Origin may come with it: a web page must not read it through DNS
// rebinding (docs/BEHAVIOUR.md#safety).
func (m *Metrics) OnlyHandler() http.Handler {
	mux := http.NewServeMux()
	h := m.Handler()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if !proxy.IsLoopbackHost(r.Host) || r.Header.Get("Origin") != "" {
			http.Error(w, "ccmesh serves metrics here only to loopback scrapers without an Origin", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
	return mux
}
