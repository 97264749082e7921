package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
	"github.com/rs/zerolog"
)

// BenchmarkProxyWritePath: a request through the proxy over loopback,
// answered whole or as a stream of 200 content events, with hedging off
// and on. With it on, the first attempt answers long before the delay:
// every request runs its attempt as a race side, whose writes go through
// the claiming writer (claim.go), without a second side ever starting.
func BenchmarkProxyWritePath(b *testing.B) {
	chunks := make([]string, 200)
	for i := range chunks {
		chunks[i] = "lorem ipsum "
	}
	answers := []struct {
		name string
		resp proxytest.Response
		body string
	}{
		{"whole", proxytest.AnthropicMessage("hello", 12, 34), `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"hi"}]}`},
		{"stream", proxytest.Response{Events: proxytest.AnthropicStream(12, 34, chunks...)}, claudeStreamBody},
	}
	for _, a := range answers {
		for _, hedge := range []time.Duration{0, time.Minute} {
			name := a.name + "/hedge-off"
			if hedge > 0 {
				name = a.name + "/hedge-on"
			}
			b.Run(name, func(b *testing.B) { benchWritePath(b, a.resp, a.body, hedge) })
		}
	}
}

func benchWritePath(b *testing.B, answer proxytest.Response, body string, hedge time.Duration) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		proxytest.Serve(w, r, answer)
	}))
	defer up.Close()
	srv := New(Options{Breakers: breaker.NewSet(breaker.Config{}, nil), Logger: zerolog.Nop()})
	// Two endpoints, so that the first has a candidate to be raced with.
	srv.Update(Config{Endpoints: []Endpoint{ep(1, "a", up.URL), ep(2, "b", up.URL)}, HedgeAfter: hedge})
	front := httptest.NewServer(srv)
	defer front.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, front.URL+"/v1/messages", strings.NewReader(body))
			req.Header.Set("anthropic-version", "2023-06-01")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("X-Ccmesh-Attempts") != "1" {
				b.Errorf("status %d, attempts %q", resp.StatusCode, resp.Header.Get("X-Ccmesh-Attempts"))
			}
		}
	})
}

// discardWriter is a ResponseWriter that keeps nothing, so that
// BenchmarkClaimWriter measures the writer in front of it only.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) Flush()                      {}

// BenchmarkClaimWriter: one race side's streamed answer (the headers, then
// 200 events, each flushed): "explicit" as before the claiming writer, a
// claim called and the writes made to the client's writer; "claiming"
// through the side's writer, which claims on the first write.
func BenchmarkClaimWriter(b *testing.B) {
	ev := []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lorem ipsum \"}}\n\n")
	write := func(w http.ResponseWriter) {
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		setCCMeshHeaders(h, "a", 1)
		w.WriteHeader(http.StatusOK)
		rc := newResponseController(w)
		for range 200 {
			_, _ = w.Write(ev)
			rc.flush()
		}
	}
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:3457/v1/messages", nil)
	e := &endpoint{Endpoint: Endpoint{ID: 1, Name: "a", Protocol: ProtocolAnthropic}}
	for _, claiming := range []bool{false, true} {
		name := "explicit"
		if claiming {
			name = "claiming"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				client := &discardWriter{h: http.Header{}}
				q := &request{w: client, r: r, rec: &Record{}, proto: ProtocolAnthropic}
				gate := &hedgeGate{winner: -1}
				s := q.side(gate, 0, e)
				gate.cancel[1] = func(error) {}
				if claiming {
					write(s.q.w)
				} else if s.q.claim() {
					write(client)
				}
				gate.cancel[0](nil)
			}
		})
	}
}
