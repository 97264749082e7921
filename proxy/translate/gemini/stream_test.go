package gemini

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// chunk is one streamed GenerateContentResponse with parts (JSON) and a
// finish reason.
func chunk(parts, finish, usage string) string {
	c := `{"candidates":[{"content":{"role":"model","parts":[` + parts + `]}`
	if finish != "" {
		c += `,"finishReason":"` + finish + `"`
	}
	c += `,"index":0}]`
	if usage != "" {
		c += `,"usageMetadata":` + usage
	}
	return c + `,"modelVersion":"gemini-2.5-flash","responseId":"r1"}`
}

func TestStreamDecode(t *testing.T) {
	start := conv.Event{Type: conv.EvStart, ID: "r1", Model: "gemini-2.5-flash", Usage: conv.Usage{Input: 10}}
	tests := []struct {
		name     string
		chunks   []string
		want     []conv.Event
		complete bool
	}{{
		name: "thoughts then text, the signature on an empty last part, usage from the last chunk",
		chunks: []string{
			chunk(`{"text":"Let me ","thought":true}`, "", `{"promptTokenCount":10}`),
			chunk(`{"text":"think","thought":true}`, "", ""),
			chunk(`{"text":"Hello"}`, "", ""),
			chunk(`{"text":" world"}`, "", ""),
			chunk(`{"text":"","thoughtSignature":"E"}`, "STOP", `{"promptTokenCount":10,"candidatesTokenCount":5,"thoughtsTokenCount":7}`),
		},
		want: []conv.Event{start,
			{Type: conv.EvBlockStart, Index: 0, Part: conv.Part{Kind: conv.PartReasoning}},
			{Type: conv.EvDelta, Index: 0, Text: "Let me "},
			{Type: conv.EvDelta, Index: 0, Text: "think"},
			{Type: conv.EvBlockStop, Index: 0, Part: conv.Part{Kind: conv.PartReasoning}},
			{Type: conv.EvBlockStart, Index: 1, Part: conv.Part{Kind: conv.PartText}},
			{Type: conv.EvDelta, Index: 1, Text: "Hello"},
			{Type: conv.EvDelta, Index: 1, Text: " world"},
			{Type: conv.EvBlockStop, Index: 1, Part: conv.Part{Kind: conv.PartText, GeminiSignature: "E"}},
			{Type: conv.EvFinish, Stop: conv.StopEnd, Usage: conv.Usage{Input: 10, Output: 12, Reasoning: 7}},
		},
		complete: true,
	}, {
		name: "parallel calls in one chunk, each whole, the first signed",
		chunks: []string{
			chunk(`{"text":"Checking."}`, "", `{"promptTokenCount":10}`),
			chunk(`{"functionCall":{"id":"a","name":"weather","args":{"city":"Paris"}},"thoughtSignature":"S"},{"functionCall":{"id":"b","name":"weather","args":{"city":"Rome"}}}`, "STOP", ""),
		},
		want: []conv.Event{start,
			{Type: conv.EvBlockStart, Index: 0, Part: conv.Part{Kind: conv.PartText}},
			{Type: conv.EvDelta, Index: 0, Text: "Checking."},
			{Type: conv.EvBlockStop, Index: 0, Part: conv.Part{Kind: conv.PartText}},
			{Type: conv.EvBlockStart, Index: 1, Part: conv.Part{Kind: conv.PartToolCall, CallID: "a", Name: "weather", GeminiSignature: "S"}},
			{Type: conv.EvDelta, Index: 1, Text: `{"city":"Paris"}`},
			{Type: conv.EvBlockStop, Index: 1, Part: conv.Part{Kind: conv.PartToolCall, CallID: "a", Name: "weather", GeminiSignature: "S"}},
			{Type: conv.EvBlockStart, Index: 2, Part: conv.Part{Kind: conv.PartToolCall, CallID: "b", Name: "weather"}},
			{Type: conv.EvDelta, Index: 2, Text: `{"city":"Rome"}`},
			{Type: conv.EvBlockStop, Index: 2, Part: conv.Part{Kind: conv.PartToolCall, CallID: "b", Name: "weather"}},
			{Type: conv.EvFinish, Stop: conv.StopToolUse, Usage: conv.Usage{Input: 10}},
		},
		complete: true,
	}, {
		name:   "MAX_TOKENS",
		chunks: []string{chunk(`{"text":"cut"}`, "MAX_TOKENS", `{"promptTokenCount":10,"candidatesTokenCount":3}`)},
		want: []conv.Event{start,
			{Type: conv.EvBlockStart, Index: 0, Part: conv.Part{Kind: conv.PartText}},
			{Type: conv.EvDelta, Index: 0, Text: "cut"},
			{Type: conv.EvBlockStop, Index: 0, Part: conv.Part{Kind: conv.PartText}},
			{Type: conv.EvFinish, Stop: conv.StopMaxTokens, Usage: conv.Usage{Input: 10, Output: 3}},
		},
		complete: true,
	}, {
		name: "only the first candidate",
		chunks: []string{`{"candidates":[{"content":{"parts":[{"text":"one"}]},"index":0},{"content":{"parts":[{"text":"two"}]},"index":1}],"usageMetadata":{"promptTokenCount":10},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`,
			`{"candidates":[{"content":{"parts":[{"text":"more two"}]},"finishReason":"STOP","index":1}]}`,
			`{"candidates":[{"content":{"parts":[{"text":""}]},"finishReason":"STOP","index":0}]}`},
		want: []conv.Event{start,
			{Type: conv.EvBlockStart, Index: 0, Part: conv.Part{Kind: conv.PartText}},
			{Type: conv.EvDelta, Index: 0, Text: "one"},
			{Type: conv.EvBlockStop, Index: 0, Part: conv.Part{Kind: conv.PartText}},
			{Type: conv.EvFinish, Stop: conv.StopEnd, Usage: conv.Usage{Input: 10}},
		},
		complete: true,
	}, {
		name:   "cut before a finish reason",
		chunks: []string{chunk(`{"text":"half"}`, "", `{"promptTokenCount":10}`)},
		want: []conv.Event{start,
			{Type: conv.EvBlockStart, Index: 0, Part: conv.Part{Kind: conv.PartText}},
			{Type: conv.EvDelta, Index: 0, Text: "half"},
			{Type: conv.EvBlockStop, Index: 0, Part: conv.Part{Kind: conv.PartText}},
		},
	}, {
		name:   "an error in the stream",
		chunks: []string{`{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`},
		want:   []conv.Event{{Type: conv.EvError, Err: &conv.StreamError{Type: "overloaded_error", Message: "The model is overloaded."}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, complete := decodeStream(t, Codec.StreamDecoder(), tt.chunks...)
			checkDiscipline(t, evs)
			sameEvents(t, evs, tt.want)
			if complete != tt.complete {
				t.Errorf("complete = %v, want %v", complete, tt.complete)
			}
		})
	}
}

// A streamed call without an id gets a made-up one, with its signature in
// the conversation's store.
func TestStreamDecodeRecordsSignatures(t *testing.T) {
	s := NewSignatureStore(1<<20, time.Hour)
	evs, _ := decodeStream(t, ForConversation(s, "k").StreamDecoder(),
		chunk(`{"functionCall":{"name":"f","args":{}},"thoughtSignature":"S"}`, "STOP", ""))
	id := evs[1].Part.CallID
	if !madeUp.MatchString(id) {
		t.Fatalf("call id %q is not a made-up one", id)
	}
	if sig, _ := s.Get("k", id); sig != "S" {
		t.Errorf("store has %q, want S", sig)
	}
}

func TestStreamEncode(t *testing.T) {
	evs := []conv.Event{
		{Type: conv.EvStart, ID: "msg_1", Model: "claude", Usage: conv.Usage{Input: 5}},
		{Type: conv.EvBlockStart, Index: 0, Part: conv.Part{Kind: conv.PartReasoning}},
		{Type: conv.EvDelta, Index: 0, Text: "hm"},
		{Type: conv.EvBlockStop, Index: 0, Part: conv.Part{Kind: conv.PartReasoning, Signature: "EqA"}},
		{Type: conv.EvBlockStart, Index: 1, Part: conv.Part{Kind: conv.PartText}},
		{Type: conv.EvDelta, Index: 1, Text: "Hi"},
		{Type: conv.EvBlockStop, Index: 1, Part: conv.Part{Kind: conv.PartText}},
		{Type: conv.EvBlockStart, Index: 2, Part: conv.Part{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "f"}},
		{Type: conv.EvDelta, Index: 2, Text: `{"a":1}`},
		{Type: conv.EvBlockStop, Index: 2, Part: conv.Part{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "f"}},
		{Type: conv.EvFinish, Stop: conv.StopToolUse, Usage: conv.Usage{Input: 5, Output: 9, Reasoning: 2}},
	}
	mk := func(parts, finish, usage string) string {
		c := `{"candidates":[{"content":{"role":"model","parts":[` + parts + `]}`
		if finish != "" {
			c += `,"finishReason":"` + finish + `"`
		}
		c += `,"index":0}]`
		if usage != "" {
			c += `,"usageMetadata":` + usage
		}
		return c + `,"modelVersion":"gemini-2.5-pro","responseId":"msg_1"}`
	}
	want := []string{
		mk(`{"text":"hm","thought":true}`, "", ""),
		mk(`{"text":"","thought":true,"thoughtSignature":"ccmesh.anthropic.signature.EqA"}`, "", ""),
		mk(`{"text":"Hi"}`, "", ""),
		// The signed thinking rides on the call too (carry.go): {"t":"hm","s":"EqA"}.
		mk(`{"functionCall":{"id":"toolu_1","name":"f","args":{"a":1}},"thoughtSignature":"ccmesh.anthropic.thinking.W3sidCI6ImhtIiwicyI6IkVxQSJ9XQ"}`, "", ""),
		mk(`{"text":""}`, "STOP", `{"promptTokenCount":5,"candidatesTokenCount":7,"thoughtsTokenCount":2,"totalTokenCount":14}`),
	}
	req := &conv.Request{Model: "gemini-2.5-pro", Tools: []conv.Tool{{Name: "f"}}}
	t.Run("sse", func(t *testing.T) {
		enc := Codec.StreamEncoder(req)
		var out []byte
		for _, ev := range evs {
			out = enc.Encode(out, ev)
		}
		got := sseData(t, out)
		if len(got) != len(want) {
			t.Fatalf("%d events, want %d:\n%s", len(got), len(want), out)
		}
		for i := range want {
			jsonEqual(t, []byte(got[i]), want[i])
		}
	})
	t.Run("array", func(t *testing.T) {
		enc := ArrayStreamEncoder(req)
		var out []byte
		for _, ev := range evs {
			out = enc.Encode(out, ev)
		}
		jsonEqual(t, out, "["+strings.Join(want, ",")+"]")
	})
}

func TestStreamEncodeFail(t *testing.T) {
	req := &conv.Request{Model: "g"}
	start := conv.Event{Type: conv.EvStart}
	text := []conv.Event{start, {Type: conv.EvBlockStart, Part: conv.Part{Kind: conv.PartText}}, {Type: conv.EvDelta, Text: "a"}}
	tests := []struct {
		name  string
		array bool
		evs   []conv.Event
		want  []string // the SSE data, or the array's elements
	}{
		{"sse broken", false, text, []string{`{"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]},"index":0}],"modelVersion":"g"}`,
			`{"error":{"code":500,"message":"broken","status":"INTERNAL"}}`}},
		{"array broken", true, text, []string{`{"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]},"index":0}],"modelVersion":"g"}`,
			`{"error":{"code":500,"message":"broken","status":"INTERNAL"}}`}},
		{"array broken before anything", true, []conv.Event{start}, []string{`{"error":{"code":500,"message":"broken","status":"INTERNAL"}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := Codec.StreamEncoder(req)
			if tt.array {
				enc = ArrayStreamEncoder(req)
			}
			var out []byte
			for _, ev := range tt.evs {
				out = enc.Encode(out, ev)
			}
			out = enc.Fail(out, "broken")
			if again := enc.Fail(nil, "twice"); len(again) != 0 {
				t.Errorf("a second Fail wrote %q", again)
			}
			if tt.array {
				jsonEqual(t, out, "["+strings.Join(tt.want, ",")+"]")
				return
			}
			got := sseData(t, out)
			if len(got) != len(tt.want) {
				t.Fatalf("events %q, want %q", got, tt.want)
			}
			for i := range got {
				jsonEqual(t, []byte(got[i]), tt.want[i])
			}
		})
	}
}

// A Gemini stream decoded and encoded again for a Gemini client is the
// same stream, part for part.
func TestStreamRoundTrip(t *testing.T) {
	in := []string{
		chunk(`{"text":"a","thought":true}`, "", ""),
		chunk(`{"text":"b"}`, "", ""),
		chunk(`{"text":"","thoughtSignature":"E"}`, "", ""),
		chunk(`{"functionCall":{"id":"c","name":"f","args":{"x":[1,2]}},"thoughtSignature":"S"}`, "", ""),
		chunk(`{"text":""}`, "STOP", `{"promptTokenCount":3,"candidatesTokenCount":4,"totalTokenCount":7}`),
	}
	evs, complete := decodeStream(t, Codec.StreamDecoder(), in...)
	if !complete {
		t.Fatal("stream not complete")
	}
	enc := Codec.StreamEncoder(&conv.Request{Model: "gemini-2.5-flash", Tools: []conv.Tool{{Name: "f"}}})
	var out []byte
	for _, ev := range evs {
		out = enc.Encode(out, ev)
	}
	got := sseData(t, out)
	if len(got) != len(in) {
		t.Fatalf("%d chunks, want %d:\n%s", len(got), len(in), out)
	}
	for i := range in {
		jsonEqual(t, []byte(got[i]), in[i])
	}
}

// Collect over the stream decoder gives what DecodeResponse gives for the
// same answer whole (an upstream that streams when asked not to).
func TestStreamCollectMatchesResponse(t *testing.T) {
	parts := `{"text":"p","thought":true},{"text":"Hi","thoughtSignature":"E"},{"functionCall":{"id":"c","name":"f","args":{}},"thoughtSignature":"S"}`
	usage := `{"promptTokenCount":10,"candidatesTokenCount":5,"cachedContentTokenCount":4,"thoughtsTokenCount":2}`
	whole, err := Codec.DecodeResponse([]byte(chunk(parts, "STOP", usage)))
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := decodeStream(t, Codec.StreamDecoder(), chunk(parts, "STOP", usage))
	c := conv.NewCollect()
	for _, ev := range evs {
		c.Add(ev)
	}
	got, complete := c.Response()
	if !complete {
		t.Fatal("not complete")
	}
	g, w := conv.Marshal(got), conv.Marshal(whole)
	if string(g) != string(w) {
		t.Errorf("collected %s\n    whole %s", g, w)
	}
	var v any
	if json.Unmarshal(g, &v) != nil {
		t.Fatal("not JSON")
	}
}
