package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// Usage blocks as the APIs and providers send them (their documented
// shapes, with cache fields), normalised to one meaning.
func TestUsageNormalised(t *testing.T) {
	for _, c := range []struct {
		name  string
		proto Protocol
		event bool
		data  string
		want  Usage
	}{
		{"anthropic message", ProtocolAnthropic, false,
			`{"id":"msg_1","usage":{"input_tokens":21,"cache_creation_input_tokens":188086,"cache_read_input_tokens":4000,"output_tokens":393}}`,
			Usage{Input: 21, CacheWrite: 188086, CacheRead: 4000, Output: 393}},
		{"anthropic message_start", ProtocolAnthropic, true,
			`{"type":"message_start","message":{"id":"m","usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":30000,"output_tokens":2}}}`,
			Usage{Input: 472, CacheRead: 30000, Output: 2}},
		{"openai chat with cached and reasoning", ProtocolOpenAIChat, false,
			`{"usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920},"completion_tokens_details":{"reasoning_tokens":128}}}`,
			Usage{Input: 86, CacheRead: 1920, Output: 300, Reasoning: 128}},
		{"deepseek cache hit", ProtocolOpenAIChat, true,
			`{"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":20,"prompt_cache_hit_tokens":896,"prompt_cache_miss_tokens":104}}`,
			Usage{Input: 104, CacheRead: 896, Output: 20}},
		{"moonshot cached_tokens", ProtocolOpenAIChat, false,
			`{"usage":{"prompt_tokens":500,"completion_tokens":9,"cached_tokens":400}}`,
			Usage{Input: 100, CacheRead: 400, Output: 9}},
		{"responses completed", ProtocolOpenAIResponses, true,
			`{"type":"response.completed","response":{"id":"r","usage":{"input_tokens":3000,"input_tokens_details":{"cached_tokens":2048},"output_tokens":700,"output_tokens_details":{"reasoning_tokens":512},"total_tokens":3700}}}`,
			Usage{Input: 952, CacheRead: 2048, Output: 700, Reasoning: 512}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got Usage
			var ok bool
			if c.event {
				got, ok = usageOfEvent(c.proto, []byte(c.data))
			} else {
				got, ok = usageOfBody(c.proto, []byte(c.data))
			}
			if !ok || got != c.want {
				t.Errorf("got %+v (found %v), want %+v", got, ok, c.want)
			}
			if got.PromptTotal() != c.want.Input+c.want.CacheRead+c.want.CacheWrite {
				t.Errorf("PromptTotal %d", got.PromptTotal())
			}
		})
	}
	if _, ok := usageOfEvent(ProtocolAnthropic, []byte(`{"type":"ping"}`)); ok {
		t.Error("an event without usage reported some")
	}
}

// Anthropic reports a stream's usage in two parts; the final output count
// wins and the input from the start stays.
func TestUsageMergesStreamReports(t *testing.T) {
	var m meter
	m.add(usageOfEvent(ProtocolAnthropic, []byte(`{"type":"message_start","message":{"usage":{"input_tokens":12,"cache_read_input_tokens":500,"output_tokens":1}}}`)))
	m.add(usageOfEvent(ProtocolAnthropic, []byte(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":34}}`)))
	if want := (Usage{Input: 12, CacheRead: 500, Output: 34}); m.usage != want || !m.seen {
		t.Errorf("merged %+v, want %+v", m.usage, want)
	}
}

// The log row carries each answered attempt's usage and their sum; a
// translated attempt reports its upstream's usage in one meaning.
func TestUsageRecorded(t *testing.T) {
	up := upstream(t, proxytest.Response{Events: proxytest.ChatStream(9, 4, "hel", "lo")})
	e := chatEp(1, "chat", up.URL)
	e.Models = []string{"claude-*"}
	h := newHarness(t, Config{Endpoints: []Endpoint{e}})
	if r := h.post("/v1/messages", claudeStreamBody); r.status != http.StatusOK {
		t.Fatalf("status %d", r.status)
	}
	rec := h.record()
	want := Usage{Input: 9, Output: 4}
	if u := rec.Attempts[0].Usage; u == nil || *u != want || rec.Usage == nil || *rec.Usage != want {
		t.Errorf("attempt usage %+v, row %+v, want %+v", rec.Attempts[0].Usage, rec.Usage, want)
	}
	if rec.TokensIn != 9 || rec.TokensOut != 4 {
		t.Errorf("tokens %d/%d", rec.TokensIn, rec.TokensOut)
	}
}

// A Chat stream whose client did not ask for usage reports none; the
// attempt gets an estimate from the request and the answer's text.
func TestUsageEstimatedWithoutReport(t *testing.T) {
	evs := proxytest.ChatStream(0, 0, "Hello", " there, how are you today?")
	// No usage chunk: the client did not ask for one.
	evs = append(evs[:len(evs)-2], evs[len(evs)-1])
	up := upstream(t, proxytest.Response{Events: evs})
	h := newHarness(t, Config{Endpoints: []Endpoint{chatEp(1, "chat", up.URL)}})
	body := `{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("word ", 50) + `"}]}`
	if r := h.post("/v1/chat/completions", body); r.status != http.StatusOK {
		t.Fatalf("status %d", r.status)
	}
	u := h.record().Attempts[0].Usage
	// cl100k: "word " ×50 is 51 tokens (the last space is one of its
	// own) plus 4 for the message; "Hello there, how are you today?" is 8.
	if u == nil || !u.Estimated || u.Input != 55 || u.Output != 8 {
		t.Errorf("usage %+v, want an estimate of 55 in, 8 out", u)
	}
	// A failed attempt that reported nothing has no usage.
	bad := upstream(t, proxytest.OpenAIError(500, "server_error", "x", "boom"))
	h.srv.Update(Config{Endpoints: []Endpoint{chatEp(1, "bad", bad.URL), chatEp(2, "chat", up.URL)}, RetryDelay: 1})
	h.post("/v1/chat/completions", body)
	rec := h.record()
	if rec.Attempts[0].Usage != nil || rec.Attempts[2].Usage == nil {
		t.Errorf("usage on attempts: %+v / %+v", rec.Attempts[0].Usage, rec.Attempts[2].Usage)
	}
}
