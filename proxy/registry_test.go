package proxy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Every protocol of the table is whole: the proxy asks its Spec for each
// protocol-specific part, and a missing one would panic on a request.
func TestProtocolTable(t *testing.T) {
	if got, want := len(Protocols), len(translate.Specs); got != want {
		t.Fatalf("Protocols has %d entries, the table %d", got, want)
	}
	for i, s := range translate.Specs {
		t.Run(string(s.Protocol), func(t *testing.T) {
			p := s.Protocol
			if Protocols[i] != p || p.Index() != i || !p.Valid() || p.Spec() != s {
				t.Errorf("Protocols[%d] = %q, Index %d, Valid %v; want %q at %d", i, Protocols[i], p.Index(), p.Valid(), p, i)
			}
			if s.Codec == nil || s.Codec.Protocol() != p {
				t.Errorf("codec %v does not speak %q", s.Codec, p)
			}
			for name, missing := range map[string]bool{
				"EventKind": s.EventKind == nil, "BodyUsage": s.BodyUsage == nil, "EventUsage": s.EventUsage == nil,
				"ErrorBody": s.ErrorBody == nil, "StreamError": s.StreamError == nil, "Probe": s.Probe == nil,
				"ModelsAnswer": s.ModelsAnswer == nil, "Inbound or Route": len(s.Inbound) == 0 && s.Route == nil, "ProbeModel": s.ProbeModel == "",
				"ModelsAfter": s.ModelsAfter == "", "Version": s.Version == "",
			} {
				if missing {
					t.Errorf("%s is not set", name)
				}
			}
			for _, path := range s.Inbound {
				if got, ok := routeProtocol(path); !ok || got != p {
					t.Errorf("routeProtocol(%q) = %q, %v; want %q", path, got, ok, p)
				}
			}
			if got, want := profileOf(p).String(), s.Profile; got != want {
				t.Errorf("breaker profile %q, want the Spec's %q", got, want)
			}
			if b := s.ErrorBody(http.StatusTooManyRequests, "slow down"); !json.Valid(b) || !strings.Contains(string(b), "slow down") {
				t.Errorf("error body %s", b)
			}
			if ev := string(s.StreamError("gone")); !strings.Contains(ev, "data: ") || !strings.HasSuffix(ev, "\n\n") {
				t.Errorf("stream error %q is not one SSE event", ev)
			}
			if path, body := s.Probe("m"); !json.Valid(body) || !slices.Contains(s.Inbound, path) && !routes(path, p) {
				t.Errorf("probe %s %s", path, body)
			}
		})
	}
	for _, bad := range []Protocol{"", "Gemini", "Anthropic"} {
		if bad.Valid() || bad.Index() != -1 || bad.Spec() != nil {
			t.Errorf("%q is taken for a protocol", bad)
		}
	}
}

// routes reports whether path is routed to protocol p.
func routes(path string, p Protocol) bool {
	s, _, ok := conv.SpecOfRoute(path, "")
	return ok && s.Protocol == p
}

// The 404 names every inbound path of the table, in its order.
func TestServedPaths(t *testing.T) {
	want := "/v1/messages, /v1/messages/count_tokens, /v1/chat/completions, /v1/responses, " +
		"/v1beta/models/{model}:generateContent, :streamGenerateContent, :countTokens and /v1/models"
	if servedPaths != want {
		t.Errorf("got %q, want %q", servedPaths, want)
	}
}

