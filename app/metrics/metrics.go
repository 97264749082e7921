// Package metrics is what GET /metrics serves (docs/BEHAVIOUR.md#metrics):
// counters fed from the request records the app's log sink receives, and
// the breaker states, balances and log writer's counts read from the app
// at scrape time through the port Source. It knows nothing of the app.
package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ccmesh/ccmesh/app/balance"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
)

// Metrics is what GET /metrics serves, in a registry of its own: two Apps
// in one process (the tests) never share a series. The counters are fed from the records the log sink
// already receives, so the request path does nothing new but a few
// counter increments; breaker states, balances and the log writer's counts
// are read when scraped.
type Metrics struct {
	ok       func(*proxy.Record) bool
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	attempts *prometheus.CounterVec
	duration *prometheus.HistogramVec
	ttfb     *prometheus.HistogramVec
	tokens   *prometheus.CounterVec
	cost     *prometheus.CounterVec
	unpriced *prometheus.CounterVec

	// The series each label set resolved to: the sink runs before the
	// last bytes of a non-streamed answer are flushed, and a map read of a
	// small struct costs a fraction of WithLabelValues' label checks and
	// hashing.
	reqCache     sync.Map // outcomeKey → prometheus.Counter
	attCache     sync.Map // outcomeKey → prometheus.Counter
	timingCache  sync.Map // timingKey → *timingSeries
	endpointSets sync.Map // endpoint name → *endpointSeries
}

type outcomeKey struct{ endpoint, protocol, class, outcome string }

type timingKey struct{ endpoint, protocol string }

type timingSeries struct{ duration, ttfb prometheus.Observer }

// tokenKinds are the kind label's values, in proxy.Usage's order.
var tokenKinds = [...]string{"input", "output", "cache_read", "cache_write", "reasoning"}

type endpointSeries struct {
	tokens         [len(tokenKinds)]prometheus.Counter
	cost, unpriced prometheus.Counter
}

// Label names. Every label's values are bounded by the configuration
// (endpoint names) or by ccmesh's own vocabulary (protocols, error types):
// never a model, a path or anything a client chooses.
var (
	requestLabels = []string{"endpoint", "protocol", "status_class", "outcome"}
	timingLabels  = []string{"endpoint", "protocol"}
)

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
	m := &Metrics{
		ok:  ok,
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ccmesh_requests_total",
			Help: "Client requests by the endpoint that answered (\"\" when none did), client protocol, status class and outcome."}, requestLabels),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ccmesh_attempts_total",
			Help: "Upstream attempts by endpoint, client protocol, status class and outcome (success or the error type)."}, requestLabels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ccmesh_request_duration_seconds",
			Help: "Whole client requests, by the endpoint that answered and client protocol.", Buckets: durationBuckets}, timingLabels),
		ttfb: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ccmesh_request_time_to_first_byte_seconds",
			Help: "Time until an upstream's answer headers were sent to the client, by endpoint and client protocol.", Buckets: ttfbBuckets}, timingLabels),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ccmesh_tokens_total",
			Help: "Tokens the upstreams reported, by endpoint and kind (input, output, cache_read, cache_write, reasoning)."}, []string{"endpoint", "kind"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ccmesh_cost_usd_total",
			Help: "Cost in USD of the priced attempts, by endpoint."}, []string{"endpoint"}),
		unpriced: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ccmesh_unpriced_attempts_total",
			Help: "Attempts that reported usage for a model with no price, by endpoint."}, []string{"endpoint"}),
	}
	m.reg.MustRegister(m.requests, m.attempts, m.duration, m.ttfb, m.tokens, m.cost, m.unpriced,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		stateCollector{src},
		logCounter("ccmesh_log_rows_dropped_total", "Request log rows dropped because the writer's queue was full.",
			src.LogDropped),
		logCounter("ccmesh_log_rows_failed_total", "Request log rows lost because their batch could not be written.",
			src.LogFailed),
		logCounter("ccmesh_log_captures_dropped_total", "Captures left out because the writer's queue held too many.",
			src.CapturesDropped),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ccmesh_build_info", Help: "Always 1; the version is its label.",
			ConstLabels: prometheus.Labels{"version": version}}, func() float64 { return 1 }),
	)
	return m
}

func logCounter(name, help string, f func() uint64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(f()) })
}

