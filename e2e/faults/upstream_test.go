package faults

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fault is one way a fake upstream misbehaves.
type fault int

const (
	healthy fault = iota
	refused
	resetBeforeHeaders
	slowFirstByte
	stallBeforeContent
	stallMidStream
	cutMidStream
	status500
	status429RetryAfter
	status429
	quota429
	credit400
	status401
	slowForCancel
	overloaded        // 529; a stream gets a 200 whose first event after message_start is an error
	quota429Gzip      // quota429 with a gzip-encoded body, as a CDN sends to Claude Code
	preludePings      // a stream that sends only keep-alive pings after message_start
	slowThinking      // a stream that thinks for longer than the first-byte timeout, then answers
	cutMidBodyChunked // cutMidStream, but a non-streamed body is sent chunked, without a Content-Length
)

// upstream is a fake Anthropic Messages server whose fault can be switched
// at any time, or (newChatFake) a healthy OpenAI Chat Completions one. It
// counts requests and remembers the key it was sent.
type upstream struct {
	name  string
	chat  bool // speaks OpenAI Chat Completions, and only healthily
	srv   *httptest.Server
	url   string // base_url for ccmesh (a closed port for `refused`)
	fault atomic.Int64
	hits  atomic.Int64

	mu         sync.Mutex
	lastKey    string
	lastTarget string // path and query of the last request
	retryAfter string // Retry-After of status429RetryAfter; "30" unless set

	arrived  chan struct{} // one value per request that reached the handler
	canceled chan struct{} // one value per request whose caller went away
	stop     chan struct{} // closed at cleanup: stalled handlers return
}

func newUpstream(t *testing.T, name string, f fault) *upstream {
	t.Helper()
	return startUpstream(t, &upstream{name: name}, f)
}

// newChatFake is a healthy OpenAI Chat Completions server: a
// chat.completion, or a complete stream of chunks with a usage chunk when
// asked (stream_options.include_usage) and [DONE].
func newChatFake(t *testing.T, name string) *upstream {
	t.Helper()
	return startUpstream(t, &upstream{name: name, chat: true}, healthy)
}

func startUpstream(t *testing.T, u *upstream, f fault) *upstream {
	t.Helper()
	u.arrived, u.canceled, u.stop = make(chan struct{}, 64), make(chan struct{}, 64), make(chan struct{})
	u.fault.Store(int64(f))
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	u.url = u.srv.URL
	if f == refused {
		u.url = "http://" + closedAddr(t)
	}
	t.Cleanup(func() {
		close(u.stop)
		u.srv.CloseClientConnections()
		u.srv.Close()
	})
	return u
}

// closedAddr is a loopback address nobody listens on: connection refused.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("reserve a port: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func (u *upstream) setFault(f fault) { u.fault.Store(int64(f)) }

func (u *upstream) setRetryAfter(v string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.retryAfter = v
}

func (u *upstream) key() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.lastKey
}

func (u *upstream) target() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.lastTarget
}

// messageRequest is the part of a Messages or Chat request the fakes read.
type messageRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	u.hits.Add(1)
	u.mu.Lock()
	u.lastKey = r.Header.Get("X-Api-Key")
	u.lastTarget = r.URL.RequestURI()
	if u.chat {
		u.lastKey = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	retryAfter := u.retryAfter
	u.mu.Unlock()
	var req messageRequest
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if u.chat {
		u.chatServe(w, r, req, err)
		return
	}
	if err != nil {
		writeAnthropicError(w, http.StatusBadRequest, "invalid_request_error", "fake upstream: unreadable body")
		return
	}
	if r.URL.Path != "/v1/messages" {
		writeAnthropicError(w, http.StatusNotFound, "not_found_error", "fake upstream: no route "+r.URL.Path)
		return
	}
	select {
	case u.arrived <- struct{}{}:
	default:
	}
	switch f := fault(u.fault.Load()); f {
	case resetBeforeHeaders:
		resetConn(w)
	case slowFirstByte:
		u.wait(r) // ccmesh's first-byte timeout must give up first
	case stallBeforeContent, stallMidStream, cutMidStream, cutMidBodyChunked, slowForCancel:
		u.brokenBody(w, r, req, f)
	case status500:
		writeAnthropicError(w, http.StatusInternalServerError, "api_error", "Internal server error")
	case status429RetryAfter:
		w.Header().Set("Retry-After", cmp.Or(retryAfter, "30"))
		writeAnthropicError(w, http.StatusTooManyRequests, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")
	case status429:
		writeAnthropicError(w, http.StatusTooManyRequests, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")
	case quota429:
		writeAnthropicError(w, http.StatusTooManyRequests, "insufficient_quota", "You exceeded your current quota, please check your plan and billing details.")
	case credit400:
		writeAnthropicError(w, http.StatusBadRequest, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.")
	case status401:
		writeAnthropicError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
	case overloaded:
		u.overloaded(w, req)
	case quota429Gzip:
		writeGzipError(w, http.StatusTooManyRequests, "insufficient_quota", "You exceeded your current quota, please check your plan and billing details.")
	case preludePings:
		u.pings(w, r, req)
	case slowThinking:
		u.thinking(w, req)
	default:
		u.answer(w, req)
	}
}

// wait blocks until the caller goes away (recorded) or the test ends.
func (u *upstream) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
		u.noteCanceled()
	case <-u.stop:
	}
}

func (u *upstream) noteCanceled() {
	select {
	case u.canceled <- struct{}{}:
	default: // nobody is counting more than the buffer holds
	}
}

// resetConn closes the connection with a TCP RST before any header.
func resetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // linger 0: close sends RST, not FIN
	}
	conn.Close()
}

