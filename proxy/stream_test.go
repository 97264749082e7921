package proxy

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// TestStreamEventsOneByOne: each event reaches the client before the
// upstream sends the next one — flushed per event, not batched.
func TestStreamEventsOneByOne(t *testing.T) {
	gate := make(chan struct{})
	evs := proxytest.AnthropicStream(5, 6, "a", "b", "c")
	a := upstream(t, proxytest.Response{Events: evs, Gate: gate})
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL)}})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, h.front.URL+"/v1/messages?beta=true", strings.NewReader(claudeStreamBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("anthropic-version", "2023-06-01")
	// The prelude (message_start, ping) is held until content_block_start:
	// release ping and content_block_start before expecting anything.
	go func() { gate <- struct{}{}; gate <- struct{}{} }()
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sr := newSSEReader(resp.Body)
	for i := range evs {
		if i >= 3 {
			gate <- struct{}{} // the upstream sends event i only now
		}
		raw, err := sr.next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if want := proxytest.FormatEvent(evs[i]); string(raw) != want {
			t.Fatalf("event %d = %q, want %q", i, raw, want)
		}
	}
	if _, err := sr.next(); err != io.EOF {
		t.Errorf("after the last event: %v, want EOF", err)
	}
	rec := h.record()
	if rec.StreamEnd != StreamComplete || rec.TokensIn != 5 || rec.TokensOut != 6 {
		t.Errorf("stream_end %q tokens %d/%d, want complete 5/6", rec.StreamEnd, rec.TokensIn, rec.TokensOut)
	}
}

// TestStreamPreludeFailover: an upstream that dies or errors before any
// content fails over invisibly; the client sees one clean stream.
func TestStreamPreludeFailover(t *testing.T) {
	claudePrelude := proxytest.AnthropicPrelude(9)
	tests := []struct {
		name      string
		path      string
		body      string
		fault     proxytest.Response
		good      proxytest.Response
		wantTried string
		wantOnce  string // appears exactly once in what the client got
		errType   ErrorType
	}{
		{
			name: "claude early death after message_start", path: "/v1/messages", body: claudeStreamBody,
			fault: proxytest.Response{Events: claudePrelude, CutAfter: 2}, good: okClaudeStream(),
			wantTried: "a,a,b", wantOnce: "event: message_start", errType: ErrStreamEnd,
		},
		{
			name: "claude overloaded error event first", path: "/v1/messages", body: claudeStreamBody,
			fault: proxytest.Response{Events: append(claudePrelude[:1:1], proxytest.AnthropicErrorEvent("overloaded_error", "Overloaded"))},
			good:  okClaudeStream(), wantTried: "a,a,b", wantOnce: "event: message_start", errType: ErrStreamErr,
		},
		{
			name: "claude rate limit error event first", path: "/v1/messages", body: claudeStreamBody,
			fault: proxytest.Response{Events: []proxytest.Event{proxytest.AnthropicErrorEvent("rate_limit_error", "slow down")}},
			good:  okClaudeStream(), wantTried: "a,b", wantOnce: "event: message_start", errType: ErrStreamErr,
		},
		{
			name: "openai chat role-only delta then death", path: "/v1/chat/completions", body: `{"model":"gpt-5","stream":true,"messages":[]}`,
			fault: proxytest.Response{Events: proxytest.ChatStream(1, 2, "x")[:1], CutAfter: 1}, good: proxytest.Response{Events: proxytest.ChatStream(1, 2, "x")},
			wantTried: "a,a,b", wantOnce: `"role":"assistant"`, errType: ErrStreamEnd,
		},
		{
			name: "openai responses created then death", path: "/v1/responses", body: `{"model":"gpt-5","stream":true,"input":"hi"}`,
			fault: proxytest.Response{Events: proxytest.ResponsesStream(1, 2, "x")[:2], CutAfter: 2}, good: proxytest.Response{Events: proxytest.ResponsesStream(1, 2, "x")},
			wantTried: "a,a,b", wantOnce: "event: response.created", errType: ErrStreamEnd,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := upstream(t, tc.fault), upstream(t, tc.good)
			ea, eb := ep(1, "a", a.URL), ep(2, "b", b.URL)
			if tc.path != "/v1/messages" {
				proto := ProtocolOpenAIChat
				if tc.path == "/v1/responses" {
					proto = ProtocolOpenAIResponses
				}
				ea.Protocol, eb.Protocol = proto, proto
			}
			h := newHarness(t, Config{Endpoints: []Endpoint{ea, eb}})
			got := h.post(tc.path, tc.body)
			rec := h.record()
			if got.status != 200 {
				t.Fatalf("status = %d: %s", got.status, got.body)
			}
			if n := strings.Count(got.body, tc.wantOnce); n != 1 {
				t.Errorf("%q appears %d times, want 1: %s", tc.wantOnce, n, got.body)
			}
			if tried := attemptsOn(rec); tried != tc.wantTried {
				t.Errorf("attempts = %q, want %q", tried, tc.wantTried)
			}
			if rec.Attempts[0].ErrorType != tc.errType || !rec.Attempts[0].BreakerCounted {
				t.Errorf("first attempt %+v, want counted %s", rec.Attempts[0], tc.errType)
			}
			if rec.StreamEnd != StreamComplete {
				t.Errorf("stream_end = %q, want complete", rec.StreamEnd)
			}
		})
	}
}

