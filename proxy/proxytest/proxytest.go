// Package proxytest provides fake upstreams that behave like the Anthropic
// and OpenAI APIs, with faults that can be switched per response: error
// statuses, encoded error bodies, SSE streams that stall, break or carry an
// error event, and never-answering servers; and a fake of the Gemini API
// (gemini.go) that generates, streams, counts, lists models, checks keys and
// signs function calls as Gemini 3 does. The proxy tests and the end-to-end
// suite share it.
package proxytest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// Event is one SSE event; an empty Name sends a data-only event.
type Event struct {
	Name, Data string
}

// Response is what the fake answers to one request.
type Response struct {
	Status int         // 0 means 200
	Header http.Header // extra headers
	// Body is sent as is (after Encoding), unless Events is non-nil.
	Body string
	// Encoding compresses Body: "gzip", "br" or "zstd"; it also sets
	// Content-Encoding.
	Encoding string
	// Events makes the answer a text/event-stream, one flush per event.
	Events []Event
	// Gate, when set, is received from before each event after the first,
	// so a test can release events one at a time.
	Gate chan struct{}
	// HangHeaders sends nothing until the request is cancelled.
	HangHeaders bool
	// StallAfter ≥ 1 stops after that many events (or, for a plain body,
	// after the headers when StallAfter == 1) and waits for cancellation.
	StallAfter int
	// CutAfter ≥ 1 aborts the connection after that many events, or, for
	// a plain body, after that many bytes of it (sent chunked, without a
	// Content-Length, so only the missing last chunk tells the client).
	CutAfter int
}

// Request is what the fake received.
type Request struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
}

// Upstream is a fake upstream API server.
type Upstream struct {
	*httptest.Server
	mu       sync.Mutex
	queue    []Response
	fallback Response
	reqs     []Request
}

// New starts a fake upstream answering def whenever its queue is empty.
// It is closed at the end of the test.
func New(t testing.TB, def Response) *Upstream {
	t.Helper()
	u := &Upstream{fallback: def}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

// NewTLS is New over HTTPS (its Client() trusts the certificate): a
// request to it through an HTTP proxy is a CONNECT tunnel.
func NewTLS(t testing.TB, def Response) *Upstream {
	t.Helper()
	u := &Upstream{fallback: def}
	u.Server = httptest.NewTLSServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

// Push queues responses, answered in order before the default.
func (u *Upstream) Push(rs ...Response) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.queue = append(u.queue, rs...)
}

// SetDefault replaces the answer used when the queue is empty.
func (u *Upstream) SetDefault(r Response) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.fallback = r
}

// Requests returns a copy of the requests received so far.
func (u *Upstream) Requests() []Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Request(nil), u.reqs...)
}

// Count is the number of requests received.
func (u *Upstream) Count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.reqs)
}

func (u *Upstream) next(r *http.Request, body []byte) Response {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.reqs = append(u.reqs, Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	if len(u.queue) > 0 {
		resp := u.queue[0]
		u.queue = u.queue[1:]
		return resp
	}
	return u.fallback
}

func (u *Upstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	resp := u.next(r, body)
	Serve(w, r, resp)
}

// Serve writes resp to w; exported so a test can build its own handler.
func Serve(w http.ResponseWriter, r *http.Request, resp Response) {
	if resp.HangHeaders {
		<-r.Context().Done()
		return
	}
	for k, vv := range resp.Header {
		w.Header()[k] = vv
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	rc := http.NewResponseController(w)
	if resp.Events == nil {
		body := []byte(resp.Body)
		if resp.Encoding != "" {
			body = Encode(resp.Encoding, body)
			w.Header().Set("Content-Encoding", resp.Encoding)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		if resp.StallAfter == 1 {
			_ = rc.Flush()
			<-r.Context().Done()
			return
		}
		if resp.CutAfter > 0 && resp.CutAfter < len(body) {
			_, _ = w.Write(body[:resp.CutAfter])
			_ = rc.Flush()
			panic(http.ErrAbortHandler)
		}
		_, _ = w.Write(body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var out io.Writer = w
	flush := func() { _ = rc.Flush() }
	if resp.Encoding != "" {
		// A compressed stream, flushed per event as a server that
		// compresses SSE must.
		w.Header().Set("Content-Encoding", resp.Encoding)
		zw := newStreamEncoder(resp.Encoding, w)
		defer zw.Close()
		out = zw
		flush = func() { _ = zw.Flush(); _ = rc.Flush() }
	}
	w.WriteHeader(status)
	_ = rc.Flush()
	for i, ev := range resp.Events {
		if resp.StallAfter > 0 && i == resp.StallAfter {
			<-r.Context().Done()
			return
		}
		if resp.CutAfter > 0 && i == resp.CutAfter {
			panic(http.ErrAbortHandler)
		}
		if resp.Gate != nil && i > 0 {
			select {
			case <-resp.Gate:
			case <-r.Context().Done():
				return
			}
		}
		if _, err := io.WriteString(out, FormatEvent(ev)); err != nil {
			return
		}
		flush()
	}
	if resp.StallAfter > 0 && resp.StallAfter >= len(resp.Events) {
		<-r.Context().Done()
	}
	if resp.CutAfter > 0 && resp.CutAfter >= len(resp.Events) {
		panic(http.ErrAbortHandler)
	}
}

// FormatEvent renders ev as SSE.
func FormatEvent(ev Event) string {
	if ev.Name == "" {
		return "data: " + ev.Data + "\n\n"
	}
	return "event: " + ev.Name + "\ndata: " + ev.Data + "\n\n"
}

// Encode compresses b with coding ("gzip", "br" or "zstd").
func Encode(coding string, b []byte) []byte {
	var buf bytes.Buffer
	switch coding {
	case "gzip":
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(b)
		_ = zw.Close()
	case "br":
		bw := brotli.NewWriter(&buf)
		_, _ = bw.Write(b)
		_ = bw.Close()
	case "zstd":
		zw, _ := zstd.NewWriter(&buf)
		_, _ = zw.Write(b)
		_ = zw.Close()
	default:
		panic(fmt.Sprintf("proxytest: unknown coding %q", coding))
	}
	return buf.Bytes()
}

type streamEncoder interface {
	io.WriteCloser
	Flush() error
}

func newStreamEncoder(coding string, w io.Writer) streamEncoder {
	switch coding {
	case "gzip":
		return gzip.NewWriter(w)
	case "br":
		return brotli.NewWriter(w)
	case "zstd":
		zw, _ := zstd.NewWriter(w)
		return zw
	}
	panic(fmt.Sprintf("proxytest: unknown coding %q", coding))
}

// ClosedURL returns the URL of a port nobody listens on ("connection
// refused").
func ClosedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr
}