func writeAnthropicError(w http.ResponseWriter, status int, typ, msg string) {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// answerText is what a healthy upstream says; tests check whose answer the
// client got by it.
func answerText(name string) string { return "hello from " + name }

func (u *upstream) messageJSON(model string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": "msg_" + u.name, "type": "message", "role": "assistant", "model": model,
		"content":     []map[string]string{{"type": "text", "text": answerText(u.name)}},
		"stop_reason": "end_turn", "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 7, "output_tokens": 4},
	})
	return b
}

// events is a complete Messages stream; the text comes in two deltas so a
// stream cut after the first one is visibly incomplete.
func (u *upstream) events(model string) []string {
	start, _ := json.Marshal(map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_" + u.name, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "usage": map[string]int{"input_tokens": 7, "output_tokens": 1}}})
	delta := func(s string) string {
		b, _ := json.Marshal(map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]string{"type": "text_delta", "text": s}})
		return "event: content_block_delta\ndata: " + string(b) + "\n\n"
	}
	return []string{
		"event: message_start\ndata: " + string(start) + "\n\n",
		"event: ping\ndata: {\"type\": \"ping\"}\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
		delta("hello "),
		delta("from " + u.name),
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":4}}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	}
}

// Positions in events: the prelude is 0–1, the first content event 2.
const (
	firstContentEvent = 2
	firstDeltaEvent   = 3
)

func (u *upstream) answer(w http.ResponseWriter, req messageRequest) {
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		w.Write(u.messageJSON(req.Model))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	for _, ev := range u.events(req.Model) {
		io.WriteString(w, ev)
		rc.Flush()
	}
}

// brokenBody sends a 200 and then misbehaves inside the body.
func (u *upstream) brokenBody(w http.ResponseWriter, r *http.Request, req messageRequest, f fault) {
	rc := http.NewResponseController(w)
	if !req.Stream {
		u.brokenJSON(w, r, rc, f, u.messageJSON(req.Model))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	evs := u.events(req.Model)
	upTo := firstDeltaEvent + 1 // through the first text delta
	if f == stallBeforeContent {
		upTo = firstContentEvent // the prelude only
	}
	for _, ev := range evs[:upTo] {
		io.WriteString(w, ev)
	}
	rc.Flush()
	switch f {
	case cutMidStream, cutMidBodyChunked:
		panic(http.ErrAbortHandler) // the server drops the connection mid-body
	case slowForCancel:
		u.trickle(w, r, rc)
	default:
		u.wait(r)
	}
}

// brokenJSON is brokenBody for a non-streamed answer: headers (and, past
// the start, half the JSON) and then a stall or a cut.
func (u *upstream) brokenJSON(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, f fault, full []byte) {
	w.Header().Set("Content-Type", "application/json")
	switch f {
	case slowForCancel:
		u.wait(r) // the client gives up before any header
		return
	case cutMidStream:
		w.Header().Set("Content-Length", fmt.Sprint(len(full)))
	}
	w.WriteHeader(http.StatusOK)
	if f != stallBeforeContent {
		w.Write(full[:len(full)/2])
	}
	rc.Flush()
	if f == cutMidStream || f == cutMidBodyChunked {
		panic(http.ErrAbortHandler)
	}
	u.wait(r)
}

// trickle keeps a stream alive with a delta every 50 ms (well inside the
// idle timeout) until the caller goes away.
func (u *upstream) trickle(w http.ResponseWriter, r *http.Request, rc *http.ResponseController) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			u.noteCanceled()
			return
		case <-u.stop:
			return
		case <-tick.C:
			io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\".\"}}\n\n")
			rc.Flush()
		}
	}
}

