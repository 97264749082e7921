package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// These tests drive translation through the proxy over real loopback HTTP
// against fake upstreams that speak one protocol each; the codecs' own
// tests pin every mapping row (proxy/translate/*).

func respEp(id int64, name, url string) Endpoint {
	e := ep(id, name, url)
	e.Protocol = ProtocolOpenAIResponses
	return e
}

// sseEvents splits a client's SSE body into (event name, data) pairs; a
// data-only event has the name "".
func sseEvents(t *testing.T, body string) [][2]string {
	t.Helper()
	var out [][2]string
	for _, block := range strings.Split(strings.TrimSpace(body), "\n\n") {
		name, data := parseEvent([]byte(block))
		out = append(out, [2]string{name, string(data)})
	}
	return out
}

func eventNames(evs [][2]string) string {
	var names []string
	for _, e := range evs {
		names = append(names, e[0])
	}
	return strings.Join(names, ",")
}

// upstreamJSON decodes the body the fake received.
func upstreamJSON(t *testing.T, r proxytest.Request) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("upstream body is not JSON: %v\n%s", err, r.Body)
	}
	return m
}

// An endpoint of another protocol serves a client only for a model its
// models or model_map name (docs/BEHAVIOUR.md#candidates).
func TestTranslationNeedsANamedModel(t *testing.T) {
	up := upstream(t, proxytest.Response{Events: proxytest.ChatStream(5, 7, "hel", "lo")})
	open := chatEp(1, "open", up.URL)
	h := newHarness(t, Config{Endpoints: []Endpoint{open}})
	r := h.post("/v1/messages", claudeStreamBody)
	if r.status != http.StatusBadGateway || up.Count() != 0 || !strings.Contains(r.body, "only for models their models or model_map name") {
		t.Fatalf("a chat endpoint without models served a Claude request: %d %s", r.status, r.body)
	}
	h.record()

	// In the routable list for its models, the endpoint is left out for
	// a model it does not name, with the reason "protocol".
	named := open
	named.Models = []string{"gpt-*"}
	h.srv.Update(Config{Endpoints: []Endpoint{named}, RetryDelay: 1})
	if r := h.post("/v1/messages", claudeStreamBody); r.status != http.StatusBadGateway {
		t.Fatalf("status %d for a model the endpoint does not name", r.status)
	}
	if rec := h.record(); len(rec.Routing.Excluded) != 1 || rec.Routing.Excluded[0].Reason != ExcludedProtocol {
		t.Fatalf("exclusion = %+v, want one %q", rec.Routing.Excluded, ExcludedProtocol)
	}

	for _, named := range []Endpoint{
		func() Endpoint { e := open; e.Models = []string{"claude-*"}; return e }(),
		func() Endpoint { e := open; e.ModelMap = map[string]string{"claude-sonnet-*": "gpt-fake"}; return e }(),
	} {
		h.srv.Update(Config{Endpoints: []Endpoint{named}, RetryDelay: 1})
		r := h.post("/v1/messages", claudeStreamBody)
		if r.status != http.StatusOK {
			t.Fatalf("models %v map %v: status %d %s", named.Models, named.ModelMap, r.status, r.body)
		}
		rec := h.record()
		if got := rec.Attempts[0].Translation; got != "anthropic→openai-chat" {
			t.Errorf("attempt translation = %q", got)
		}
	}
	last := up.Requests()[up.Count()-1]
	if last.Path != "/v1/chat/completions" || last.RawQuery != "" {
		t.Errorf("translated request went to %s?%s", last.Path, last.RawQuery)
	}
	body := upstreamJSON(t, last)
	if body["model"] != "gpt-fake" {
		t.Errorf("model_map not applied before translation: model %v", body["model"])
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options = %v, want include_usage", body["stream_options"])
	}
	if last.Header.Get("Anthropic-Version") != "" || last.Header.Get("Authorization") != "Bearer key-open" {
		t.Errorf("headers: anthropic-version %q, authorization %q", last.Header.Get("Anthropic-Version"), last.Header.Get("Authorization"))
	}
}

