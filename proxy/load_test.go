package proxy

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// TestConcurrentStreams: 200 concurrent streaming requests over 3
// endpoints, one failing at random in every way a stream can fail. Each
// request ends as docs/BEHAVIOUR.md#attempt-loop and #streaming say, and no goroutine is left behind.
func TestConcurrentStreams(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	good := proxytest.AnthropicStream(7, 8, "one ", "two ", "three")
	faults := []proxytest.Response{
		{Events: good},
		proxytest.AnthropicError(500, "api_error", "random 500"),
		proxytest.AnthropicError(429, "rate_limit_error", "random 429"),
		{Events: good, CutAfter: 2}, // dies in the prelude: invisible failover
		{Events: good, CutAfter: 5}, // dies after content: error event
		{Events: []proxytest.Event{proxytest.AnthropicErrorEvent("overloaded_error", "Overloaded")}},
	}
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(4, 2))
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		f := faults[rng.IntN(len(faults))]
		mu.Unlock()
		proxytest.Serve(w, r, f)
	}))
	okSrv := func() *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			proxytest.Serve(w, r, proxytest.Response{Events: good})
		}))
	}
	b, c := okSrv(), okSrv()
	sink := &memSink{ch: make(chan *Record, 256)}
	transport := NewTransport()
	srv := New(Options{Breakers: breaker.NewSet(breaker.Config{}, nil), Sink: sink, Logger: zerolog.Nop(), Transport: transport})
	srv.Update(Config{Strategy: StrategyRoundRobin, RetryDelay: time.Millisecond,
		Endpoints: []Endpoint{ep(1, "flaky", flaky.URL), ep(2, "b", b.URL), ep(3, "c", c.URL)}})
	front := httptest.NewServer(srv)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}

	const n = 200
	type outcome struct {
		status int
		body   string
		err    error
	}
	results := make([]outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, front.URL+"/v1/messages?beta=true", strings.NewReader(claudeStreamBody))
			req.Header.Set("anthropic-version", "2023-06-01")
			resp, err := client.Do(req)
			if err != nil {
				results[i].err = err
				return
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			results[i] = outcome{status: resp.StatusCode, body: string(body), err: err}
		})
	}
	wg.Wait()
	complete, broken := 0, 0
	for i, r := range results {
		switch {
		case r.err != nil:
			t.Errorf("request %d: %v", i, r.err)
		case r.status != 200:
			t.Errorf("request %d: status %d: %s", i, r.status, r.body)
		case strings.HasSuffix(r.body, proxytest.FormatEvent(good[len(good)-1])):
			complete++
			if strings.Count(r.body, "event: message_start") != 1 {
				t.Errorf("request %d: a failed prelude leaked to the client: %s", i, r.body)
			}
		case strings.Contains(r.body, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\""):
			broken++
		default:
			t.Errorf("request %d ended neither complete nor with an error event: %q", i, r.body)
		}
	}
	ends := map[StreamEnd]int{}
	for range n {
		ends[(<-sink.ch).StreamEnd]++
	}
	if ends[StreamComplete] != complete || ends[StreamUpstreamError] != broken {
		t.Errorf("log stream ends %v, want %d complete and %d upstream_error", ends, complete, broken)
	}
	t.Logf("%d complete, %d broken after content", complete, broken)

	front.Close()
	flaky.Close()
	b.Close()
	c.Close()
	transport.CloseIdleConnections()
	client.CloseIdleConnections()
	goleak.VerifyNone(t, ignore)
}

// BenchmarkProxyNonStream: one non-streamed request through the proxy to
// a fake upstream over loopback, with a Claude Code–sized body.
func BenchmarkProxyNonStream(b *testing.B) { benchProxyNonStream(b, CaptureOff) }

// BenchmarkProxyNonStreamCapture is BenchmarkProxyNonStream with the
// capture setting on (docs/BEHAVIOUR.md#capture-and-resend): "errors" tees
// every answer and drops the copy of a success, "all" keeps it on the
// record. Redacting, compressing and storing happen off the request path
// and are not measured here.
func BenchmarkProxyNonStreamCapture(b *testing.B) {
	for _, m := range []CaptureMode{CaptureErrors, CaptureAll} {
		b.Run(string(m), func(b *testing.B) { benchProxyNonStream(b, m) })
	}
}

func benchProxyNonStream(b *testing.B, capture CaptureMode) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		proxytest.Serve(w, r, proxytest.AnthropicMessage("hello", 12, 34))
	}))
	defer up.Close()
	srv := New(Options{Breakers: breaker.NewSet(breaker.Config{}, nil), Logger: zerolog.Nop()})
	srv.Update(Config{Endpoints: []Endpoint{ep(1, "a", up.URL)}, Capture: capture})
	front := httptest.NewServer(srv)
	defer front.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	body := `{"model":"claude-sonnet-4-5","max_tokens":32000,"messages":[{"role":"user","content":"` + strings.Repeat("lorem ipsum ", 5000) + `"}]}`
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, front.URL+"/v1/messages?beta=true", strings.NewReader(body))
			req.Header.Set("anthropic-version", "2023-06-01")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
			}
		}
	})
}

// BenchmarkUpstreamDirect is BenchmarkProxyNonStream without ccmesh: the
// difference is the proxy's cost.
func BenchmarkUpstreamDirect(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		proxytest.Serve(w, r, proxytest.AnthropicMessage("hello", 12, 34))
	}))
	defer up.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	body := `{"model":"claude-sonnet-4-5","max_tokens":32000,"messages":[{"role":"user","content":"` + strings.Repeat("lorem ipsum ", 5000) + `"}]}`
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Post(up.URL+"/v1/messages", "application/json", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}
