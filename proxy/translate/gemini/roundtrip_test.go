package gemini

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

var others = []conv.Codec{anthropic.Codec, chat.Codec, responses.Codec}

// cliTurn is a Gemini CLI turn, reduced: a system instruction, a user
// text with an image, a model turn of thoughts and two parallel calls (no
// ids, the first signed), their results, and the tools.
const cliTurn = `{
 "systemInstruction":{"role":"user","parts":[{"text":"You are an interactive CLI agent."}]},
 "contents":[
  {"role":"user","parts":[{"text":"What is in these files?"},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}]},
  {"role":"model","parts":[{"text":"**Planning**","thought":true},
   {"functionCall":{"name":"read_file","args":{"absolute_path":"/w/a.go"}},"thoughtSignature":"CiQB"},
   {"functionCall":{"name":"read_file","args":{"absolute_path":"/w/b.go"}}}]},
  {"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"output":"package a"}}},
   {"functionResponse":{"name":"read_file","response":{"output":"package b"}}}]}],
 "tools":[{"functionDeclarations":[{"name":"read_file","description":"Reads a file.",
  "parametersJsonSchema":{"type":"object","properties":{"absolute_path":{"type":"string"}},"required":["absolute_path"]}}]}],
 "generationConfig":{"temperature":0,"topP":1,"maxOutputTokens":8192,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}}`

// What comes back to Gemini after a trip through another protocol: the
// thought text and the signature are lost (no other protocol carries
// them), so the first call gets the documented fallback; the made-up ids
// are gone again; everything else is as it was.
const cliTurnBack = `{
 "systemInstruction":{"parts":[{"text":"You are an interactive CLI agent."}]},
 "contents":[
  {"role":"user","parts":[{"text":"What is in these files?"},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}]},
  {"role":"model","parts":[
   {"functionCall":{"name":"read_file","args":{"absolute_path":"/w/a.go"}},"thoughtSignature":"skip_thought_signature_validator"},
   {"functionCall":{"name":"read_file","args":{"absolute_path":"/w/b.go"}}}]},
  {"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"output":"package a"}}},
   {"functionResponse":{"name":"read_file","response":{"output":"package b"}}}]}],
 "tools":[{"functionDeclarations":[{"name":"read_file","description":"Reads a file.",
  "parametersJsonSchema":{"type":"object","properties":{"absolute_path":{"type":"string"}},"required":["absolute_path"]}}]}],
 "generationConfig":{"temperature":0,"topP":1,"maxOutputTokens":8192,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}}`

// cliTurnSame is cliTurn through its own codec: the same but for the
// order of members and the systemInstruction's role, which the API does
// not read.
const cliTurnSame = `{
 "systemInstruction":{"parts":[{"text":"You are an interactive CLI agent."}]},
 "contents":[
  {"role":"user","parts":[{"text":"What is in these files?"},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}]},
  {"role":"model","parts":[{"text":"**Planning**","thought":true},
   {"functionCall":{"name":"read_file","args":{"absolute_path":"/w/a.go"}},"thoughtSignature":"CiQB"},
   {"functionCall":{"name":"read_file","args":{"absolute_path":"/w/b.go"}}}]},
  {"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"output":"package a"}}},
   {"functionResponse":{"name":"read_file","response":{"output":"package b"}}}]}],
 "tools":[{"functionDeclarations":[{"name":"read_file","description":"Reads a file.",
  "parametersJsonSchema":{"type":"object","properties":{"absolute_path":{"type":"string"}},"required":["absolute_path"]}}]}],
 "generationConfig":{"temperature":0,"topP":1,"maxOutputTokens":8192,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}}`

// roundTripConfig is cliTurn's generationConfig after each trip, with
// what the other codec itself leaves out: the Anthropic codec turns
// thinking off for a history of calls without signed thinking and sends
// temperature without top_p.
var roundTripConfig = map[conv.Protocol]string{
	anthropic.Protocol: `{"temperature":0,"maxOutputTokens":8192}`,
	chat.Protocol:      `{"temperature":0,"topP":1,"maxOutputTokens":8192,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}`,
	responses.Protocol: `{"temperature":0,"topP":1,"maxOutputTokens":8192,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}`,
}

// Gemini → conv → another protocol's body → conv → Gemini.
func TestRequestRoundTrip(t *testing.T) {
	r, err := Codec.DecodeRequest([]byte(cliTurn))
	if err != nil {
		t.Fatal(err)
	}
	r.Model = "gemini-2.5-pro"
	t.Run("gemini", func(t *testing.T) {
		b, err := Codec.EncodeRequest(r)
		if err != nil {
			t.Fatal(err)
		}
		// Its own codec keeps the thought and the signature.
		var got struct{ Contents []wireContent }
		_ = json.Unmarshal(b, &got)
		if p := got.Contents[1].Parts; len(p) != 3 || !p[0].Thought || p[1].ThoughtSignature != "CiQB" || p[2].ThoughtSignature != "" {
			t.Errorf("model turn = %s", conv.Marshal(got.Contents[1]))
		}
		jsonEqual(t, b, cliTurnSame)
	})
	for _, other := range others {
		t.Run(string(other.Protocol()), func(t *testing.T) {
			b, err := other.EncodeRequest(r)
			if err != nil {
				t.Fatalf("%s encode: %v", other.Protocol(), err)
			}
			mid, err := other.DecodeRequest(b)
			if err != nil {
				t.Fatalf("%s decode: %v\n%s", other.Protocol(), err, b)
			}
			mid.Model = "gemini-2.5-pro"
			back, err := Codec.EncodeRequest(mid)
			if err != nil {
				t.Fatal(err)
			}
			var got, want map[string]json.RawMessage
			_ = json.Unmarshal(back, &got)
			_ = json.Unmarshal([]byte(cliTurnBack), &want)
			for _, k := range []string{"systemInstruction", "contents", "tools"} {
				jsonEqual(t, got[k], string(want[k]))
			}
			jsonEqual(t, got["generationConfig"], roundTripConfig[other.Protocol()])
		})
	}
}

