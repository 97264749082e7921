package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// TestCutBodyAbortsTheClient: a non-streamed 2xx whose body breaks after
// the status line must not reach the client as a complete answer, with or
// without a Content-Length; the row says what broke and the breaker hears
// a failure (docs/BEHAVIOUR.md#attempt-loop).
func TestCutBodyAbortsTheClient(t *testing.T) {
	full := proxytest.AnthropicMessage(strings.Repeat("long answer ", 400), 12, 34)
	for _, tc := range []struct {
		name string
		resp proxytest.Response
	}{
		{"chunked, no Content-Length", proxytest.Response{Body: full.Body, CutAfter: 1000}},
		{"Content-Length announced", proxytest.Response{Body: full.Body, CutAfter: 1000}.
			WithHeader("Content-Length", fmt.Sprint(len(full.Body)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := upstream(t, tc.resp)
			h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL)}})
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, h.front.URL+"/v1/messages", strings.NewReader(claudeBody))
			req.Header.Set("anthropic-version", "2023-06-01")
			// The cut may come before the buffered header reached the
			// client or after part of the body did; either way the client
			// must see an error, never a clean end.
			if resp, err := h.client.Do(req); err == nil {
				got, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				if rerr == nil {
					t.Errorf("client read %d bytes and a clean end; want the connection cut", len(got))
				}
			}
			rec := h.record()
			if rec.Error == "" || !strings.Contains(rec.Error, "broke") {
				t.Errorf("record error = %q, want the broken body named", rec.Error)
			}
			at := rec.Attempts[0]
			if at.Outcome != breaker.Failure || at.ErrorType != ErrStreamEnd {
				t.Errorf("attempt outcome %v error type %q, want a counted stream_ended_early failure", at.Outcome, at.ErrorType)
			}
		})
	}
}

// TestCompressedStreams: an upstream that compresses its event stream,
// although ccmesh asked for identity, still gets the prelude hold, the
// invisible failover and the stream-end and usage figures.
func TestCompressedStreams(t *testing.T) {
	good := proxytest.AnthropicStream(5, 6, "hel", "lo")
	for _, enc := range []string{"gzip", "br", "zstd"} {
		t.Run(enc+" prelude death fails over", func(t *testing.T) {
			a := upstream(t, proxytest.Response{Events: good, Encoding: enc, CutAfter: 2})
			b := upstream(t, proxytest.Response{Events: good, Encoding: enc})
			h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL), ep(2, "b", b.URL)}})
			got := h.post("/v1/messages", claudeStreamBody, "accept-encoding", "gzip, br, zstd")
			rec := h.record()
			if got.status != 200 || attemptsOn(rec) != "a,a,b" {
				t.Fatalf("status %d attempts %q, want 200 after a,a,b", got.status, attemptsOn(rec))
			}
			if got.header.Get("Content-Encoding") != "" {
				t.Errorf("client got Content-Encoding %q for a decoded stream", got.header.Get("Content-Encoding"))
			}
			if n := strings.Count(got.body, "event: message_start"); n != 1 {
				t.Errorf("message_start %d times in %q, want once", n, got.body)
			}
			if !strings.HasSuffix(got.body, proxytest.FormatEvent(good[len(good)-1])) {
				t.Errorf("stream did not end with message_stop: %q", got.body)
			}
			if rec.StreamEnd != StreamComplete || rec.TokensIn != 5 || rec.TokensOut != 6 {
				t.Errorf("stream_end %q tokens %d/%d, want complete 5/6", rec.StreamEnd, rec.TokensIn, rec.TokensOut)
			}
			if rec.Attempts[0].Outcome != breaker.Failure {
				t.Errorf("first attempt outcome %v, want failure: the stream died in its prelude", rec.Attempts[0].Outcome)
			}
			if ae := a.Requests()[0].Header.Get("Accept-Encoding"); ae != "identity" {
				t.Errorf("upstream was asked for %q, want identity on a streaming request", ae)
			}
		})
	}
}

