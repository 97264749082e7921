package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
)

// BenchmarkProxyThroughApp is one non-streamed Claude Code–sized request
// through the whole App (proxy, log sink, log writer) to a fake upstream
// over loopback, with the metrics counted and without: the difference is
// what metrics cost the request path.
func BenchmarkProxyThroughApp(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "metrics=off", true: "metrics=on"}[on]
		b.Run(name, func(b *testing.B) { benchThroughApp(b, on) })
	}
}

func benchThroughApp(b *testing.B, metricsOn bool) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("content-type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hello"}],"model":"claude-sonnet-4-5","stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":34}}`)
	}))
	defer up.Close()
	a, err := New(context.Background(), Options{DataDir: b.TempDir(), AdminToken: testToken, Logger: zerolog.Nop(), Headless: true, HomeDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close(context.Background())
	front := httptest.NewServer(a.Handler())
	if !metricsOn {
		a.metrics = nil // the sink counts nothing, as before metrics existed
	}
	defer front.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	req, _ := http.NewRequest("POST", front.URL+"/api/endpoints", strings.NewReader(`{"name":"a","protocol":"anthropic","base_url":"`+up.URL+`","api_key":"`+secretKey+`"}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	if res, err := client.Do(req); err != nil || res.StatusCode != http.StatusCreated {
		b.Fatalf("create endpoint: %v %v", res, err)
	}
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

// BenchmarkMetricsObserve is what the log sink adds per record: a failover
// (two attempts, usage and cost on the answering one).
func BenchmarkMetricsObserve(b *testing.B) {
	m := newMetrics(&App{})
	rec := &proxy.Record{Protocol: anthropic.Protocol, Endpoint: "good", Status: 200, DurationMs: 1200, TTFBMs: 300,
		Attempts: []proxy.Attempt{
			{Endpoint: "flaky", Status: 429, ErrorType: proxy.ErrRateLimit, StartedAt: time.Now()},
			{Endpoint: "good", Status: 200, Usage: &proxy.Usage{Input: 5, Output: 2, CacheRead: 100}, Cost: &proxy.Cost{USD: 0.0001, Priced: true}},
		}}
	b.ReportAllocs()
	for b.Loop() {
		m.observe(rec)
	}
}
