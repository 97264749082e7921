package proxy

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/gemini"
)

// capturedGemini is the body of a request Gemini CLI sent
// (proxy/translate/testdata/captured/gemini-cli).
func capturedGemini(t *testing.T, file string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("translate", "testdata", "captured", "gemini-cli", file))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return string(c.Body)
}

func geminiEp(id int64, name, url string) Endpoint {
	e := ep(id, name, url)
	e.Protocol = gemini.Protocol
	return e
}

// geminiAnswer reads a Gemini client's answer in the form its path asked
// for: one JSON body, SSE chunks, or the JSON array of chunks.
func geminiAnswer(t *testing.T, r reply, form string) *conv.Response {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	ctype := r.header.Get("Content-Type")
	var chunks [][]byte
	switch form {
	case "plain":
		resp, err := gemini.Codec.DecodeResponse([]byte(r.body))
		if err != nil || !strings.HasPrefix(ctype, "application/json") {
			t.Fatalf("plain answer (%s): %v\n%s", ctype, err, r.body)
		}
		return resp
	case "sse":
		if !strings.HasPrefix(ctype, "text/event-stream") {
			t.Fatalf("got Content-Type %q, want text/event-stream", ctype)
		}
		sr := newSSEReader(strings.NewReader(r.body))
		for {
			raw, err := sr.next()
			if _, data := parseEvent(raw); len(data) > 0 {
				chunks = append(chunks, append([]byte(nil), data...)) // the reader reuses its buffer
			}
			if err != nil {
				break
			}
		}
	case "array":
		if !strings.HasPrefix(ctype, "application/json") {
			t.Fatalf("got Content-Type %q, want application/json", ctype)
		}
		var arr []json.RawMessage
		if err := json.Unmarshal([]byte(r.body), &arr); err != nil {
			t.Fatalf("array answer: %v\n%s", err, r.body)
		}
		for _, c := range arr {
			chunks = append(chunks, c)
		}
	}
	dec, c := gemini.Codec.StreamDecoder(), conv.NewCollect()
	for _, ch := range chunks {
		if err := dec.Decode("", ch, c.Add); err != nil {
			t.Fatalf("chunk %s: %v", ch, err)
		}
	}
	dec.End(c.Add)
	resp, _ := c.Response()
	return resp
}

func answerText(r *conv.Response) string {
	var sb strings.Builder
	for _, m := range r.Parts {
		if m.Kind == conv.PartText {
			sb.WriteString(m.Text)
		}
	}
	return sb.String()
}

// geminiPath is the path of a Gemini client's request in form.
func geminiPath(model, form string) string {
	switch form {
	case "sse":
		return "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
	case "array":
		return "/v1beta/models/" + model + ":streamGenerateContent"
	}
	return "/v1beta/models/" + model + ":generateContent"
}

// A Gemini client (Gemini CLI's captured turn) is answered by an
// Anthropic-only and a Chat-only upstream, in each form it may ask for.
func TestGeminiClientToOtherProtocols(t *testing.T) {
	body := capturedGemini(t, "text-02.json")
	for _, up := range []struct {
		name         string
		proto        Protocol
		plain, sseUp proxytest.Response
	}{
		{"anthropic", ProtocolAnthropic, proxytest.AnthropicMessage("hello", 12, 34), proxytest.Response{Events: proxytest.AnthropicStream(12, 34, "hel", "lo")}},
		{"chat", ProtocolOpenAIChat, proxytest.ChatCompletion("hello", 12, 34), proxytest.Response{Events: proxytest.ChatStream(12, 34, "hel", "lo")}},
	} {
		for _, form := range []string{"plain", "sse", "array"} {
			t.Run(up.name+"/"+form, func(t *testing.T) {
				def := up.plain
				if form != "plain" {
					def = up.sseUp
				}
				u := upstream(t, def)
				e := ep(1, up.name, u.URL)
				e.Protocol, e.Models = up.proto, []string{"gemini-3.8-flash"}
				h := newHarness(t, Config{Endpoints: []Endpoint{e}})
				got := geminiAnswer(t, h.post(geminiPath("gemini-3.8-flash", form), body), form)
				if txt := answerText(got); txt != "hello" {
					t.Errorf("text %q, want %q", txt, "hello")
				}
				reqs := u.Requests()
				if len(reqs) != 1 {
					t.Fatalf("%d upstream requests, want 1", len(reqs))
				}
				if want, _ := up.proto.Spec().Upstream("", false); reqs[0].Path != want {
					t.Errorf("upstream path %q, want %q", reqs[0].Path, want)
				}
				if !strings.Contains(string(reqs[0].Body), `"model":"gemini-3.8-flash"`) {
					t.Errorf("upstream body names no model from the path: %.300s", reqs[0].Body)
				}
			})
		}
	}
}

