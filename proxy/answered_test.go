package proxy

import (
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

func TestSameModel(t *testing.T) {
	tests := []struct {
		forwarded, answered string
		same                bool
	}{
		{"claude-sonnet-4-5", "claude-sonnet-4-5", true},
		{"claude-sonnet-4-5", "claude-sonnet-4-5-20250929", true},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5", true},
		{"claude-sonnet-4-5", "claude-sonnet-4-5@20250929", true},
		{"claude-sonnet-4-5", "anthropic/claude-sonnet-4.5", true},
		{"gpt-4o", "gpt-4o-2024-08-06", true},
		{"deepseek-chat", "deepseek-chat", true},
		{"kimi-k2.6", "kimi-k2-6", true},
		{"gemini-2.5-flash", "gemini-2.5-flash-preview", true},
		{"claude-sonnet-4-5", "", true}, // the answer names none
		{"claude-sonnet-4-5", "claude-haiku-4-5-20251001", false},
		{"claude-opus-4-8", "claude-opus-4-5", false},
		{"gpt-5.4", "gpt-5.4-mini", false},
		{"glm-5.1", "glm-4.5-air", false},
		{"claude-sonnet-4-5", "deepseek-v4-flash", false},
	}
	for _, tc := range tests {
		if got := sameModel(tc.forwarded, tc.answered); got != tc.same {
			t.Errorf("sameModel(%q, %q) = %v, want %v", tc.forwarded, tc.answered, got, tc.same)
		}
	}
}

// The log names the model an answer came from when it is another than the
// one forwarded, streamed or not, and nothing when only a date differs.
func TestModelAnsweredRecorded(t *testing.T) {
	body := func(model string) string {
		return `{"id":"m","type":"message","role":"assistant","model":"` + model + `","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`
	}
	stream := func(model string) []proxytest.Event {
		evs := proxytest.AnthropicStream(1, 1, "hi")
		evs[0].Data = strings.Replace(evs[0].Data, `"model":"claude-fake"`, `"model":"`+model+`"`, 1)
		return evs
	}
	tests := []struct {
		name string
		resp proxytest.Response
		req  string
		want string
	}{
		{"another model", proxytest.Response{Body: body("claude-haiku-4-5-20251001")}, claudeBody, "claude-haiku-4-5-20251001"},
		{"the same with a date", proxytest.Response{Body: body("claude-sonnet-4-5-20250929")}, claudeBody, ""},
		{"another model, streamed", proxytest.Response{Events: stream("glm-4.5-air")}, claudeStreamBody, "glm-4.5-air"},
		{"the same, streamed", proxytest.Response{Events: stream("claude-sonnet-4-5")}, claudeStreamBody, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := upstream(t, tc.resp)
			h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "relay", up.URL)}})
			if r := h.post("/v1/messages", tc.req); r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			rec := h.record()
			if rec.ModelAnswered != tc.want || rec.Attempts[0].ModelAnswered != tc.want {
				t.Errorf("record %q, attempt %q; want %q", rec.ModelAnswered, rec.Attempts[0].ModelAnswered, tc.want)
			}
		})
	}
}

// An endpoint set to fail answers from another model fails such an
// answer — passed through or translated, streamed or not — before the
// client sees any of it, and the next endpoint answers.
func TestModelMismatchFails(t *testing.T) {
	claudeJSON := `{"id":"m","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":"wrong"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`
	wrongStream := proxytest.AnthropicStream(1, 1, "wrong")
	wrongStream[0].Data = strings.Replace(wrongStream[0].Data, `"model":"claude-fake"`, `"model":"claude-haiku-4-5"`, 1)
	tests := []struct {
		name, path, body string
		wrong            proxytest.Response
	}{
		{"passed through", "/v1/messages", claudeBody, proxytest.Response{Body: claudeJSON}},
		{"passed through, streamed", "/v1/messages", claudeStreamBody, proxytest.Response{Events: wrongStream}},
		{"translated", "/v1/chat/completions", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`, proxytest.Response{Body: claudeJSON}},
		{"translated, streamed", "/v1/chat/completions", `{"model":"claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":"hi"}]}`, proxytest.Response{Events: wrongStream}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wrong := upstream(t, tc.wrong)
			right := upstream(t, proxytest.AnthropicMessage("right", 1, 1))
			a, b := ep(1, "wrong", wrong.URL), ep(2, "right", right.URL)
			a.OnModelMismatch, a.Models, b.Models = MismatchFail, []string{"claude-*"}, []string{"claude-*"}
			b.Protocol = ProtocolAnthropic
			h := newHarness(t, Config{Endpoints: []Endpoint{a, b}, Strategy: StrategyPriority})
			r := h.post(tc.path, tc.body)
			if r.status != 200 || strings.Contains(r.body, "wrong") || !strings.Contains(r.body, "right") {
				t.Fatalf("got %d %s", r.status, r.body)
			}
			rec := h.record()
			if got := attemptsOn(rec); len(rec.Attempts) != 2 || rec.Attempts[0].ErrorType != ErrModelMismatch || !rec.Attempts[0].BreakerCounted {
				t.Errorf("attempts %s: %+v", got, rec.Attempts[0])
			}
			if !strings.Contains(rec.Attempts[0].Message, "answered by claude-haiku-4-5, not claude-sonnet-4-5") {
				t.Errorf("message %q", rec.Attempts[0].Message)
			}
		})
	}
}
