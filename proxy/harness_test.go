package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// memSink hands records to the test in order.
type memSink struct{ ch chan *Record }

func (m *memSink) Log(r *Record) {
	select {
	case m.ch <- r:
	default: // never block the request path, as the contract says
	}
}

// harness is a ccmesh proxy on a real loopback listener.
type harness struct {
	t        *testing.T
	srv      *Server
	front    *httptest.Server
	sink     *memSink
	breakers *breaker.Set
	client   *http.Client
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{t: t, sink: &memSink{ch: make(chan *Record, 1024)}, breakers: breaker.NewSet(breaker.Config{}, nil)}
	h.srv = New(Options{Breakers: h.breakers, Sink: h.sink, Logger: zerolog.Nop()})
	if cfg.RetryDelay == 0 {
		cfg.RetryDelay = time.Millisecond
	}
	h.srv.Update(cfg)
	h.front = httptest.NewServer(h.srv)
	t.Cleanup(h.front.Close)
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	h.client = &http.Client{Transport: tr}
	return h
}

// ep is a test endpoint with a key, speaking anthropic unless changed.
func ep(id int64, name, url string) Endpoint {
	return Endpoint{ID: id, Name: name, BaseURL: url, APIKey: "key-" + name, Protocol: ProtocolAnthropic, Enabled: true, SortOrder: int(id), HedgeAfter: HedgeSetting}
}

func chatEp(id int64, name, url string) Endpoint {
	e := ep(id, name, url)
	e.Protocol = ProtocolOpenAIChat
	return e
}

type reply struct {
	status int
	header http.Header
	body   string
}

const claudeBody = `{"model":"claude-sonnet-4-5","max_tokens":128000,"messages":[{"role":"user","content":"hi"}],"context_management":{"edits":[]},"x_unknown":{"a":[1,2.5e3,true,null]}}`

const claudeStreamBody = `{"model":"claude-sonnet-4-5","stream":true,"max_tokens":1024,"messages":[{"role":"user","content":"hi"}]}`

// post sends a Claude Code–like request to path.
func (h *harness) post(path, body string, hdr ...string) reply {
	h.t.Helper()
	return h.do(context.Background(), http.MethodPost, path, body, hdr...)
}

func (h *harness) do(ctx context.Context, method, path, body string, hdr ...string) reply {
	h.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, h.front.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("read body: %v", err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// record returns the next log record.
func (h *harness) record() *Record {
	h.t.Helper()
	select {
	case r := <-h.sink.ch:
		return r
	case <-time.After(10 * time.Second):
		h.t.Fatal("no log record within 10s")
		return nil
	}
}

func upstream(t *testing.T, def proxytest.Response) *proxytest.Upstream {
	return proxytest.New(t, def)
}

func okClaude() proxytest.Response { return proxytest.AnthropicMessage("hello", 12, 34) }

func okClaudeStream() proxytest.Response {
	return proxytest.Response{Events: proxytest.AnthropicStream(12, 34, "hel", "lo")}
}

// attemptsOn lists the endpoint names of the record's attempts.
func attemptsOn(r *Record) string {
	var names []string
	for _, a := range r.Attempts {
		names = append(names, a.Endpoint)
	}
	return strings.Join(names, ",")
}