// Gemini to Gemini passes through, in the form the client asked for.
func TestGeminiPassThrough(t *testing.T) {
	body := capturedGemini(t, "text-02.json")
	for _, form := range []string{"plain", "sse", "array"} {
		t.Run(form, func(t *testing.T) {
			g := proxytest.NewGemini(t, "key-g")
			g.SetModels("gemini-3.8-flash")
			h := newHarness(t, Config{Endpoints: []Endpoint{geminiEp(1, "g", g.URL)}})
			got := geminiAnswer(t, h.post(geminiPath("gemini-3.8-flash", form), body), form)
			if txt := answerText(got); txt != "Hello from the fake Gemini." {
				t.Errorf("text %q", txt)
			}
			if n := g.Count(); n != 1 {
				t.Errorf("%d upstream requests, want 1", n)
			}
		})
	}
}

// The client token a Gemini client sends as x-goog-api-key or ?key= lets
// it in, and never reaches an upstream of any protocol.
func TestGeminiClientTokenNeverUpstream(t *testing.T) {
	const token = "ccmesh-client-token-0123456789"
	body := capturedGemini(t, "text-02.json")
	for _, c := range []struct {
		name, query string
		hdr         []string
	}{
		{"header", "", []string{"x-goog-api-key", token}},
		{"query", "?key=" + token, nil},
	} {
		for _, upProto := range []Protocol{gemini.Protocol, ProtocolAnthropic} {
			t.Run(c.name+"/"+string(upProto), func(t *testing.T) {
				var reqs func() []proxytest.Request
				var e Endpoint
				if upProto == gemini.Protocol {
					g := proxytest.NewGemini(t, "key-up")
					g.SetModels("gemini-3.8-flash")
					reqs, e = g.Requests, geminiEp(1, "up", g.URL)
				} else {
					u := upstream(t, okClaude())
					reqs, e = u.Requests, ep(1, "up", u.URL)
					e.Models = []string{"gemini-3.8-flash"}
				}
				h := newHarness(t, Config{Endpoints: []Endpoint{e}, ClientToken: token})
				if r := h.post("/v1beta/models/gemini-3.8-flash:generateContent", body); r.status != http.StatusUnauthorized ||
					!strings.Contains(r.body, `"status":"UNAUTHENTICATED"`) || !strings.Contains(r.body, "x-goog-api-key") {
					t.Fatalf("without the token: %d %s, want 401 in Gemini's shape naming x-goog-api-key", r.status, r.body)
				}
				r := h.post("/v1beta/models/gemini-3.8-flash:generateContent"+c.query, body, c.hdr...)
				if r.status != http.StatusOK {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				for _, req := range reqs() {
					if strings.Contains(req.RawQuery, token) {
						t.Errorf("the token went upstream in the query %q", req.RawQuery)
					}
					for k, vs := range req.Header {
						for _, v := range vs {
							if strings.Contains(v, token) {
								t.Errorf("the token went upstream in %s", k)
							}
						}
					}
				}
			})
		}
	}
}

// A Gemini upstream's errors are classified by their body: a rate limit
// waits RetryInfo's delay, a spent quota is QuotaExhausted, a refused key
// is the key's failure, and each moves on to the next endpoint.
func TestGeminiUpstreamErrors(t *testing.T) {
	for _, c := range []struct {
		name      string
		fault     proxytest.Response
		wantType  ErrorType
		wantRetry time.Duration
		keyFault  bool
	}{
		{"rate limited", proxytest.GeminiRateLimited("30s"), ErrRateLimit, 30 * time.Second, false},
		{"quota", proxytest.GeminiQuotaExhausted("gemini-2.5-flash"), ErrQuota, 0, true},
		{"key invalid", proxytest.GeminiKeyInvalid(), ErrStatus, 0, true},
		{"permission denied", proxytest.GeminiPermissionDenied(), ErrStatus, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := proxytest.NewGemini(t, "")
			g.Push(proxytest.GeminiFault(c.fault))
			backup := upstream(t, okClaude())
			b := ep(2, "b", backup.URL)
			b.Models = []string{"gemini-2.5-flash"}
			e := geminiEp(1, "g", g.URL)
			e.Models = b.Models
			h := newHarness(t, Config{Endpoints: []Endpoint{e, b}})
			r := h.post("/v1/messages", `{"model":"gemini-2.5-flash","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`)
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			rec := h.record()
			if len(rec.Attempts) < 2 {
				t.Fatalf("attempts %s, want the Gemini one then the backup", attemptsOn(rec))
			}
			a := rec.Attempts[0]
			if a.ErrorType != c.wantType {
				t.Errorf("error type %q, want %q", a.ErrorType, c.wantType)
			}
			v := classifyGemini(t, c.fault)
			if v.retryAfter != c.wantRetry {
				t.Errorf("retry after %v, want %v", v.retryAfter, c.wantRetry)
			}
			if got := keyFault(result{verdict: v, status: c.fault.Status}); got != c.keyFault {
				t.Errorf("key fault %v, want %v", got, c.keyFault)
			}
		})
	}
}

