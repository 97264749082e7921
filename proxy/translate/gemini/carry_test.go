package gemini

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// dropThoughts is what Gemini CLI does to an answer before it sends it
// back as history: the thought parts go, the function calls stay with
// their thoughtSignature as received.
func dropThoughts(t *testing.T, answer []byte) wireContent {
	t.Helper()
	var w wireResponse
	if err := json.Unmarshal(answer, &w); err != nil {
		t.Fatal(err)
	}
	c := wireContent{Role: "model"}
	for _, p := range w.Candidates[0].Content.Parts {
		if !p.Thought && (p.FunctionCall != nil || (p.Text != nil && *p.Text != "")) {
			c.Parts = append(c.Parts, p)
		}
	}
	return c
}

// Claude's signed thinking reaches Gemini CLI and comes back on the
// function call it led to, so that the next request to the Anthropic
// upstream has the thinking before the tool_use and keeps thinking on.
func TestThinkingRidesOnTheCall(t *testing.T) {
	claude := &conv.Response{ID: "msg_1", Stop: conv.StopToolUse, Parts: []conv.Part{
		{Kind: conv.PartReasoning, Text: "I should read it.", Signature: "EqQBsig"},
		{Kind: conv.PartReasoning, Redacted: "RDdata"},
		text("Reading."),
		{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "read_file", Args: `{"p":"a"}`},
	}}
	req := &conv.Request{From: Protocol, Model: "gemini-3-pro", Tools: []conv.Tool{{Name: "read_file", Schema: conv.EmptySchema}}}
	wantParts := []conv.Part{
		{Kind: conv.PartReasoning, Text: "I should read it.", Signature: "EqQBsig"},
		{Kind: conv.PartReasoning, Redacted: "RDdata"},
		text("Reading."),
		{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "read_file", Args: `{"p":"a"}`},
	}
	answers := map[string]func() []byte{
		"response": func() []byte {
			b, err := Codec.EncodeResponse(claude, req)
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
		"stream": func() []byte {
			// The chunks, collected into one answer as the CLI does.
			enc := Codec.StreamEncoder(req)
			var out []byte
			conv.Replay(claude, func(ev conv.Event) { out = enc.Encode(out, ev) })
			var parts []wirePart
			for _, data := range sseData(t, out) {
				var w wireResponse
				if err := json.Unmarshal([]byte(data), &w); err != nil {
					t.Fatal(err)
				}
				parts = append(parts, w.Candidates[0].Content.Parts...)
			}
			return conv.Marshal(wireResponse{Candidates: []wireCandidate{{Content: &wireContent{Parts: parts}}}})
		},
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			history := []wireContent{{Role: "user", Parts: []wirePart{{Text: ptr("read a")}}}, dropThoughts(t, answer()),
				{Role: "user", Parts: []wirePart{{FunctionResponse: &wireResult{ID: "toolu_1", Name: "read_file", Response: json.RawMessage(`{"output":"x"}`)}}}}}
			next, err := Codec.DecodeRequest(conv.Marshal(map[string]any{"contents": history,
				"generationConfig": map[string]any{"thinkingConfig": map[string]any{"thinkingBudget": 4096}}}))
			if err != nil {
				t.Fatal(err)
			}
			if got := next.Messages[1].Parts; !reflect.DeepEqual(got, wantParts) {
				t.Errorf("model turn back\n got: %+v\nwant: %+v", got, wantParts)
			}
			// To the Anthropic upstream: the thinking first, and thinking on.
			checkAnthropicThinking(t, next, []string{"thinking", "redacted_thinking", "text", "tool_use"})
			// To a Gemini upstream the marked value never goes.
			g, err := Codec.EncodeRequest(next)
			if err != nil {
				t.Fatal(err)
			}
			var gw struct{ Contents []wireContent }
			_ = json.Unmarshal(g, &gw)
			for _, p := range gw.Contents[1].Parts {
				if p.FunctionCall != nil && p.ThoughtSignature != fallbackSignature {
					t.Errorf("call sent to Gemini with signature %q, want the fallback", p.ThoughtSignature)
				}
			}
		})
	}
}

// checkAnthropicThinking encodes r for an Anthropic upstream and checks
// that thinking is on and the second turn has the blocks want.
func checkAnthropicThinking(t *testing.T, r *conv.Request, want []string) {
	t.Helper()
	r.Model = "claude-sonnet-4-5"
	b, err := anthropic.Codec.EncodeRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	var up struct {
		Thinking *struct{ Type string }
		Messages []struct {
			Content []struct{ Type, Signature string }
		}
	}
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	if up.Thinking == nil || up.Thinking.Type != "enabled" {
		t.Errorf("thinking = %+v, want enabled\n%s", up.Thinking, b)
	}
	var types []string
	for _, c := range up.Messages[1].Content {
		types = append(types, c.Type)
	}
	if !reflect.DeepEqual(types, want) {
		t.Errorf("assistant blocks %v, want %v", types, want)
	}
}

// A client that keeps the thought parts sends the thinking twice (in the
// thought parts and on the call): it is read once.
func TestCarriedThinkingNotDoubled(t *testing.T) {
	mark := carryThinking([]conv.Part{{Kind: conv.PartReasoning, Text: "t", Signature: "s"}})
	body := `{"contents":[{"role":"model","parts":[{"text":"t","thought":true,"thoughtSignature":"ccmesh.anthropic.signature.s"},
		{"functionCall":{"id":"c","name":"f"},"thoughtSignature":"` + mark + `"}]}]}`
	r, err := Codec.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []conv.Part{{Kind: conv.PartReasoning, Text: "t", Signature: "s"}, {Kind: conv.PartToolCall, CallID: "c", Name: "f", Args: "{}"}}
	if got := r.Messages[0].Parts; !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	for _, broken := range []string{thinkingPrefix + "!!", thinkingPrefix + "e30"} {
		if parts, ok := carriedThinking(broken); !ok || len(parts) != 0 {
			t.Errorf("carriedThinking(%q) = %+v, %v; want marked, no parts", broken, parts, ok)
		}
	}
}