// TestStreamMidStreamFailure: after content there is no failover: the
// client gets a protocol-correct error event, the breaker a failure, the
// log a broken stream.
func TestStreamMidStreamFailure(t *testing.T) {
	tests := []struct {
		name, path, body string
		proto            Protocol
		events           []proxytest.Event
		wantTail         string
	}{
		{"claude", "/v1/messages", claudeStreamBody, ProtocolAnthropic, proxytest.AnthropicStream(1, 2, "partial", "more"),
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"ccmesh: the upstream stream"},
		{"openai chat", "/v1/chat/completions", `{"model":"gpt-5","stream":true}`, ProtocolOpenAIChat, proxytest.ChatStream(1, 2, "partial", "more"),
			"data: {\"error\":{\"message\":\"ccmesh: the upstream stream"},
		{"openai responses", "/v1/responses", `{"model":"gpt-5","stream":true}`, ProtocolOpenAIResponses, proxytest.ResponsesStream(1, 2, "partial", "more"),
			"event: error\ndata: {\"type\":\"error\",\"code\":\"upstream_error\",\"message\":\"ccmesh: the upstream stream"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := upstream(t, proxytest.Response{Events: tc.events, CutAfter: 4}), upstream(t, proxytest.Response{Events: tc.events})
			ea, eb := ep(1, "a", a.URL), ep(2, "b", b.URL)
			ea.Protocol, eb.Protocol = tc.proto, tc.proto
			h := newHarness(t, Config{Endpoints: []Endpoint{ea, eb}})
			got := h.post(tc.path, tc.body)
			rec := h.record()
			if got.status != 200 || !strings.Contains(got.body, "partial") {
				t.Fatalf("status %d body %s, want 200 with the partial content", got.status, got.body)
			}
			if i := strings.LastIndex(got.body, tc.wantTail[:12]); i < 0 || !strings.HasPrefix(got.body[i:], tc.wantTail) {
				t.Errorf("body does not end in the error event %q:\n%s", tc.wantTail, got.body)
			}
			if b.Count() != 0 {
				t.Errorf("failed over after content: b got %d requests", b.Count())
			}
			if rec.StreamEnd != StreamUpstreamError || rec.Attempts[0].Outcome != breaker.Failure {
				t.Errorf("stream_end %q outcome %q, want upstream_error failure", rec.StreamEnd, rec.Attempts[0].Outcome)
			}
			if c := h.breakers.Get(1).View(rec.Time).Counts.ConsecutiveFailures; c != 1 {
				t.Errorf("breaker failures = %d, want 1", c)
			}
		})
	}
}

// TestStreamUpstreamErrorEventAfterContent: an upstream's own error event
// mid-stream reaches the client as it is and marks the stream broken.
func TestStreamUpstreamErrorEventAfterContent(t *testing.T) {
	evs := proxytest.AnthropicStream(1, 2, "x")[:4]
	evs = append(evs, proxytest.AnthropicErrorEvent("overloaded_error", "Overloaded"))
	a := upstream(t, proxytest.Response{Events: evs})
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL)}})
	got := h.post("/v1/messages", claudeStreamBody)
	rec := h.record()
	if !strings.HasSuffix(got.body, proxytest.FormatEvent(evs[len(evs)-1])) {
		t.Errorf("body does not end with the upstream's error event: %s", got.body)
	}
	if rec.StreamEnd != StreamUpstreamError || rec.Attempts[0].Outcome != breaker.Failure {
		t.Errorf("stream_end %q outcome %q, want upstream_error failure", rec.StreamEnd, rec.Attempts[0].Outcome)
	}
}

// TestStreamClientGone: a client leaving mid-stream is neutral and logged.
func TestStreamClientGone(t *testing.T) {
	gate := make(chan struct{})
	a := upstream(t, proxytest.Response{Events: proxytest.AnthropicStream(1, 2, "a", "b"), Gate: gate})
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL)}})
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.front.URL+"/v1/messages", strings.NewReader(claudeStreamBody))
	go func() { gate <- struct{}{}; gate <- struct{}{} }()
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "event: message_start\n" {
		t.Fatalf("first line %q %v", line, err)
	}
	cancel()
	resp.Body.Close()
	rec := h.record()
	if !rec.ClientGone || rec.Status != StatusClientGone || rec.StreamEnd != StreamClientGone {
		t.Errorf("record client_gone %v status %d stream_end %q, want true 499 client_gone", rec.ClientGone, rec.Status, rec.StreamEnd)
	}
	if rec.Attempts[0].BreakerCounted {
		t.Error("a client leaving was counted against the endpoint")
	}
}