// classifyGemini is the verdict of a Gemini upstream's error answer.
func classifyGemini(t *testing.T, resp proxytest.Response) verdict {
	t.Helper()
	ue, read := readGeminiError(resp.Status, []byte(resp.Body))
	v, ok := classifyProtocolError(ue, http.Header{}, true, time.Now())
	if !read || !ok {
		return classifyStatus(resp.Status, http.Header{}, []byte(resp.Body), true, time.Now())
	}
	return v
}

// A client of another protocol returns a Gemini 3 function call without
// its signature; the proxy's store puts it back, or the fake refuses the
// second turn.
func TestGeminiSignaturesAcrossProtocols(t *testing.T) {
	call := proxytest.GeminiReply{Parts: []proxytest.GeminiPart{
		{Call: &proxytest.GeminiCall{Name: "read_file", Args: map[string]any{"file_path": "a.txt"}}},
	}}
	tools := `[{"name":"read_file","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}}}}]`
	for _, client := range []string{"anthropic", "responses"} {
		t.Run(client, func(t *testing.T) {
			g := proxytest.NewGemini(t, "key-g")
			g.SetGemini3(true)
			g.Push(call)
			e := geminiEp(1, "g", g.URL)
			e.Models = []string{"gemini-3-pro-preview"}
			h := newHarness(t, Config{Endpoints: []Endpoint{e}})
			var first, second reply
			if client == "anthropic" {
				first = h.post("/v1/messages", `{"model":"gemini-3-pro-preview","max_tokens":256,"tools":`+tools+`,"messages":[{"role":"user","content":"read a.txt"}]}`)
				id := toolUseID(t, first)
				second = h.post("/v1/messages", `{"model":"gemini-3-pro-preview","max_tokens":256,"tools":`+tools+`,"messages":[`+
					`{"role":"user","content":"read a.txt"},`+
					`{"role":"assistant","content":[{"type":"tool_use","id":"`+id+`","name":"read_file","input":{"file_path":"a.txt"}}]},`+
					`{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+`","content":"secret"}]}]}`)
			} else {
				rtools := `[{"type":"function","name":"read_file","parameters":{"type":"object","properties":{"file_path":{"type":"string"}}}}]`
				first = h.post("/v1/responses", `{"model":"gemini-3-pro-preview","tools":`+rtools+`,"input":"read a.txt"}`)
				id := functionCallID(t, first)
				second = h.post("/v1/responses", `{"model":"gemini-3-pro-preview","tools":`+rtools+`,"input":[`+
					`{"role":"user","content":"read a.txt"},`+
					`{"type":"function_call","call_id":"`+id+`","name":"read_file","arguments":"{\"file_path\":\"a.txt\"}"},`+
					`{"type":"function_call_output","call_id":"`+id+`","output":"secret"}]}`)
			}
			if second.status != http.StatusOK {
				t.Fatalf("second turn: status %d, want 200: %s", second.status, second.body)
			}
			// The fake lets the documented fallback through; the signature
			// Gemini gave must come back instead.
			reqs := g.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d upstream requests, want 2", len(reqs))
			}
			if b := string(reqs[1].Body); !strings.Contains(b, `"thoughtSignature"`) || strings.Contains(b, "skip_thought_signature_validator") {
				t.Errorf("second turn carries no signature of Gemini's: %.600s", b)
			}
		})
	}
}

func toolUseID(t *testing.T, r reply) string {
	t.Helper()
	var m struct {
		Content []struct {
			Type, ID string
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(r.body), &m); err != nil || r.status != http.StatusOK {
		t.Fatalf("first turn: %d %s", r.status, r.body)
	}
	for _, c := range m.Content {
		if c.Type == "tool_use" {
			return c.ID
		}
	}
	t.Fatalf("no tool_use in %s", r.body)
	return ""
}

func functionCallID(t *testing.T, r reply) string {
	t.Helper()
	var m struct {
		Output []struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		} `json:"output"`
	}
	if err := json.Unmarshal([]byte(r.body), &m); err != nil || r.status != http.StatusOK {
		t.Fatalf("first turn: %d %s", r.status, r.body)
	}
	for _, o := range m.Output {
		if o.Type == "function_call" {
			return o.CallID
		}
	}
	t.Fatalf("no function_call in %s", r.body)
	return ""
}

