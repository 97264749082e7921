package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	appmetrics "github.com/ccmesh/ccmesh/app/metrics"
	"github.com/ccmesh/ccmesh/app/stats"
	"github.com/ccmesh/ccmesh/proxy"
)

// The Prometheus metrics are app/metrics'; the app feeds them the log
// sink's records, is their Source at scrape time, and serves them.

// metrics is the App's; a nil one counts nothing.
type metrics struct{ m *appmetrics.Metrics }

func newMetrics(a *App) *metrics {
	return &metrics{appmetrics.New(metricsSource{a}, Version, stats.RequestOK)}
}

// observe counts one request record (appmetrics.Metrics.Observe).
func (m *metrics) observe(rec *proxy.Record) {
	if m != nil {
		m.m.Observe(rec)
	}
}

// metricsSource is the App as the metrics read it.
type metricsSource struct{ a *App }

// Breakers reads the configured endpoints' breakers; View never changes a
// breaker, so a scrape moves no Open breaker to HalfOpen.
func (s metricsSource) Breakers(now time.Time) []appmetrics.Breaker {
	st := s.a.state.Load()
	if st == nil {
		return nil
	}
	out := make([]appmetrics.Breaker, 0, len(st.Endpoints))
	for _, e := range st.Endpoints {
		out = append(out, appmetrics.Breaker{Endpoint: e.Name, State: s.a.breakers.Get(e.ID).View(now).State})
	}
	return out
}

func (s metricsSource) Balances() []appmetrics.Balance {
	if s.a.state.Load() == nil {
		return nil
	}
	all := s.a.bal.All().Balances
	out := make([]appmetrics.Balance, 0, len(all))
	for _, b := range all {
		out = append(out, appmetrics.Balance{Endpoint: b.Endpoint, Reading: b.Reading, Low: b.Low})
	}
	return out
}

func (s metricsSource) LogDropped() uint64      { return s.a.logw.Dropped() }
func (s metricsSource) LogFailed() uint64       { return s.a.logw.Failed() }
func (s metricsSource) CapturesDropped() uint64 { return s.a.logw.CapturesDropped() }

// metricsHandler is the exposition itself.
func (a *App) metricsHandler() http.Handler { return a.metrics.m.Handler() }

// checkMetricsListen refuses a --metrics-listen address other machines
// could reach: that listener asks for no token.
func checkMetricsListen(addr string) error {
	if addr == "" || ListenerIsLoopback(addr) {
		return nil
	}
	return fmt.Errorf("refusing --metrics-listen %s: the metrics listener has no token, so it must be a loopback address "+
		"such as 127.0.0.1:9464 (scrape the main listener's /metrics with the admin token from elsewhere)", addr)
}

// listenMetrics opens --metrics-listen, if set.
func (a *App) listenMetrics() (net.Listener, error) {
	if a.opts.MetricsListen == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", a.opts.MetricsListen)
	if err != nil {
		return nil, fmt.Errorf("listen for metrics on %s: %w", a.opts.MetricsListen, err)
	}
	return ln, nil
}

// serveMetrics serves the metrics listener until the returned stop runs.
func (a *App) serveMetrics(ln net.Listener) (stop func()) {
	srv := &http.Server{Handler: a.metrics.m.OnlyHandler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Warn().Err(err).Str("addr", ln.Addr().String()).Msg("metrics listener stopped")
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
		<-done
	}
}