// A body's usage is read once, by its protocol's codec: what the log
// records for an answer passed through is what a translation of the same
// answer carries.
func TestUsageReadOnce(t *testing.T) {
	for _, c := range []struct {
		name  string
		proto Protocol
		body  string
	}{
		{"anthropic", ProtocolAnthropic, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn",` +
			`"usage":{"input_tokens":21,"cache_creation_input_tokens":188,"cache_read_input_tokens":4000,"output_tokens":393}}`},
		{"chat cached", ProtocolOpenAIChat, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":2006,"completion_tokens":300,"prompt_tokens_details":{"cached_tokens":1920},"completion_tokens_details":{"reasoning_tokens":128}}}`},
		{"openrouter cache write", ProtocolOpenAIChat, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":3000,"completion_tokens":10,"prompt_tokens_details":{"cached_tokens":1000,"cache_write_tokens":1500}}}`},
		{"responses", ProtocolOpenAIResponses, `{"id":"r","object":"response","status":"completed","model":"m","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}],` +
			`"usage":{"input_tokens":3000,"input_tokens_details":{"cached_tokens":2048},"output_tokens":700,"output_tokens_details":{"reasoning_tokens":512}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, err := translate.Codec(c.proto).DecodeResponse([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := usageOfBody(c.proto, []byte(c.body))
			u := resp.Usage
			want := Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Reasoning: u.Reasoning}
			if !ok || got != want {
				t.Errorf("passed through %+v (found %v), translated %+v", got, ok, want)
			}
		})
	}
}

// A protocol that names its model in the path is routed by its Spec's
// Route, after the exact paths of every protocol.
func TestSpecOfRoute(t *testing.T) {
	for _, c := range []struct {
		path, query string
		want        Protocol
		ok          bool
		in          conv.Inbound
	}{
		{"/v1/messages", "", ProtocolAnthropic, true, conv.Inbound{}},
		{"/v1/messages/count_tokens", "", ProtocolAnthropic, true, conv.Inbound{Count: true}},
		{"/v1/chat/completions", "", ProtocolOpenAIChat, true, conv.Inbound{}},
		{"/v1/responses", "", ProtocolOpenAIResponses, true, conv.Inbound{}},
		{"/v1/responses/x", "", "", false, conv.Inbound{}},
		{"/v1beta/models/g:generateContent", "", ProtocolGemini, true, conv.Inbound{Model: "g", StreamSaid: true}},
		{"/v1beta/models/g:streamGenerateContent", "alt=sse", ProtocolGemini, true, conv.Inbound{Model: "g", Stream: true, StreamSaid: true}},
		{"/v1beta/models/g:countTokens", "", ProtocolGemini, true, conv.Inbound{Model: "g", StreamSaid: true, Count: true}},
		{"/v1beta/models/:generateContent", "", "", false, conv.Inbound{}},
	} {
		t.Run(c.path+"?"+c.query, func(t *testing.T) {
			s, in, ok := conv.SpecOfRoute(c.path, c.query)
			var got Protocol
			if s != nil {
				got = s.Protocol
			}
			if got != c.want || ok != c.ok || in != c.in {
				t.Errorf("got %q, %v, %+v; want %q, %v, %+v", got, ok, in, c.want, c.ok, c.in)
			}
		})
	}
}

// Each protocol's stream events are its own: an event another protocol
// names neither holds a stream nor ends it.
func TestEventKindsOwnProtocol(t *testing.T) {
	for _, c := range []struct {
		name  string
		proto Protocol
		ev    string
		want  evKind
	}{
		{"anthropic stop", ProtocolAnthropic, "message_stop", evTerminal},
		{"anthropic sees responses' failure", ProtocolAnthropic, "response.failed", evContent},
		{"anthropic sees responses' end", ProtocolAnthropic, "response.completed", evContent},
		{"responses end", ProtocolOpenAIResponses, "response.completed", evTerminal},
		{"responses sees anthropic's end", ProtocolOpenAIResponses, "message_stop", evContent},
		{"responses sees anthropic's start", ProtocolOpenAIResponses, "message_start", evContent},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := classifyEvent(c.proto, c.ev, []byte(`{}`), true); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

// pathSpec is a protocol that names the model and the stream flag in its
// path, as Gemini's generateContent does; it is not in the table.
var pathSpec = &conv.Spec{
	Protocol: "path-model",
	Version:  "/v1beta",
	Route: func(path, _ string) (conv.Inbound, bool) {
		rest, ok := strings.CutPrefix(path, "/v1beta/models/")
		if !ok {
			return conv.Inbound{}, false
		}
		if m, ok := strings.CutSuffix(rest, ":streamGenerateContent"); ok {
			return conv.Inbound{Model: m, Stream: true, StreamSaid: true}, true
		}
		if m, ok := strings.CutSuffix(rest, ":generateContent"); ok {
			return conv.Inbound{Model: m, StreamSaid: true}, true
		}
		return conv.Inbound{}, false
	},
	UpstreamPath: func(model string, stream bool) (string, string) {
		if stream {
			return "/v1beta/models/" + model + ":streamGenerateContent", "alt=sse"
		}
		return "/v1beta/models/" + model + ":generateContent", ""
	},
}

// A model and a stream flag the path names are the request's, and an
// attempt in the client's own protocol sends the forwarded model in the
// upstream's path, its body untouched.
func TestPathModel(t *testing.T) {
	body := []byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"stream":false}`)
	for _, c := range []struct {
		name, path, base string
		modelMap         map[string]string
		wantModel        string
		wantStream       bool
		wantURL          string
	}{
		{"plain", "/v1beta/models/g-1:generateContent", "https://up.example", nil,
			"g-1", false, "https://up.example/v1beta/models/g-1:generateContent"},
		{"stream from the path, not the body", "/v1beta/models/g-1:streamGenerateContent", "https://up.example", nil,
			"g-1", true, "https://up.example/v1beta/models/g-1:streamGenerateContent?alt=sse"},
		{"mapped model, base with its version", "/v1beta/models/g-1:generateContent", "https://up.example/v1beta", map[string]string{"g-*": "g-2"},
			"g-1", false, "https://up.example/v1beta/models/g-2:generateContent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, ok := pathSpec.Route(c.path, "")
			if !ok {
				t.Fatalf("%s not routed", c.path)
			}
			info, err := scanBody(body)
			if err != nil {
				t.Fatal(err)
			}
			info.fromPath(in)
			if info.model != c.wantModel || !info.hasModel || info.stream != c.wantStream {
				t.Errorf("model %q (%v), stream %v; want %q, %v", info.model, info.hasModel, info.stream, c.wantModel, c.wantStream)
			}
			e, err := compileEndpoint(Endpoint{Name: "g", Protocol: ProtocolOpenAIChat, BaseURL: c.base, ModelMap: c.modelMap})
			if err != nil {
				t.Fatal(err)
			}
			e.spec = pathSpec
			q := &request{body: body, info: info, model: info.model, rec: &Record{}, r: httptest.NewRequest(http.MethodPost, c.path+"?key=client", nil), rawQuery: "key=client"}
			if got := q.passThroughURL(e); got != c.wantURL {
				t.Errorf("upstream URL %s, want %s", got, c.wantURL)
			}
			if got := q.bodyFor(e); string(got) != string(body) {
				t.Errorf("body rewritten: %s", got)
			}
		})
	}
}