// Token counts: a Gemini client's :countTokens goes to a Gemini endpoint's
// counter or is estimated, and Claude Code's count_tokens towards a
// Gemini endpoint asks its :countTokens.
func TestGeminiCountTokens(t *testing.T) {
	body := capturedGemini(t, "image-01.json")
	t.Run("gemini to gemini", func(t *testing.T) {
		g := proxytest.NewGemini(t, "key-g")
		g.SetModels("gemini-3.1-pro-preview")
		h := newHarness(t, Config{Endpoints: []Endpoint{geminiEp(1, "g", g.URL)}})
		r := h.post("/v1beta/models/gemini-3.1-pro-preview:countTokens", body)
		if r.status != http.StatusOK || !strings.Contains(r.body, `"totalTokens"`) || r.header.Get("X-Ccmesh-Estimated") != "" {
			t.Fatalf("got %d %s (estimated %q), want the upstream's count", r.status, r.body, r.header.Get("X-Ccmesh-Estimated"))
		}
		if reqs := g.Requests(); len(reqs) != 1 || !strings.HasSuffix(reqs[0].Path, ":countTokens") {
			t.Errorf("upstream requests %+v, want one :countTokens", reqs)
		}
	})
	t.Run("gemini to anthropic", func(t *testing.T) {
		u := upstream(t, okClaude())
		e := ep(1, "a", u.URL)
		e.Models = []string{"gemini-3.1-pro-preview"}
		h := newHarness(t, Config{Endpoints: []Endpoint{e}})
		r := h.post("/v1beta/models/gemini-3.1-pro-preview:countTokens", body)
		var got struct {
			TotalTokens int64 `json:"totalTokens"`
		}
		if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.status != http.StatusOK || got.TotalTokens <= 0 || r.header.Get("X-Ccmesh-Estimated") != "true" {
			t.Fatalf("got %d %s, want an estimate in Gemini's shape", r.status, r.body)
		}
		if n := u.Count(); n != 0 {
			t.Errorf("%d upstream requests, want none", n)
		}
	})
	t.Run("anthropic to gemini", func(t *testing.T) {
		g := proxytest.NewGemini(t, "key-g")
		e := geminiEp(1, "g", g.URL)
		e.Models = []string{"gemini-2.5-flash"}
		h := newHarness(t, Config{Endpoints: []Endpoint{e}})
		r := h.post(countTokensPath, `{"model":"gemini-2.5-flash","messages":[{"role":"user","content":"Hello, world! How are you today?"}]}`)
		if r.status != http.StatusOK || !strings.Contains(r.body, `"input_tokens"`) || r.header.Get("X-Ccmesh-Estimated") != "" {
			t.Fatalf("got %d %s (estimated %q), want Gemini's count", r.status, r.body, r.header.Get("X-Ccmesh-Estimated"))
		}
		if reqs := g.Requests(); len(reqs) != 1 || reqs[0].Path != "/v1beta/models/gemini-2.5-flash:countTokens" {
			t.Errorf("upstream requests %+v, want one :countTokens", reqs)
		}
	})
}

// readGeminiError reads a Gemini error body as the Spec does, false when
// the Spec reads none.
func readGeminiError(status int, body []byte) (conv.UpstreamError, bool) {
	if gemini.Spec.ReadError == nil {
		return conv.UpstreamError{}, false
	}
	return gemini.Spec.ReadError(status, body)
}