// A Gemini upstream's call reaches a client of another protocol, which
// returns it with its result on the next turn: the signature Gemini gave
// is back on the call (from the conversation's store), without the id the
// codec made up, and the result is named after the call.
func TestSignatureSurvivesAnotherClient(t *testing.T) {
	upstream := `{"candidates":[{"content":{"role":"model","parts":[{"text":"Reading."},
		{"functionCall":{"name":"read_file","args":{"absolute_path":"/w/a.go"}},"thoughtSignature":"CiQBsig"}]},"finishReason":"STOP"}],
		"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3}}`
	want := `{"contents":[{"role":"user","parts":[{"text":"read it"}]},
		{"role":"model","parts":[{"text":"Reading."},{"functionCall":{"name":"read_file","args":{"absolute_path":"/w/a.go"}},"thoughtSignature":"CiQBsig"}]},
		{"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"output":"package a"}}}]}],
		"tools":[{"functionDeclarations":[{"name":"read_file","parametersJsonSchema":{"type":"object","properties":{}}}]}]}`
	for _, client := range others {
		for _, stream := range []bool{false, true} {
			t.Run(string(client.Protocol())+map[bool]string{false: "", true: " stream"}[stream], func(t *testing.T) {
				store := NewSignatureStore(1<<20, time.Hour)
				g := ForConversation(store, "conv-1")
				req := &conv.Request{From: client.Protocol(), Model: "m", Tools: []conv.Tool{{Name: "read_file", Schema: conv.EmptySchema}},
					Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{text("read it")}}}}
				resp := upstreamAnswer(t, g, upstream, stream)
				// The client reads the answer in its own protocol…
				body, err := client.EncodeResponse(resp, req)
				if err != nil {
					t.Fatal(err)
				}
				seen, err := client.DecodeResponse(body)
				if err != nil {
					t.Fatalf("%v\n%s", err, body)
				}
				// …and sends it back with the result on its next turn.
				var call conv.Part
				for _, p := range seen.Parts {
					if p.Kind == conv.PartToolCall {
						call = p
					}
				}
				next := *req
				next.Messages = append(next.Messages, conv.Message{Role: conv.RoleAssistant, Parts: seen.Parts},
					conv.Message{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartToolResult, CallID: call.CallID, Content: []conv.Part{text("package a")}}}})
				wire, err := client.EncodeRequest(&next)
				if err != nil {
					t.Fatal(err)
				}
				back, err := client.DecodeRequest(wire)
				if err != nil {
					t.Fatal(err)
				}
				out, err := g.EncodeRequest(back)
				if err != nil {
					t.Fatal(err)
				}
				var got, w map[string]json.RawMessage
				_ = json.Unmarshal(out, &got)
				_ = json.Unmarshal([]byte(want), &w)
				for _, k := range []string{"contents", "tools"} {
					jsonEqual(t, got[k], string(w[k]))
				}
			})
		}
	}
}

// upstreamAnswer decodes a Gemini answer as a whole body, or as a stream
// of that one chunk collected.
func upstreamAnswer(t *testing.T, g conv.Codec, body string, stream bool) *conv.Response {
	t.Helper()
	if !stream {
		resp, err := g.DecodeResponse([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	evs, complete := decodeStream(t, g.StreamDecoder(), body)
	if !complete {
		t.Fatal("stream not complete")
	}
	c := conv.NewCollect()
	for _, ev := range evs {
		c.Add(ev)
	}
	resp, _ := c.Response()
	return resp
}

// Another protocol's stream reaches a Gemini client: every client
// encoder's bytes for a decoded upstream stream are Gemini chunks whose
// parts, collected, are the upstream's answer.
func TestStreamFromEveryUpstream(t *testing.T) {
	resp := &conv.Response{ID: "x", Model: "m", Stop: conv.StopToolUse,
		Parts: []conv.Part{text("Hi"), {Kind: conv.PartToolCall, CallID: "call_1", Name: "f", Args: `{"a":1}`}},
		Usage: conv.Usage{Input: 3, Output: 4}}
	want := `[{"text":"Hi"},{"functionCall":{"id":"call_1","name":"f","args":{"a":1}}},{"text":""}]`
	req := &conv.Request{Model: "gemini-x", Tools: []conv.Tool{{Name: "f"}}}
	enc := Codec.StreamEncoder(req)
	var out []byte
	conv.Replay(resp, func(ev conv.Event) { out = enc.Encode(out, ev) })
	var parts []json.RawMessage
	var last wireResponse
	for _, data := range sseData(t, out) {
		var w wireResponse
		if err := json.Unmarshal([]byte(data), &w); err != nil {
			t.Fatal(err)
		}
		for _, p := range w.Candidates[0].Content.Parts {
			parts = append(parts, conv.Marshal(p))
		}
		last = w
	}
	jsonEqual(t, conv.Marshal(parts), want)
	if last.Candidates[0].FinishReason != "STOP" || last.UsageMetadata == nil || last.UsageMetadata.Prompt != 3 {
		t.Errorf("last chunk %+v", last)
	}
}
