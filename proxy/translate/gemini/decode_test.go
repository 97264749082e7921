package gemini

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name string
		body string
		want conv.Request
	}{{
		name: "text and system instruction",
		body: `{"systemInstruction":{"parts":[{"text":"be brief"},{"text":""}]},
			"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"hello"}]}]}`,
		want: conv.Request{
			System: []conv.Part{{Kind: conv.PartText, Text: "be brief"}},
			Messages: []conv.Message{
				{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartText, Text: "hi"}}},
				{Role: conv.RoleAssistant, Parts: []conv.Part{{Kind: conv.PartText, Text: "hello"}}},
			},
		},
	}, {
		name: "images, a PDF and a file",
		body: `{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"image/png","data":"iVBO"}},
			{"inlineData":{"mimeType":"application/pdf","data":"JVBE"}},{"fileData":{"mimeType":"image/jpeg","fileUri":"https://x/y.jpg"}}]}]}`,
		want: conv.Request{Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{
			{Kind: conv.PartImage, MediaType: "image/png", Data: "iVBO"},
			{Kind: conv.PartDocument, MediaType: "application/pdf", Data: "JVBE"},
			{Kind: conv.PartImage, MediaType: "image/jpeg", URL: "https://x/y.jpg"},
		}}}},
	}, {
		name: "calls without ids get made-up ids and their results pair by name and order",
		body: `{"contents":[{"role":"user","parts":[{"text":"go"}]},
			{"role":"model","parts":[{"text":"thinking","thought":true,"thoughtSignature":"T1"},
				{"functionCall":{"name":"read","args":{"b":2,"a":1}},"thoughtSignature":"S1"},{"functionCall":{"name":"ls"}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"ls","response":{"output":"a b"}}},
				{"functionResponse":{"name":"read","response":{"error":"no such file"}}}]}]}`,
		want: conv.Request{Messages: []conv.Message{
			{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartText, Text: "go"}}},
			{Role: conv.RoleAssistant, Parts: []conv.Part{
				{Kind: conv.PartReasoning, Text: "thinking", GeminiSignature: "T1"},
				{Kind: conv.PartToolCall, CallID: "gmcall_h1_0", Name: "read", Args: `{"a":1,"b":2}`, GeminiSignature: "S1"},
				{Kind: conv.PartToolCall, CallID: "gmcall_h1_1", Name: "ls", Args: `{}`},
			}},
			{Role: conv.RoleUser, Parts: []conv.Part{
				{Kind: conv.PartToolResult, CallID: "gmcall_h1_1", Name: "ls", Content: []conv.Part{{Kind: conv.PartText, Text: "a b"}}},
				{Kind: conv.PartToolResult, CallID: "gmcall_h1_0", Name: "read", IsError: true, Content: []conv.Part{{Kind: conv.PartText, Text: "no such file"}}},
			}},
		}},
	}, {
		name: "calls with ids, a JSON result and an image result",
		body: `{"contents":[{"role":"model","parts":[{"functionCall":{"id":"c1","name":"shot","args":{}}}]},
			{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"shot","response":{"w":1,"h":2},
				"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBO"}}]}}]}]}`,
		want: conv.Request{Messages: []conv.Message{
			{Role: conv.RoleAssistant, Parts: []conv.Part{{Kind: conv.PartToolCall, CallID: "c1", Name: "shot", Args: `{}`}}},
			{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartToolResult, CallID: "c1", Name: "shot", Content: []conv.Part{
				{Kind: conv.PartText, Text: `{"w":1,"h":2}`}, {Kind: conv.PartImage, MediaType: "image/png", Data: "iVBO"},
			}}}},
		}},
	}, {
		name: "a signature on an empty text part goes onto the part before it",
		body: `{"contents":[{"role":"model","parts":[{"text":"answer"},{"text":"","thoughtSignature":"S"}]}]}`,
		want: conv.Request{Messages: []conv.Message{{Role: conv.RoleAssistant, Parts: []conv.Part{
			{Kind: conv.PartText, Text: "answer", GeminiSignature: "S"},
		}}}},
	}, {
		name: "but never onto a function call",
		body: `{"contents":[{"role":"model","parts":[{"functionCall":{"id":"a","name":"f"},"thoughtSignature":"S"},{"functionCall":{"id":"b","name":"f"}},{"text":"","thoughtSignature":"T"}]}]}`,
		want: conv.Request{Messages: []conv.Message{{Role: conv.RoleAssistant, Parts: []conv.Part{
			{Kind: conv.PartToolCall, CallID: "a", Name: "f", Args: "{}", GeminiSignature: "S"},
			{Kind: conv.PartToolCall, CallID: "b", Name: "f", Args: "{}"},
		}}}},
	}, {
		name: "an Anthropic signature marked for a Gemini client goes back to Part.Signature",
		body: `{"contents":[{"role":"model","parts":[{"text":"hm","thought":true,"thoughtSignature":"ccmesh.anthropic.signature.EqA"},
			{"text":"","thought":true,"thoughtSignature":"ccmesh.anthropic.redacted.RD"},{"text":"ok"}]}]}`,
		want: conv.Request{Messages: []conv.Message{{Role: conv.RoleAssistant, Parts: []conv.Part{
			{Kind: conv.PartReasoning, Text: "hm", Signature: "EqA"},
			{Kind: conv.PartReasoning, Redacted: "RD"},
			{Kind: conv.PartText, Text: "ok"},
		}}}},
	}, {
		name: "tools: JSON schema, OpenAPI schema, none; hosted tools dropped",
		body: `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[
			{"name":"a","description":"A","parametersJsonSchema":{"type":"object","properties":{"p":{"type":"string"}}}},
			{"name":"b","parameters":{"type":"OBJECT","properties":{"q":{"type":"STRING","nullable":true},"r":{"type":"ARRAY","items":{"type":"INTEGER"}}},"propertyOrdering":["q","r"]}},
			{"name":"c"}]},{"googleSearch":{}}],
			"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["b"]}}}`,
		want: conv.Request{
			Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartText, Text: "x"}}}},
			Tools: []conv.Tool{
				{Name: "a", Description: "A", Schema: json.RawMessage(`{"type":"object","properties":{"p":{"type":"string"}}}`)},
				{Name: "b", Schema: json.RawMessage(`{"properties":{"q":{"type":["string","null"]},"r":{"items":{"type":"integer"},"type":"array"}},"type":"object"}`)},
				{Name: "c", Schema: conv.EmptySchema},
			},
			ToolChoice: conv.ToolChoice{Mode: conv.ChoiceTool, Name: "b"},
			Dropped:    []string{"tool googleSearch"},
		},
	}, {
		name: "generation config: limits, sampling, thinking; the rest stays for Gemini",
		body: `{"contents":[{"parts":[{"text":"x"}]}],"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}],
			"generationConfig":{"maxOutputTokens":100,"temperature":0,"topP":0.9,"stopSequences":["END"],"topK":40,
				"thinkingConfig":{"thinkingBudget":-1,"includeThoughts":true}}}`,
		want: conv.Request{
			Messages:  []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartText, Text: "x"}}}},
			MaxTokens: i64(100), Temperature: f64(0), TopP: f64(0.9), Stop: []string{"END"},
			Reasoning: conv.Reasoning{Enabled: true, Summary: "auto"},
			Extra: map[string]json.RawMessage{
				"safetySettings":   json.RawMessage(`[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]`),
				"generationConfig": json.RawMessage(`{"topK":40}`),
			},
		},
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