// A tool round trip of Gemini CLI's (tool-02, then tool-03 with the call
// and its functionResponse) through an Anthropic-only and a Chat-only
// upstream: the call reaches the client as a functionCall, and the
// follow-up reaches the upstream as that protocol's tool result.
func TestGeminiClientToolRoundTrip(t *testing.T) {
	call := map[Protocol]proxytest.Response{
		ProtocolAnthropic:  {Body: `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"file_path":"note.txt"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}`},
		ProtocolOpenAIChat: {Body: `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"file_path\":\"note.txt\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5}}`},
	}
	result := map[Protocol]string{ProtocolAnthropic: `"tool_result"`, ProtocolOpenAIChat: `"role":"tool"`}
	for _, p := range []Protocol{ProtocolAnthropic, ProtocolOpenAIChat} {
		t.Run(string(p), func(t *testing.T) {
			u := upstream(t, call[p])
			e := ep(1, "u", u.URL)
			e.Protocol, e.Models = p, []string{"gemini-3.8-flash"}
			h := newHarness(t, Config{Endpoints: []Endpoint{e}})
			got := geminiAnswer(t, h.post(geminiPath("gemini-3.8-flash", "plain"), capturedGemini(t, "tool-02.json")), "plain")
			var name string
			for _, part := range got.Parts {
				if part.Kind == conv.PartToolCall {
					name = part.Name
				}
			}
			if name != "read_file" {
				t.Fatalf("answer parts %+v, want a read_file call", got.Parts)
			}
			u.SetDefault(proxytest.AnthropicMessage("the word", 1, 1))
			if p == ProtocolOpenAIChat {
				u.SetDefault(proxytest.ChatCompletion("the word", 1, 1))
			}
			got = geminiAnswer(t, h.post(geminiPath("gemini-3.8-flash", "plain"), capturedGemini(t, "tool-03.json")), "plain")
			if txt := answerText(got); txt != "the word" {
				t.Errorf("follow-up text %q", txt)
			}
			reqs := u.Requests()
			if b := string(reqs[len(reqs)-1].Body); !strings.Contains(b, result[p]) {
				t.Errorf("the follow-up carries no %s: %.400s", result[p], b)
			}
		})
	}
}

// A Gemini client's GET /v1beta/models is ccmesh's own list in Gemini's
// shape, from the Gemini endpoints' models.
func TestGeminiModelList(t *testing.T) {
	e := geminiEp(1, "g", "http://127.0.0.1:1")
	e.Models = []string{"gemini-2.5-flash", "gemini-*"}
	a := ep(2, "a", "http://127.0.0.1:1")
	a.Models = []string{"claude-sonnet-4-5"}
	h := newHarness(t, Config{Endpoints: []Endpoint{e, a}})
	r := h.do(t.Context(), http.MethodGet, "/v1beta/models", "")
	var got struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.status != http.StatusOK {
		t.Fatalf("got %d %s", r.status, r.body)
	}
	if len(got.Models) != 1 || got.Models[0].Name != "models/gemini-2.5-flash" {
		t.Errorf("models %+v, want models/gemini-2.5-flash alone", got.Models)
	}
}

// A capture keeps no protocol's key header: a Gemini client's own key in
// x-goog-api-key is left out as x-api-key is.
func TestCaptureDropsEveryKeyHeader(t *testing.T) {
	h := http.Header{"X-Goog-Api-Key": {"AIzaSyD-a-real-google-key"}, "X-Api-Key": {"sk-x"}, "User-Agent": {"GeminiCLI"}}
	got := redactHeader(h, nil)
	for _, k := range []string{"X-Goog-Api-Key", "X-Api-Key"} {
		if v := got.Get(k); v != "" {
			t.Errorf("%s kept as %q", k, v)
		}
	}
	if got.Get("User-Agent") != "GeminiCLI" {
		t.Errorf("other headers lost: %v", got)
	}
}

// A Gemini client pins an endpoint as other clients do: by header, by the
// ccmesh_endpoint query parameter, or with @name/ in the path's model
// segment; the pinned endpoint gets the request with the bare model.
func TestGeminiClientPins(t *testing.T) {
	body := capturedGemini(t, "text-02.json")
	for _, c := range []struct {
		name, path string
		hdr        []string
	}{
		{"header", geminiPath("gemini-3.8-flash", "plain"), []string{"x-ccmesh-endpoint", "b"}},
		{"query", geminiPath("gemini-3.8-flash", "plain") + "?ccmesh_endpoint=b", nil},
		{"path", geminiPath("@b/gemini-3.8-flash", "plain"), nil},
		{"path, escaped", geminiPath("%40b%2Fgemini-3.8-flash", "plain"), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := proxytest.NewGemini(t, "key-a"), proxytest.NewGemini(t, "key-b")
			a.SetModels("gemini-3.8-flash")
			b.SetModels("gemini-3.8-flash")
			h := newHarness(t, Config{Endpoints: []Endpoint{geminiEp(1, "a", a.URL), geminiEp(2, "b", b.URL)}})
			geminiAnswer(t, h.post(c.path, body, c.hdr...), "plain")
			if a.Count() != 0 || b.Count() != 1 {
				t.Fatalf("requests a=%d b=%d, want the pinned b only", a.Count(), b.Count())
			}
			if p := b.Requests()[0].Path; p != "/v1beta/models/gemini-3.8-flash:generateContent" {
				t.Errorf("upstream path %q, want the bare model's", p)
			}
		})
	}
}