// The fast queue is per protocol: fast Claude relays leave OpenAI clients
// every endpoint that can serve them (docs/BEHAVIOUR.md#routable-list).
func TestFastQueuePerProtocol(t *testing.T) {
	claude := upstream(t, okClaude())
	chat := upstream(t, proxytest.ChatCompletion("from chat", 1, 1))
	fast := ep(1, "fast-claude", claude.URL)
	fast.Fast = true
	h := newHarness(t, Config{Endpoints: []Endpoint{fast, chatEp(2, "chat", chat.URL)}})
	r := h.post("/v1/chat/completions", `{"model":"gpt-fake","messages":[{"role":"user","content":"hi"}]}`)
	if r.status != http.StatusOK || !strings.Contains(r.body, "from chat") {
		t.Fatalf("chat request with a Claude-only fast queue: %d %s", r.status, r.body)
	}
	if claude.Count() != 0 {
		t.Error("the Claude endpoint was tried for a chat request it does not name")
	}
}

// Claude Code streaming through a Chat-only upstream gets a Messages
// stream: blocks, one message_delta with the usage, message_stop.
func TestTranslatedStreamClaudeToChat(t *testing.T) {
	up := upstream(t, proxytest.Response{Events: proxytest.ChatStream(9, 4, "hel", "lo")})
	e := chatEp(1, "chat", up.URL)
	e.Models = []string{"claude-*"}
	h := newHarness(t, Config{Endpoints: []Endpoint{e}})
	r := h.post("/v1/messages?beta=true", claudeStreamBody)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d type %q: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	evs := sseEvents(t, r.body)
	want := "message_start,content_block_start,content_block_delta,content_block_delta,content_block_stop,message_delta,message_stop"
	if got := eventNames(evs); got != want {
		t.Fatalf("events %s\nwant   %s\n%s", got, want, r.body)
	}
	var delta struct {
		Delta struct {
			StopReason string `json:"stop_reason"`
		}
		Usage struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(evs[5][1]), &delta); err != nil {
		t.Fatal(err)
	}
	if delta.Delta.StopReason != "end_turn" || delta.Usage.InputTokens != 9 || delta.Usage.OutputTokens != 4 {
		t.Errorf("message_delta = %s", evs[5][1])
	}
	rec := h.record()
	if rec.StreamEnd != StreamComplete || rec.TokensIn != 9 || rec.TokensOut != 4 {
		t.Errorf("record: end %q tokens %d/%d", rec.StreamEnd, rec.TokensIn, rec.TokensOut)
	}
}