// TestPreludeCap: opening events held before any content are bounded; an
// upstream that floods them fails its attempt and the next endpoint
// answers (docs/BEHAVIOUR.md#streaming). The bound counts the upstream's
// bytes: a translated ping is no bytes for the client, and a flood of them
// must not run until the first-byte timeout.
func TestPreludeCap(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	flood := func(open []proxytest.Event, ping func(pad string) string, name string, rest []proxytest.Event) []proxytest.Event {
		evs := append([]proxytest.Event(nil), open...)
		for range 8 {
			evs = append(evs, proxytest.Event{Name: name, Data: ping(big)})
		}
		return append(evs, rest...)
	}
	claude := proxytest.AnthropicStream(1, 1, "late")
	claudeFlood := flood(claude[:1], func(p string) string { return `{"type":"ping","pad":"` + p + `"}` }, "ping", claude[1:])
	chat := proxytest.ChatStream(1, 1, "late")
	chatFlood := flood(chat[:1], func(p string) string {
		return `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"}}],"pad":"` + p + `"}`
	}, "", chat[1:])
	resp := proxytest.ResponsesStream(1, 1, "late")
	respFlood := flood(resp[:2], func(p string) string {
		return `{"type":"response.in_progress","response":{"id":"resp_fake","status":"in_progress"},"pad":"` + p + `"}`
	}, "response.in_progress", resp[2:])
	oneHuge := []proxytest.Event{{Name: "ping", Data: `{"type":"ping","pad":"` + strings.Repeat("y", 2<<20) + `"}`}}
	for _, tc := range []struct {
		name             string
		client, upstream Protocol
		events, ok       []proxytest.Event
	}{
		{"many pings", ProtocolAnthropic, ProtocolAnthropic, claudeFlood, claude},
		{"one huge ping", ProtocolAnthropic, ProtocolAnthropic, oneHuge, claude},
		{"many pings translated for chat", ProtocolOpenAIChat, ProtocolAnthropic, claudeFlood, claude},
		{"many role chunks translated for anthropic", ProtocolAnthropic, ProtocolOpenAIChat, chatFlood, chat},
		{"many in_progress translated for chat", ProtocolOpenAIChat, ProtocolOpenAIResponses, respFlood, resp},
		{"many in_progress translated for anthropic", ProtocolAnthropic, ProtocolOpenAIResponses, respFlood, resp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := upstream(t, proxytest.Response{Events: tc.events})
			b := upstream(t, proxytest.Response{Events: tc.ok})
			ea, eb := ep(1, "a", a.URL), ep(2, "b", b.URL)
			ea.Protocol, eb.Protocol = tc.upstream, tc.upstream
			ea.Models, eb.Models = []string{"claude-*"}, []string{"claude-*"}
			h := newHarness(t, Config{Endpoints: []Endpoint{ea, eb}})
			side := framingSides[tc.client]
			got := h.post(side.path, strings.Replace(side.req(true), "m-1", "claude-x", 1))
			rec := h.record()
			if got.status != 200 || attemptsOn(rec) != "a,b" {
				t.Fatalf("status %d attempts %q (%s), want 200 after a,b", got.status, attemptsOn(rec), rec.Error)
			}
			if at := rec.Attempts[0]; at.ErrorType != ErrPreludeTooLarge || at.Outcome != breaker.Failure {
				t.Errorf("first attempt %q %v (%s), want a prelude_too_large failure", at.ErrorType, at.Outcome, at.Message)
			}
			if strings.Contains(got.body, "pad") {
				t.Error("a held ping from the failed attempt reached the client")
			}
		})
	}
}

