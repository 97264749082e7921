package gemini

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// The request decoder reads in one pass what encoding/json decoded
// before (decode_read.go); these bodies pin the corners of its semantics.
func TestDecodeRequestAsEncodingJSON(t *testing.T) {
	text := func(s string) conv.Part { return conv.Part{Kind: conv.PartText, Text: s} }
	user := func(parts ...conv.Part) conv.Message { return conv.Message{Role: conv.RoleUser, Parts: parts} }
	result := func(text string, isError bool) conv.Part {
		p := conv.Part{Kind: conv.PartToolResult, CallID: "c", Name: "f", IsError: isError}
		if text != "" {
			p.Content = []conv.Part{{Kind: conv.PartText, Text: text}}
		}
		return p
	}
	call := conv.Message{Role: conv.RoleAssistant, Parts: []conv.Part{{Kind: conv.PartToolCall, CallID: "c", Name: "f", Args: "{}"}}}
	results := func(response string) string {
		return `{"contents":[{"role":"model","parts":[{"functionCall":{"id":"c","name":"f"}}]},
			{"role":"user","parts":[{"functionResponse":{"id":"c","name":"f","response":` + response + `}}]}]}`
	}
	tests := []struct {
		name, body string
		want       conv.Request
	}{{
		name: "member names in another case, ſ for s and the Kelvin sign for k",
		body: `{"contents":[{"ROLE":"model","Parts":[{"TEXT":"a","thoughtſignature":"S"},{"thought":true,"text":"b"}]}],
			"generationConfig":{"thinkingConfig":{"thin\u212aingLevel":"HIGH","INCLUDETHOUGHTS":true}},
			"toolConfig":{"functioncallingconfig":{"MODE":"none"}}}`,
		want: conv.Request{
			Messages: []conv.Message{{Role: conv.RoleAssistant, Parts: []conv.Part{
				{Kind: conv.PartText, Text: "a", GeminiSignature: "S"}, {Kind: conv.PartReasoning, Text: "b"},
			}}},
			Reasoning:  conv.Reasoning{Effort: "high", Enabled: true, Summary: "auto"},
			ToolChoice: conv.ToolChoice{Mode: conv.ChoiceNone},
		},
	}, {
		name: "top-level and generationConfig names match exactly; the others travel as they are",
		body: `{"contents":[{"parts":[{"text":"x"}]}],"Contents":null,"MODEL":"m",
			"generationConfig":{"MaxOutputTokens":5,"topK": 1,"topK":2}}`,
		want: conv.Request{
			Messages: []conv.Message{user(text("x"))},
			Extra: map[string]json.RawMessage{
				"Contents": json.RawMessage(`null`), "MODEL": json.RawMessage(`"m"`),
				"generationConfig": json.RawMessage(`{"MaxOutputTokens":5,"topK":2}`),
			},
		},
	}, {
		name: "a duplicate top-level member replaces the first, a null one too",
		body: `{"model":"a","model":null,"contents":5,"contents":[{"parts":[{"text":"x"}]}],
			"generationConfig":{"maxOutputTokens":"no"},"generationConfig":{"temperature":1},
			"systemInstruction":{"parts":[{"text":"s"}]},"systemInstruction":null}`,
		want: conv.Request{Messages: []conv.Message{user(text("x"))}, Temperature: f64(1)},
	}, {
		name: "a duplicate part member updates the first's object, and reads its elements over the first's",
		body: `{"contents":[{"parts":[{"text":"a"},{"text":"b"}],"parts":[{"thought":true}]}]}`,
		want: conv.Request{Messages: []conv.Message{user(conv.Part{Kind: conv.PartReasoning, Text: "a"})}},
	}, {
		name: "a duplicate functionCall updates the first",
		body: `{"contents":[{"role":"model","parts":[{"functionCall":{"id":"c","args":{"x":1}},"functionCall":{"name":"f"}}]}]}`,
		want: conv.Request{Messages: []conv.Message{{Role: conv.RoleAssistant, Parts: []conv.Part{
			{Kind: conv.PartToolCall, CallID: "c", Name: "f", Args: `{"x":1}`},
		}}}},
	}, {
		name: "a response with its only member output given twice",
		body: results(`{"output":"a","output":"b"}`),
		want: conv.Request{Messages: []conv.Message{call, user(result("b", false))}},
	}, {
		name: "a null error",
		body: results(`{"error":null}`),
		want: conv.Request{Messages: []conv.Message{call, user(result("", true))}},
	}, {
		name: "output next to another member",
		body: results(`{"output":"a", "x":1}`),
		want: conv.Request{Messages: []conv.Message{call, user(result(`{"output":"a", "x":1}`, false))}},
	}, {
		name: "output not a string",
		body: results(`{"output":{"a":"\u00e9"}}`),
		want: conv.Request{Messages: []conv.Message{call, user(result(`{"output":{"a":"\u00e9"}}`, false))}},
	}, {
		name: "a response of another case, an empty one, a string",
		body: `{"contents":[{"role":"model","parts":[{"functionCall":{"id":"a","name":"f"}},{"functionCall":{"id":"b","name":"f"}},{"functionCall":{"id":"c","name":"f"}}]},
			{"role":"user","parts":[{"functionResponse":{"id":"a","name":"f","response":{"Output":"x"}}},
				{"functionResponse":{"id":"b","name":"f","response":{}}},{"functionResponse":{"id":"c","name":"f","response":"s"}}]}]}`,
		want: conv.Request{Messages: []conv.Message{
			{Role: conv.RoleAssistant, Parts: []conv.Part{
				{Kind: conv.PartToolCall, CallID: "a", Name: "f", Args: "{}"},
				{Kind: conv.PartToolCall, CallID: "b", Name: "f", Args: "{}"},
				{Kind: conv.PartToolCall, CallID: "c", Name: "f", Args: "{}"},
			}},
			user(
				conv.Part{Kind: conv.PartToolResult, CallID: "a", Name: "f", Content: []conv.Part{text(`{"Output":"x"}`)}},
				conv.Part{Kind: conv.PartToolResult, CallID: "b", Name: "f", Content: []conv.Part{text(`{}`)}},
				conv.Part{Kind: conv.PartToolResult, CallID: "c", Name: "f", Content: []conv.Part{text(`"s"`)}},
			),
		}},
	}, {
		name: "hosted tools named by their first member as written; empty declarations are none",
		body: `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"GoogleSearch":{},"functionDeclarations":null},null,{},{"functionDeclarations":[]}]}`,
		want: conv.Request{Messages: []conv.Message{user(text("x"))}, Dropped: []string{"tool GoogleSearch", "tool"}},
	}, {
		name: "invalid UTF-8 reads as U+FFFD",
		body: "{\"contents\":[{\"parts\":[{\"text\":\"a\xffb\"}]}]}",
		want: conv.Request{Messages: []conv.Message{user(text("a\uFFFDb"))}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Codec.DecodeRequest([]byte(tt.body))
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			tt.want.From = Protocol
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

// A body the decoder refuses is refused with the error of the member
// checked first, once the whole body is known to be JSON.
func TestDecodeRequestRefusalOrder(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"contents":[{"role":"x"}],"model":5}`, "gemini request: model: "},
		{`{"contents":[{"role":"x"}],"model":5,"tools":[`, "gemini request: unexpected end of JSON input"},
		{`{"tools":5,"contents":null}`, "gemini request: contents: missing"},
		{`{"contents":[{"role":"x"},{"parts":5}]}`, "gemini request: contents: "},
		{`{"toolConfig":[],"contents":[{"role":"x"}]}`, `gemini request: contents[0]: unknown role "x"`},
		{`{"toolConfig":[],"contents":[],"tools":[{},7]}`, "gemini request: tools[1]: "},
		{`{"generationConfig":{"thinkingConfig":1,"maxOutputTokens":1.5},"contents":[]}`, "gemini request: generationConfig.maxOutputTokens: "},
		{`null`, "gemini request: the body is not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			_, err := Codec.DecodeRequest([]byte(tt.body))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("DecodeRequest: %v, want %q…", err, tt.want)
			}
		})
	}
}