// Observe counts one request record. The sink calls it after FillUsage,
// so each attempt's Cost is set. A nil Metrics counts nothing.
func (m *Metrics) Observe(rec *proxy.Record) {
	if m == nil {
		return
	}
	proto := string(rec.Protocol)
	counterOf(&m.reqCache, m.requests, outcomeKey{rec.Endpoint, proto, statusClass(rec.Status), m.requestOutcome(rec)}).Inc()
	tm := m.timing(timingKey{rec.Endpoint, proto})
	tm.duration.Observe(float64(rec.DurationMs) / 1000)
	// TTFBMs is set only when an upstream's headers were relayed; a success
	// under a millisecond has them too.
	if rec.TTFBMs > 0 || m.ok(rec) && len(rec.Attempts) > 0 {
		tm.ttfb.Observe(float64(rec.TTFBMs) / 1000)
	}
	for i := range rec.Attempts {
		at := &rec.Attempts[i]
		outcome := "success"
		if at.ErrorType != "" {
			outcome = string(at.ErrorType)
		}
		counterOf(&m.attCache, m.attempts, outcomeKey{at.Endpoint, proto, statusClass(at.Status), outcome}).Inc()
		if at.Usage == nil && at.Cost == nil {
			continue
		}
		es := m.endpoint(at.Endpoint)
		if u := at.Usage; u != nil {
			for k, n := range [...]int64{u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Reasoning} {
				if n > 0 {
					es.tokens[k].Add(float64(n))
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

func counterOf(cache *sync.Map, vec *prometheus.CounterVec, k outcomeKey) prometheus.Counter {
	if c, ok := cache.Load(k); ok {
		return c.(prometheus.Counter)
	}
	c, _ := cache.LoadOrStore(k, vec.WithLabelValues(k.endpoint, k.protocol, k.class, k.outcome))
	return c.(prometheus.Counter)
}

func (m *Metrics) timing(k timingKey) *timingSeries {
	if t, ok := m.timingCache.Load(k); ok {
		return t.(*timingSeries)
	}
	t, _ := m.timingCache.LoadOrStore(k, &timingSeries{
		duration: m.duration.WithLabelValues(k.endpoint, k.protocol),
		ttfb:     m.ttfb.WithLabelValues(k.endpoint, k.protocol),
	})
	return t.(*timingSeries)
}

func (m *Metrics) endpoint(name string) *endpointSeries {
	if e, ok := m.endpointSets.Load(name); ok {
		return e.(*endpointSeries)
	}
	es := &endpointSeries{cost: m.cost.WithLabelValues(name), unpriced: m.unpriced.WithLabelValues(name)}
	for k, kind := range tokenKinds {
		es.tokens[k] = m.tokens.WithLabelValues(name, kind)
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

var (
	breakerStateDesc = prometheus.NewDesc("ccmesh_breaker_state",
		"1 for the state each endpoint's circuit breaker is in, 0 for the others.", []string{"endpoint", "state"}, nil)
	balanceRemainingDesc = prometheus.NewDesc("ccmesh_balance_remaining",
		"What the last balance reading says is left, in its unit (USD, CNY, tokens, percent).", []string{"endpoint", "unit"}, nil)
	balanceLowDesc = prometheus.NewDesc("ccmesh_balance_low",
		"1 when the last balance reading is under the endpoint's low threshold.", []string{"endpoint"}, nil)
	balanceAtDesc = prometheus.NewDesc("ccmesh_balance_reading_timestamp_seconds",
		"When the last balance reading was taken (Unix time), readable or not.", []string{"endpoint"}, nil)
	breakerStates = []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen}
)

// stateCollector reads the configured endpoints' breakers and balances at
// scrape time. View never changes a breaker, so a scrape moves no Open
// breaker to HalfOpen.
type stateCollector struct{ src Source }

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- breakerStateDesc
	ch <- balanceRemainingDesc
	ch <- balanceLowDesc
	ch <- balanceAtDesc
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	for _, b := range c.src.Breakers(time.Now()) {
		for _, s := range breakerStates {
			val := 0.0
			if b.State == s {
				val = 1
			}
			ch <- prometheus.MustNewConstMetric(breakerStateDesc, prometheus.GaugeValue, val, b.Endpoint, s.String())
		}
	}
	for _, b := range c.src.Balances() {
		r := b.Reading
		if r == nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(balanceAtDesc, prometheus.GaugeValue, float64(r.At.UnixMilli())/1000, b.Endpoint)
		if !r.Known() || r.Unlimited {
			continue
		}
		ch <- prometheus.MustNewConstMetric(balanceRemainingDesc, prometheus.GaugeValue, *r.Remaining, b.Endpoint, string(r.Unit))
		low := 0.0
		if b.Low {
			low = 1
		}
		ch <- prometheus.MustNewConstMetric(balanceLowDesc, prometheus.GaugeValue, low, b.Endpoint)
	}
}

// Handler is the exposition itself.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
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
