package proxy

import (
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

const chatPlainBody = `{"model":"claude-x","messages":[{"role":"user","content":"hi"}]}`

// A translated answer is decoded up to maxTranslatedAnswer (never past
// max_body_bytes): a small compressed body that stands for a huge one
// fails its attempt as the endpoint's fault and the next endpoint answers
// (docs/BEHAVIOUR.md#translation).
func TestTranslatedAnswerBound(t *testing.T) {
	huge := proxytest.AnthropicMessage(strings.Repeat("a", maxTranslatedAnswer+1), 1, 1).Body
	fits := proxytest.AnthropicMessage(strings.Repeat("b", maxTranslatedAnswer-1<<10), 1, 1).Body
	for _, c := range []struct {
		name     string
		answer   proxytest.Response
		maxBody  int64
		wantMsg  string // of the first attempt; "" when it answers
		wantText string
	}{
		{name: "brotli bomb", answer: proxytest.Response{Body: huge, Encoding: "br"}, wantMsg: "too large to translate"},
		{name: "gzip bomb", answer: proxytest.Response{Body: huge, Encoding: "gzip"}, wantMsg: "too large to translate"},
		{name: "zstd bomb", answer: proxytest.Response{Body: huge, Encoding: "zstd"}, wantMsg: "too large to translate"},
		{name: "identity", answer: proxytest.Response{Body: huge}, wantMsg: "too large to translate"},
		{name: "past max_body_bytes", answer: proxytest.AnthropicMessage(strings.Repeat("c", 70<<10), 1, 1), maxBody: 64 << 10,
			wantMsg: "more than 64 KiB decoded"},
		{name: "a coding that does not decode", answer: proxytest.Response{Body: "not brotli at all", Header: map[string][]string{"Content-Encoding": {"br"}}},
			wantMsg: "could not be decoded (br)"},
		{name: "just under the bound", answer: proxytest.Response{Body: fits, Encoding: "br"}, wantText: "bbbb"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := upstream(t, c.answer)
			b := upstream(t, proxytest.AnthropicMessage("from b", 1, 1))
			ea, eb := ep(1, "a", a.URL), ep(2, "b", b.URL)
			ea.Models, eb.Models = []string{"claude-*"}, []string{"claude-*"}
			h := newHarness(t, Config{Endpoints: []Endpoint{ea, eb}, MaxBody: c.maxBody})
			r := h.post("/v1/chat/completions", chatPlainBody)
			rec := h.record()
			if c.wantMsg == "" {
				if r.status != 200 || attemptsOn(rec) != "a" || !strings.Contains(r.body, c.wantText) {
					t.Fatalf("status %d attempts %q (%s), want a's answer", r.status, attemptsOn(rec), rec.Error)
				}
				return
			}
			if r.status != 200 || attemptsOn(rec) != "a,b" || !strings.Contains(r.body, "from b") {
				t.Fatalf("status %d attempts %q (%s), want b's answer after a", r.status, attemptsOn(rec), rec.Error)
			}
			at := rec.Attempts[0]
			if at.Outcome != breaker.Failure || !strings.Contains(at.Message, c.wantMsg) {
				t.Errorf("first attempt: %v %q, want a failure saying %q", at.Outcome, at.Message, c.wantMsg)
			}
		})
	}
}