// TestCountTokensEstimate: any non-2xx on count_tokens is answered with a
// local estimate and counts nothing against the endpoint's breaker.
func TestCountTokensEstimate(t *testing.T) {
	body := `{"model":"claude-sonnet-4-5","system":"You are terse.","messages":[{"role":"user","content":"` +
		strings.Repeat("hello world ", 100) + `"},{"role":"user","content":[{"type":"text","text":"你好世界"}]}],` +
		`"tools":[{"name":"Read","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}]}`
	for _, status := range []int{404, 400, 500, 429} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			a := upstream(t, proxytest.AnthropicError(status, "not_found_error", "no such route"))
			b := upstream(t, okClaude())
			h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL), ep(2, "b", b.URL)}})
			got := h.post("/v1/messages/count_tokens?beta=true", body)
			rec := h.record()
			if got.status != 200 || got.header.Get("X-Ccmesh-Estimated") != "true" {
				t.Fatalf("status %d estimated %q: %s", got.status, got.header.Get("X-Ccmesh-Estimated"), got.body)
			}
			var n struct {
				InputTokens int64 `json:"input_tokens"`
			}
			if err := json.Unmarshal([]byte(got.body), &n); err != nil {
				t.Fatal(err)
			}
			// cl100k_base: "hello world " ×100 is 200 tokens; the system
			// line, the CJK text, the tool and the per-message and per-tool
			// overheads add about forty.
			if n.InputTokens < 230 || n.InputTokens > 260 {
				t.Errorf("estimate %d tokens, want 230–260", n.InputTokens)
			}
			if attemptsOn(rec) != "a" || rec.Attempts[0].BreakerCounted || b.Count() != 0 {
				t.Errorf("attempts %q counted %v, b calls %d; want one neutral attempt on a", attemptsOn(rec), rec.Attempts[0].BreakerCounted, b.Count())
			}
			if v := h.breakers.Get(1).View(time.Now()); v.Counts.ConsecutiveFailures != 0 || v.State != breaker.Closed {
				t.Errorf("breaker of a %v with %d failures, want untouched", v.State, v.Counts.ConsecutiveFailures)
			}
		})
	}
}

// TestEchoedKeyMasked: a key an upstream echoes in its error never reaches
// the client, the log or the failover message in full.
func TestEchoedKeyMasked(t *testing.T) {
	const key = "sk-ant-api03-SECRETSECRETSECRET-abcd"
	echo := func(status int) proxytest.Response {
		return proxytest.AnthropicError(status, "authentication_error", "Invalid API key provided: "+key)
	}
	keyed := func(id int64, name, url string) Endpoint {
		e := ep(id, name, url)
		e.APIKey = key
		return e
	}
	t.Run("passed-through error", func(t *testing.T) {
		a := upstream(t, echo(400))
		h := newHarness(t, Config{Endpoints: []Endpoint{keyed(1, "a", a.URL)}})
		got := h.post("/v1/messages", claudeBody)
		rec := h.record()
		if got.status != 400 || strings.Contains(got.body, key) || !strings.Contains(got.body, MaskKey(key)) {
			t.Errorf("status %d body %s: want the key masked as %s", got.status, got.body, MaskKey(key))
		}
		if strings.Contains(rec.Attempts[0].Message+rec.Attempts[0].BodyHead+rec.Error, key) {
			t.Error("the key is in the request log")
		}
	})
	t.Run("every endpoint failed", func(t *testing.T) {
		a := upstream(t, echo(401))
		h := newHarness(t, Config{Endpoints: []Endpoint{keyed(1, "a", a.URL)}})
		got := h.post("/v1/messages", claudeBody)
		rec := h.record()
		if strings.Contains(got.body, key) || strings.Contains(rec.Error+rec.Attempts[0].Message+rec.Attempts[0].BodyHead, key) {
			t.Errorf("the key leaked: body %s", got.body)
		}
	})
	t.Run("stream error event", func(t *testing.T) {
		ev := proxytest.AnthropicErrorEvent("api_error", "bad key "+key)
		a := upstream(t, proxytest.Response{Events: append(proxytest.AnthropicStream(1, 1, "partial")[:4], ev)})
		h := newHarness(t, Config{Endpoints: []Endpoint{keyed(1, "a", a.URL)}})
		got := h.post("/v1/messages", claudeStreamBody)
		rec := h.record()
		if strings.Contains(got.body, key) || strings.Contains(rec.Error, key) {
			t.Errorf("the key leaked: body %s error %s", got.body, rec.Error)
		}
	})
}

func TestMaskKey(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"", ""},
		{"abc", "…"},
		{"1234567", "…"},
		{"12345678", "…5678"},
		{"sk-1234567890123", "…0123"},
		{"sk-ant-api03-0123456789", "sk-…6789"},
	} {
		if got := MaskKey(tc.key); got != tc.want {
			t.Errorf("MaskKey(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}