// A Chat client, not streaming, through an Anthropic-only upstream.
func TestTranslatedJSONChatToAnthropic(t *testing.T) {
	up := upstream(t, proxytest.AnthropicMessage("bonjour", 11, 3))
	e := ep(1, "claude", up.URL)
	e.ModelMap = map[string]string{"gpt-fake": "claude-sonnet-4-5"}
	h := newHarness(t, Config{Endpoints: []Endpoint{e}})
	r := h.post("/v1/chat/completions", `{"model":"gpt-fake","temperature":0,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`)
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var out struct {
		Object  string
		Model   string
		Choices []struct {
			Message      struct{ Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	if out.Object != "chat.completion" || out.Model != "gpt-fake" || len(out.Choices) != 1 ||
		out.Choices[0].Message.Content != "bonjour" || out.Choices[0].FinishReason != "stop" ||
		out.Usage.PromptTokens != 11 || out.Usage.CompletionTokens != 3 {
		t.Errorf("answer = %s", r.body)
	}
	sent := upstreamJSON(t, up.Requests()[0])
	if up.Requests()[0].Path != "/v1/messages" || sent["temperature"] != 0.0 || sent["max_tokens"] == nil {
		t.Errorf("upstream got %s %s", up.Requests()[0].Path, up.Requests()[0].Body)
	}
	if up.Requests()[0].Header.Get("Anthropic-Version") == "" || up.Requests()[0].Header.Get("X-Api-Key") != "key-claude" {
		t.Errorf("an anthropic endpoint needs anthropic-version and its key: %v", up.Requests()[0].Header)
	}
}

// A translated stream that dies before content fails over invisibly, to
// an endpoint of a third protocol; one that breaks after content ends with
// the client protocol's error event.
func TestTranslatedStreamFailover(t *testing.T) {
	dying := upstream(t, proxytest.Response{Events: proxytest.ChatStream(1, 1, "never"), CutAfter: 1})
	good := upstream(t, proxytest.Response{Events: proxytest.ResponsesStream(2, 2, "fine")})
	a, b := chatEp(1, "dying", dying.URL), respEp(2, "good", good.URL)
	a.Models, b.Models = []string{"claude-*"}, []string{"claude-*"}
	h := newHarness(t, Config{Endpoints: []Endpoint{a, b}})
	r := h.post("/v1/messages", claudeStreamBody)
	if r.status != http.StatusOK || !strings.Contains(r.body, `"fine"`) || strings.Contains(r.body, "never") {
		t.Fatalf("failover: %d %s", r.status, r.body)
	}
	rec := h.record()
	if attemptsOn(rec) != "dying,dying,good" || rec.Attempts[2].Translation != "anthropic→openai-responses" {
		t.Errorf("attempts %s, last translation %q", attemptsOn(rec), rec.Attempts[len(rec.Attempts)-1].Translation)
	}

	good.SetDefault(proxytest.Response{Events: proxytest.ResponsesStream(2, 2, "half", "more"), CutAfter: 4})
	h.srv.Update(Config{Endpoints: []Endpoint{b}, RetryDelay: 1})
	r = h.post("/v1/messages", claudeStreamBody)
	evs := sseEvents(t, r.body)
	last := evs[len(evs)-1]
	if last[0] != "error" || !strings.Contains(last[1], "overloaded_error") || !strings.Contains(r.body, `"half"`) {
		t.Fatalf("a broken translated stream must end with a Claude error event: %s", r.body)
	}
	if rec := h.record(); rec.StreamEnd != StreamUpstreamError {
		t.Errorf("stream end %q", rec.StreamEnd)
	}
}

// An upstream that ignores stream:true and answers JSON still gives a
// streaming client a stream; one that streams to a plain request gives
// JSON (docs/BEHAVIOUR.md#translation).
func TestStreamMismatchTurnedIntoWhatWasAsked(t *testing.T) {
	up := upstream(t, proxytest.AnthropicMessage("as json", 3, 2))
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", up.URL)}})
	r := h.post("/v1/messages", claudeStreamBody)
	if got := eventNames(sseEvents(t, r.body)); r.status != 200 || !strings.HasPrefix(got, "message_start,content_block_start,content_block_delta") || !strings.HasSuffix(got, "message_stop") {
		t.Fatalf("JSON to a stream request: %d %q\n%s", r.status, got, r.body)
	}
	up.SetDefault(okClaudeStream())
	r = h.post("/v1/messages", claudeBody)
	var msg struct {
		Type    string
		Content []struct{ Text string }
	}
	if err := json.Unmarshal([]byte(r.body), &msg); err != nil || msg.Type != "message" || len(msg.Content) != 1 || msg.Content[0].Text != "hello" {
		t.Fatalf("a stream to a plain request: %v %s", err, r.body)
	}
}

// count_tokens towards an endpoint of another protocol is answered with
// the local BPE estimate; nothing is sent upstream.
func TestCountTokensOnTranslatedEndpoint(t *testing.T) {
	up := upstream(t, proxytest.ChatCompletion("x", 1, 1))
	e := chatEp(1, "chat", up.URL)
	e.Models = []string{"claude-*"}
	h := newHarness(t, Config{Endpoints: []Endpoint{e}})
	r := h.post(countTokensPath, `{"model":"claude-sonnet-4-5","system":"You are a helpful assistant.","messages":[{"role":"user","content":"Hello, world! How are you today?"}]}`)
	if r.status != http.StatusOK || r.header.Get("X-Ccmesh-Estimated") != "true" || up.Count() != 0 {
		t.Fatalf("count_tokens: %d %v %s (upstream saw %d)", r.status, r.header, r.body, up.Count())
	}
	var n struct {
		InputTokens int64 `json:"input_tokens"`
	}
	_ = json.Unmarshal([]byte(r.body), &n)
	// cl100k: "You are a helpful assistant." is 6 tokens, the question 9,
	// plus 4 for the one message.
	if n.InputTokens != 19 {
		t.Errorf("estimate = %d, want 19", n.InputTokens)
	}
}

// An upstream error the loop returns reaches the client in the client's
// shape, naming the endpoint; a request the endpoint's protocol cannot
// carry moves on and ends in a 400 naming why.
func TestTranslatedErrors(t *testing.T) {
	up := upstream(t, proxytest.OpenAIError(400, "invalid_request_error", "bad_param", "temperature is too large"))
	e := chatEp(1, "chat", up.URL)
	e.Models = []string{"claude-*"}
	h := newHarness(t, Config{Endpoints: []Endpoint{e}})
	r := h.post("/v1/messages", claudeStreamBody)
	var ce claudeError
	if err := json.Unmarshal([]byte(r.body), &ce); err != nil || r.status != 400 || ce.Type != "error" ||
		ce.Error.Type != "invalid_request_error" || !strings.Contains(ce.Error.Message, "temperature is too large") || !strings.Contains(ce.Error.Message, "chat") {
		t.Fatalf("translated 400: %d %s", r.status, r.body)
	}
	h.record()

	h.srv.Update(Config{Endpoints: []Endpoint{func() Endpoint { e := chatEp(1, "chat", up.URL); e.Models = []string{"gpt-*"}; return e }()}, RetryDelay: 1})
	r = h.post("/v1/responses", `{"model":"gpt-x","previous_response_id":"resp_1","input":"go on"}`)
	if r.status != 400 || !strings.Contains(r.body, "previous_response_id") || up.Count() != 1 {
		t.Fatalf("previous_response_id towards chat: %d %s (upstream saw %d)", r.status, r.body, up.Count())
	}
	if rec := h.record(); rec.Attempts[0].ErrorType != ErrTranslation || rec.Attempts[0].BreakerCounted {
		t.Errorf("attempt = %+v", rec.Attempts[0])
	}
}

// An explicit endpoint of another protocol is translated, not refused.
func TestExplicitEndpointTranslated(t *testing.T) {
	up := upstream(t, proxytest.Response{Events: proxytest.ResponsesStream(1, 1, "pinned")})
	h := newHarness(t, Config{Endpoints: []Endpoint{respEp(1, "resp", up.URL)}})
	r := h.post("/v1/messages", strings.Replace(claudeStreamBody, "claude-sonnet-4-5", "@resp/gpt-x", 1))
	if r.status != 200 || !strings.Contains(r.body, "pinned") {
		t.Fatalf("explicit translated: %d %s", r.status, r.body)
	}
	if got := upstreamJSON(t, up.Requests()[0])["model"]; got != "gpt-x" {
		t.Errorf("model forwarded %v", got)
	}
}

// An Anthropic upstream that refuses a thinking block gets one more try
// without thinking, inside the same attempt (docs/BEHAVIOUR.md#translation).
func TestRetryWithoutThinking(t *testing.T) {
	up := upstream(t, okClaude())
	up.Push(proxytest.AnthropicError(400, "invalid_request_error", "messages.1.content.0: Invalid `signature` in `thinking` block"))
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", up.URL)}})
	body := `{"model":"claude-sonnet-4-5","max_tokens":2048,"messages":[` +
		`{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":""},{"type":"text","text":"hello"}]},` +
		`{"role":"user","content":"again"}]}`
	r := h.post("/v1/messages?beta=true", body)
	if r.status != http.StatusOK || up.Count() != 2 {
		t.Fatalf("status %d after %d upstream requests: %s", r.status, up.Count(), r.body)
	}
	second := up.Requests()[1]
	if strings.Contains(string(second.Body), `"thinking"`) || second.RawQuery != "beta=true" || second.Path != "/v1/messages" {
		t.Errorf("retry sent %s?%s %s", second.Path, second.RawQuery, second.Body)
	}
	rec := h.record()
	if len(rec.Attempts) != 1 || rec.Attempts[0].Adjusted != "strip_thinking" || rec.Attempts[0].Outcome.String() != "success" {
		t.Errorf("attempts = %+v", rec.Attempts)
	}
	// Without reasoning in the request the same 400 is the client's.
	up.Push(proxytest.AnthropicError(400, "invalid_request_error", "thinking is not supported"))
	if r := h.post("/v1/messages", claudeBody); r.status != 400 || up.Count() != 3 {
		t.Errorf("a 400 with nothing to strip: %d after %d requests", r.status, up.Count())
	}
}

// An upstream refusing a reasoning effort gets the next lower one.
func TestRetryStepsEffortDown(t *testing.T) {
	up := upstream(t, proxytest.ChatCompletion("ok", 1, 1))
	up.Push(proxytest.OpenAIError(400, "invalid_request_error", "unsupported_value", "Unsupported value: 'reasoning_effort' does not support 'high' with this model."))
	h := newHarness(t, Config{Endpoints: []Endpoint{chatEp(1, "c", up.URL)}})
	r := h.post("/v1/chat/completions", `{"model":"gpt-x","reasoning_effort":"high","messages":[{"role":"user","content":"hi"}]}`)
	if r.status != http.StatusOK || up.Count() != 2 {
		t.Fatalf("status %d after %d requests: %s", r.status, up.Count(), r.body)
	}
	if got := upstreamJSON(t, up.Requests()[1])["reasoning_effort"]; got != "medium" {
		t.Errorf("retry effort = %v, want medium", got)
	}
	if rec := h.record(); rec.Attempts[0].Adjusted != "step_down_effort" {
		t.Errorf("attempt = %+v", rec.Attempts[0])
	}
}

// Claude Code asks for up to 128000 output tokens; a provider that allows
// fewer gets the request again without a limit.
func TestRetryWithoutMaxTokens(t *testing.T) {
	up := upstream(t, proxytest.Response{Events: proxytest.ChatStream(1, 1, "ok")})
	up.Push(proxytest.OpenAIError(400, "invalid_request_error", "invalid_request_error", "Invalid max_tokens value, the valid range of max_tokens is [1, 8192]"))
	e := chatEp(1, "deepseek", up.URL)
	e.Models = []string{"claude-*"}
	h := newHarness(t, Config{Endpoints: []Endpoint{e}})
	r := h.post("/v1/messages", claudeStreamBody)
	if r.status != http.StatusOK || up.Count() != 2 {
		t.Fatalf("status %d after %d requests: %s", r.status, up.Count(), r.body)
	}
	first, second := upstreamJSON(t, up.Requests()[0]), upstreamJSON(t, up.Requests()[1])
	if first["max_tokens"] != 1024.0 || second["max_tokens"] != nil {
		t.Errorf("max_tokens %v then %v", first["max_tokens"], second["max_tokens"])
	}
	if rec := h.record(); rec.Attempts[0].Adjusted != "lower_max_tokens" {
		t.Errorf("attempt = %+v", rec.Attempts[0])
	}
}

// A multi-byte character split across two network writes, and a <think>
// tag split across two chunks, reach a translated client whole.
func TestTranslatedStreamSplitsMidCharacter(t *testing.T) {
	chunk := func(content string) string {
		b, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": "m",
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": content}, "finish_reason": nil}}})
		return "data: " + string(b) + "\n\n"
	}
	stream := chunk("<thi") + chunk("nk>想一想</th") + chunk("ink>你好，世界") +
		`data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":5}}` + "\n\n" +
		"data: [DONE]\n\n"
	cut := strings.Index(stream, "世") + 1 // inside the character's three bytes
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, stream[:cut])
		w.(http.Flusher).Flush() // the first half leaves as its own chunk
		_, _ = io.WriteString(w, stream[cut:])
	}))
	t.Cleanup(up.Close)
	e := chatEp(1, "chat", up.URL)
	e.Models = []string{"claude-*"}
	h := newHarness(t, Config{Endpoints: []Endpoint{e}})
	r := h.post("/v1/messages", claudeStreamBody)
	var text, thinking strings.Builder
	for _, ev := range sseEvents(t, r.body) {
		var d struct {
			Delta struct{ Type, Text, Thinking string }
		}
		_ = json.Unmarshal([]byte(ev[1]), &d)
		text.WriteString(d.Delta.Text)
		thinking.WriteString(d.Delta.Thinking)
	}
	if thinking.String() != "想一想" || text.String() != "你好，世界" {
		t.Errorf("thinking %q text %q\n%s", thinking.String(), text.String(), r.body)
	}
	if rec := h.record(); rec.StreamEnd != StreamComplete {
		t.Errorf("stream end %q", rec.StreamEnd)
	}
}
