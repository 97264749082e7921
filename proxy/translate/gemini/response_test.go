package gemini

import (
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

var madeUp = regexp.MustCompile(`^gmcall_[0-9a-f]{24}$`)

func TestDecodeResponse(t *testing.T) {
	tests := []struct {
		name string
		body string
		want conv.Response
	}{{
		name: "text with thoughts and usage (thoughts count as output)",
		body: `{"candidates":[{"content":{"role":"model","parts":[{"text":"plan","thought":true},{"text":"Hi"},{"text":"","thoughtSignature":"E"}]},"finishReason":"STOP","index":0}],
			"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":20,"cachedContentTokenCount":60,"thoughtsTokenCount":30,"totalTokenCount":150},
			"modelVersion":"gemini-2.5-pro","responseId":"r1"}`,
		want: conv.Response{ID: "r1", Model: "gemini-2.5-pro", Stop: conv.StopEnd,
			Parts: []conv.Part{{Kind: conv.PartReasoning, Text: "plan"}, {Kind: conv.PartText, Text: "Hi", GeminiSignature: "E"}},
			Usage: conv.Usage{Input: 40, CacheRead: 60, Output: 50, Reasoning: 30}},
	}, {
		name: "a function call answer is tool use though Gemini says STOP",
		body: `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"c9","name":"f","args":{"b":1,"a":2}},"thoughtSignature":"S"}]},"finishReason":"STOP"}]}`,
		want: conv.Response{Stop: conv.StopToolUse,
			Parts: []conv.Part{{Kind: conv.PartToolCall, CallID: "c9", Name: "f", Args: `{"a":2,"b":1}`, GeminiSignature: "S"}}},
	}, {
		name: "MAX_TOKENS",
		body: `{"candidates":[{"content":{"parts":[{"text":"cut"}]},"finishReason":"MAX_TOKENS"}]}`,
		want: conv.Response{Stop: conv.StopMaxTokens, Parts: []conv.Part{{Kind: conv.PartText, Text: "cut"}}},
	}, {
		name: "SAFETY without content",
		body: `{"candidates":[{"finishReason":"SAFETY"}]}`,
		want: conv.Response{Stop: conv.StopRefusal, Parts: []conv.Part{}},
	}, {
		name: "a blocked prompt",
		body: `{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":7}}`,
		want: conv.Response{Stop: conv.StopRefusal, Parts: []conv.Part{}, Usage: conv.Usage{Input: 7}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Codec.DecodeResponse([]byte(tt.body))
			if err != nil {
				t.Fatalf("DecodeResponse: %v", err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

// The JSON-array stream form, answered where a body was expected, reads
// as the one answer it streams.
func TestDecodeResponseArray(t *testing.T) {
	body := `[` + chunk(`{"text":"Hel"}`, "", `{"promptTokenCount":4}`) + `,` + "\r\n" +
		chunk(`{"text":"lo"},{"functionCall":{"id":"c","name":"f","args":{"a":1}}}`, "STOP", `{"promptTokenCount":4,"candidatesTokenCount":2}`) + `]`
	got, err := Codec.DecodeResponse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := conv.Response{ID: "r1", Model: "gemini-2.5-flash", Stop: conv.StopToolUse, Usage: conv.Usage{Input: 4, Output: 2},
		Parts: []conv.Part{text("Hello"), {Kind: conv.PartToolCall, CallID: "c", Name: "f", Args: `{"a":1}`}}}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("got  %+v\nwant %+v", *got, want)
	}
}

func TestDecodeResponseRefuses(t *testing.T) {
	for _, body := range []string{`{}`, `{"candidates":[]}`, `[]`, `[{"candidates":[{"content":{"parts":[{"text":"cut"}]}}]}]`,
		`[{"error":{"code":429,"message":"slow","status":"RESOURCE_EXHAUSTED"}}]`, `{"error":{"code":500,"message":"boom","status":"INTERNAL"}}`} {
		if r, err := Codec.DecodeResponse([]byte(body)); err == nil {
			t.Errorf("DecodeResponse(%s) = %+v, want an error", body, r)
		}
	}
}

// A call without an id gets a made-up one, and the store of the
// conversation keeps its signature under it.
func TestDecodeResponseRecordsSignatures(t *testing.T) {
	s := NewSignatureStore(1<<20, time.Hour)
	got, err := ForConversation(s, "k").DecodeResponse([]byte(`{"candidates":[{"content":{"parts":[
		{"functionCall":{"name":"f","args":{}},"thoughtSignature":"S1"},{"functionCall":{"name":"g","args":{}}}]},"finishReason":"STOP"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := got.Parts[0].CallID, got.Parts[1].CallID
	if !madeUp.MatchString(a) || !madeUp.MatchString(b) || a == b {
		t.Fatalf("call ids %q, %q: want two different made-up ids", a, b)
	}
	if sig, ok := s.Get("k", a); !ok || sig != "S1" {
		t.Errorf("store has %q, %v for the first call, want S1", sig, ok)
	}
	if _, ok := s.Get("k", b); ok {
		t.Errorf("store has a signature for the unsigned call")
	}
}

func TestEncodeResponse(t *testing.T) {
	tests := []struct {
		name string
		resp conv.Response
		req  *conv.Request
		want string
	}{{
		name: "text, reasoning and usage the Gemini way",
		resp: conv.Response{ID: "msg_1", Model: "claude-x", Stop: conv.StopEnd,
			Parts: []conv.Part{{Kind: conv.PartReasoning, Text: "plan", Signature: "EqA"}, text("Hi")},
			Usage: conv.Usage{Input: 40, CacheRead: 60, Output: 50, Reasoning: 30}},
		req: &conv.Request{Model: "gemini-2.5-pro"},
		want: `{"candidates":[{"content":{"role":"model","parts":[{"text":"plan","thought":true,"thoughtSignature":"ccmesh.anthropic.signature.EqA"},{"text":"Hi"}]},"finishReason":"STOP","index":0}],
			"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":20,"cachedContentTokenCount":60,"thoughtsTokenCount":30,"totalTokenCount":150},
			"modelVersion":"gemini-2.5-pro","responseId":"msg_1"}`,
	}, {
		name: "a tool call; a made-up id is not shown",
		resp: conv.Response{Stop: conv.StopToolUse, Parts: []conv.Part{
			{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "f", Args: `{"a":1}`},
			{Kind: conv.PartToolCall, CallID: "gmcall_0123456789abcdef01234567", Name: "f", Args: ``, GeminiSignature: "S"},
		}},
		want: `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"toolu_1","name":"f","args":{"a":1}}},
			{"functionCall":{"name":"f","args":{}},"thoughtSignature":"S"}]},"finishReason":"STOP","index":0}],
			"usageMetadata":{"promptTokenCount":0,"candidatesTokenCount":0,"totalTokenCount":0}}`,
	}, {
		name: "max tokens and refusal",
		resp: conv.Response{Stop: conv.StopMaxTokens, Parts: []conv.Part{text("cut")}},
		want: `{"candidates":[{"content":{"role":"model","parts":[{"text":"cut"}]},"finishReason":"MAX_TOKENS","index":0}],
			"usageMetadata":{"promptTokenCount":0,"candidatesTokenCount":0,"totalTokenCount":0}}`,
	}, {
		name: "refusal",
		resp: conv.Response{Stop: conv.StopRefusal},
		want: `{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"SAFETY","index":0}],
			"usageMetadata":{"promptTokenCount":0,"candidatesTokenCount":0,"totalTokenCount":0}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Codec.EncodeResponse(&tt.resp, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			jsonEqual(t, b, tt.want)
		})
	}
}

func TestUsageBothWays(t *testing.T) {
	u := conv.Usage{Input: 40, CacheRead: 60, Output: 50, Reasoning: 30}
	o := usageOut(u)
	back := usageIn(&wireUsage{Prompt: o.Prompt, Candidates: o.Candidates, Cached: o.Cached, Thoughts: o.Thoughts, Total: o.Total})
	if back != u {
		t.Errorf("usage round trip = %+v, want %+v", back, u)
	}
	if o.Total != 150 {
		t.Errorf("totalTokenCount = %d, want 150", o.Total)
	}
}