// overloaded is Anthropic's "Overloaded": a 529 before a response, or an
// error event in a stream that has already answered 200.
func (u *upstream) overloaded(w http.ResponseWriter, req messageRequest) {
	if !req.Stream {
		writeAnthropicError(w, 529, "overloaded_error", "Overloaded")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, u.events(req.Model)[0])
	io.WriteString(w, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")
}

func writeGzipError(w http.ResponseWriter, status int, typ, msg string) {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Encoding", "gzip")
	w.WriteHeader(status)
	w.Write(z.Bytes())
}

// pings holds a stream in its prelude with a keep-alive ping every 100 ms,
// well inside the idle timeout, until the caller goes away.
func (u *upstream) pings(w http.ResponseWriter, r *http.Request, req messageRequest) {
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	io.WriteString(w, u.events(req.Model)[0])
	rc.Flush()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-u.stop:
			return
		case <-tick.C:
			io.WriteString(w, "event: ping\ndata: {\"type\": \"ping\"}\n\n")
			rc.Flush()
		}
	}
}

// thinkingSteps × thinkingGap is longer than the first-byte timeout, and
// each gap is shorter than the idle timeout.
const (
	thinkingSteps = 8
	thinkingGap   = 150 * time.Millisecond
)

// thinking streams a thinking block slowly, then the usual answer.
func (u *upstream) thinking(w http.ResponseWriter, req messageRequest) {
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	evs := u.events(req.Model)
	io.WriteString(w, evs[0])
	io.WriteString(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n")
	rc.Flush()
	tick := time.NewTicker(thinkingGap)
	defer tick.Stop()
	for range thinkingSteps {
		<-tick.C
		io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm \"}}\n\n")
		rc.Flush()
	}
	io.WriteString(w, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	// The text block is index 1 after the thinking block; the fake's
	// events use index 0, which a pass-through proxy does not care about.
	for _, ev := range evs[firstContentEvent:] {
		io.WriteString(w, ev)
	}
	rc.Flush()
}

// chatServe is the Chat fake's answer. It only ever answers healthily: a
// fault set on it is a mistake in the test, answered with a 500 that says so.
func (u *upstream) chatServe(w http.ResponseWriter, r *http.Request, req messageRequest, err error) {
	switch {
	case err != nil:
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "fake upstream: unreadable body")
		return
	case r.URL.Path != "/v1/chat/completions":
		writeOpenAIError(w, http.StatusNotFound, "not_found", "fake upstream: no route "+r.URL.Path)
		return
	case fault(u.fault.Load()) != healthy:
		writeOpenAIError(w, http.StatusInternalServerError, "server_error", "fake upstream: the Chat fake has no faults")
		return
	}
	select {
	case u.arrived <- struct{}{}:
	default:
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		w.Write(u.chatJSON(req.Model))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	for _, c := range u.chatChunks(req.Model, req.StreamOptions.IncludeUsage) {
		io.WriteString(w, c)
		rc.Flush()
	}
}

func (u *upstream) chatJSON(model string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-" + u.name, "object": "chat.completion", "created": 1700000000, "model": model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": answerText(u.name)}}},
		"usage": map[string]int{"prompt_tokens": 7, "completion_tokens": 4, "total_tokens": 11},
	})
	return b
}

// chatChunks is a complete Chat stream: the role, the text in two deltas
// (as events sends it), the finish, the usage when asked, and [DONE].
func (u *upstream) chatChunks(model string, usage bool) []string {
	chunk := func(choices []map[string]any, extra map[string]any) string {
		doc := map[string]any{"id": "chatcmpl-" + u.name, "object": "chat.completion.chunk",
			"created": 1700000000, "model": model, "choices": choices}
		for k, v := range extra {
			doc[k] = v
		}
		b, _ := json.Marshal(doc)
		return "data: " + string(b) + "\n\n"
	}
	delta := func(d map[string]any, finish any) string {
		return chunk([]map[string]any{{"index": 0, "delta": d, "finish_reason": finish}}, nil)
	}
	out := []string{
		delta(map[string]any{"role": "assistant", "content": ""}, nil),
		delta(map[string]any{"content": "hello "}, nil),
		delta(map[string]any{"content": "from " + u.name}, nil),
		delta(map[string]any{}, "stop"),
	}
	if usage {
		out = append(out, chunk([]map[string]any{}, map[string]any{
			"usage": map[string]int{"prompt_tokens": 7, "completion_tokens": 4, "total_tokens": 11}}))
	}
	return append(out, "data: [DONE]\n\n")
}