func TestDecodeThinkingConfig(t *testing.T) {
	tests := []struct {
		config string
		want   conv.Reasoning
	}{
		{`{"thinkingLevel":"HIGH"}`, conv.Reasoning{Effort: "high", Enabled: true}},
		{`{"thinkingLevel":"low","includeThoughts":true}`, conv.Reasoning{Effort: "low", Enabled: true, Summary: "auto"}},
		{`{"thinkingBudget":8192}`, conv.Reasoning{BudgetTokens: 8192, Enabled: true}},
		{`{"thinkingBudget":0}`, conv.Reasoning{Effort: "none"}},
		{`{"thinkingBudget":-1}`, conv.Reasoning{Enabled: true}},
		{`{"includeThoughts":false}`, conv.Reasoning{}},
	}
	for _, tt := range tests {
		t.Run(tt.config, func(t *testing.T) {
			r, err := Codec.DecodeRequest([]byte(`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":` + tt.config + `}}`))
			if err != nil {
				t.Fatal(err)
			}
			if r.Reasoning != tt.want {
				t.Errorf("Reasoning = %+v, want %+v", r.Reasoning, tt.want)
			}
		})
	}
}

func TestDecodeToolConfig(t *testing.T) {
	tests := []struct {
		config string
		want   conv.ToolChoice
	}{
		{`{"mode":"AUTO"}`, conv.ToolChoice{Mode: conv.ChoiceAuto}},
		{`{"mode":"ANY"}`, conv.ToolChoice{Mode: conv.ChoiceAny}},
		{`{"mode":"ANY","allowedFunctionNames":["a","b"]}`, conv.ToolChoice{Mode: conv.ChoiceAny}},
		{`{"mode":"ANY","allowedFunctionNames":["a"]}`, conv.ToolChoice{Mode: conv.ChoiceTool, Name: "a"}},
		{`{"mode":"NONE"}`, conv.ToolChoice{Mode: conv.ChoiceNone}},
		{`{"mode":"VALIDATED"}`, conv.ToolChoice{Mode: conv.ChoiceAuto}},
	}
	for _, tt := range tests {
		t.Run(tt.config, func(t *testing.T) {
			r, err := Codec.DecodeRequest([]byte(`{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"a"},{"name":"b"}]}],"toolConfig":{"functionCallingConfig":` + tt.config + `}}`))
			if err != nil {
				t.Fatal(err)
			}
			if r.ToolChoice != tt.want {
				t.Errorf("ToolChoice = %+v, want %+v", r.ToolChoice, tt.want)
			}
		})
	}
}

func TestDecodeRequestRefuses(t *testing.T) {
	for _, body := range []string{
		`null`, `[]`, `{}`, `{"contents":5}`,
		`{"contents":[{"role":"tool","parts":[{"text":"x"}]}]}`,
		`{"contents":[{"role":"model","parts":[{"functionCall":{"args":{}}}]}]}`,
		`{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"description":"no name"}]}]}`,
	} {
		t.Run(body, func(t *testing.T) {
			if r, err := Codec.DecodeRequest([]byte(body)); err == nil {
				t.Errorf("DecodeRequest(%s) = %+v, want an error", body, r)
			}
		})
	}
}
