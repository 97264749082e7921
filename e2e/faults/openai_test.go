package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// chatUpstream is a fake OpenAI Chat Completions server with one fault.
type chatUpstream struct {
	name  string
	url   string
	fault fault // healthy, status500, status429RetryAfter or cutMidStream
	hits  atomic.Int64
}

func newChatUpstream(t *testing.T, name string, f fault) *chatUpstream {
	t.Helper()
	u := &chatUpstream{name: name, fault: f}
	srv := httptest.NewServer(http.HandlerFunc(u.serve))
	u.url = srv.URL
	t.Cleanup(srv.Close)
	return u
}

func (u *chatUpstream) serve(w http.ResponseWriter, r *http.Request) {
	u.hits.Add(1)
	var req messageRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "fake: unreadable body", http.StatusBadRequest)
		return
	}
	switch u.fault {
	case status500:
		writeOpenAIError(w, http.StatusInternalServerError, "server_error", "The server had an error")
		return
	case status429RetryAfter:
		w.Header().Set("Retry-After", "30")
		writeOpenAIError(w, http.StatusTooManyRequests, "rate_limit_exceeded", "Rate limit reached for requests")
		return
	}
	text := answerText(u.name)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-%s","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":4,"total_tokens":11}}`, u.name, req.Model, text)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	chunk := func(delta string) {
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-%s\",\"object\":\"chat.completion.chunk\",\"model\":%q,\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", u.name, req.Model, delta)
		rc.Flush()
	}
	chunk(`{"role":"assistant","content":""}`)
	chunk(fmt.Sprintf(`{"content":%q}`, "hello "))
	if u.fault == cutMidStream {
		panic(http.ErrAbortHandler)
	}
	chunk(fmt.Sprintf(`{"content":%q}`, strings.TrimPrefix(text, "hello ")))
	io.WriteString(w, "data: [DONE]\n\n")
}

func writeOpenAIError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":%q,"param":null,"code":%q}}`, msg, code, code)
}

func sendChat(ctx context.Context, hc *http.Client, base, model string, stream bool) reply {
	body, _ := json.Marshal(map[string]any{"model": model, "stream": stream,
		"messages": []map[string]string{{"role": "user", "content": "say hello"}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return reply{err: fmt.Errorf("build request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer client-key")
	resp, err := hc.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	b, rerr := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b, readErr: rerr}
}

// testOpenAIChatFaults runs the OpenAI side of the matrix where it differs
// from Claude's: the error shapes, the [DONE]-less cut stream, and the
// OpenAI breaker profile (failure_threshold 4, docs/BEHAVIOUR.md#breaker-defaults).
func testOpenAIChatFaults(t *testing.T, bin string) {
	c := startCCMesh(t, bin)
	c.setTimeouts(t, firstByteTimeout, idleTimeout)
	cases := []struct {
		name     string
		fault    fault
		second   bool
		stream   bool
		requests int
		check    func(t *testing.T, r reply, aName string)
		aState   string
		aHits    int64
	}{
		{name: "5xx fails over to the second endpoint", fault: status500, second: true, requests: 1,
			check: wantChatAnswer("b"), aState: "closed", aHits: 2},
		{name: "429 with Retry-After and no second: OpenAI-shaped 429", fault: status429RetryAfter, requests: 1,
			check: wantOpenAIError(http.StatusTooManyRequests), aState: "open", aHits: 1},
		{name: "stream cut after content: an error chunk ends it", fault: cutMidStream, second: true, stream: true, requests: 1,
			check: wantChatErrorChunk, aState: "closed", aHits: 1},
		// Two requests of two failures reach the OpenAI threshold of 4.
		{name: "5xx burst opens the breaker after 4 failures", fault: status500, requests: 3,
			check: wantOpenAIError(http.StatusBadGateway), aState: "open", aHits: 4},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			model := fmt.Sprintf("gpt-e2e-%d", i)
			aName, bName := fmt.Sprintf("chat%d-a", i), fmt.Sprintf("chat%d-b", i)
			a := newChatUpstream(t, aName, tc.fault)
			c.addEndpoint(t, endpointSpec{Name: aName, BaseURL: a.url, Protocol: "openai-chat", APIKey: "sk-a", Models: []string{model}})
			if tc.second {
				b := newChatUpstream(t, bName, healthy)
				c.addEndpoint(t, endpointSpec{Name: bName, BaseURL: b.url, Protocol: "openai-chat", APIKey: "sk-b", Models: []string{model}})
			}
			var r reply
			for range tc.requests {
				r = sendChat(t.Context(), c.http, c.url(""), model, tc.stream)
			}
			if r.err != nil {
				t.Fatalf("no response: %v", r.err)
			}
			tc.check(t, r, aName)
			if h := c.health(t, aName); h.State != tc.aState {
				t.Errorf("A's breaker = %s/%s (%d failures), want %s", h.State, h.Reason, h.ConsecutiveFailures, tc.aState)
			}
			if got := a.hits.Load(); got != tc.aHits {
				t.Errorf("A got %d requests, want %d", got, tc.aHits)
			}
		})
	}
}

func wantChatAnswer(who string) func(t *testing.T, r reply, aName string) {
	return func(t *testing.T, r reply, aName string) {
		t.Helper()
		want := answerText(strings.TrimSuffix(aName, "-a") + "-" + who)
		var doc struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		if r.status != 200 || json.Unmarshal(r.body, &doc) != nil || len(doc.Choices) == 0 || doc.Choices[0].Message.Content != want {
			t.Errorf("status %d body %s, want 200 with %q", r.status, r.body, want)
		}
	}
}

func wantOpenAIError(status int) func(t *testing.T, r reply, aName string) {
	return func(t *testing.T, r reply, aName string) {
		t.Helper()
		if r.status != status {
			t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
		}
		_, _, msg, err := openAIError(r.body)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg, aName) {
			t.Errorf("error message %q does not name the endpoint tried (%s)", msg, aName)
		}
	}
}

// wantChatErrorChunk: content already reached the client, so no failover;
// the stream ends with an OpenAI-style error chunk and no [DONE] (docs/BEHAVIOUR.md#streaming).
func wantChatErrorChunk(t *testing.T, r reply, aName string) {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d, want the 200 that had already started; body %s", r.status, r.body)
	}
	evs := parseSSE(r.body)
	if len(evs) == 0 {
		t.Fatalf("empty stream")
	}
	last := evs[len(evs)-1].data
	if _, _, _, err := openAIError([]byte(last)); err != nil {
		t.Errorf("last chunk: %v; want {\"error\":{…}}", err)
	}
	if strings.Contains(string(r.body), "[DONE]") {
		t.Errorf("a broken stream must not end with [DONE]: %s", r.body)
	}
	if !strings.Contains(string(r.body), `"hello "`) || strings.Contains(string(r.body), "from "+strings.TrimSuffix(aName, "-a")+"-b") {
		t.Errorf("the client should have A's first delta and nothing from B: %s", r.body)
	}
}
