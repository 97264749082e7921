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

func text(s string) conv.Part { return conv.Part{Kind: conv.PartText, Text: s} }

func TestEncodeRequest(t *testing.T) {
	tests := []struct {
		name string
		req  conv.Request
		want string
	}{{
		name: "system, text, later system messages hoisted",
		req: conv.Request{From: anthropic.Protocol, Model: "gemini-2.5-pro", Stream: true,
			System: []conv.Part{text("be brief")},
			Messages: []conv.Message{
				{Role: conv.RoleUser, Parts: []conv.Part{text("hi")}},
				{Role: conv.RoleSystem, Parts: []conv.Part{text("env")}},
				{Role: conv.RoleAssistant, Parts: []conv.Part{text("hello"), {Kind: conv.PartReasoning, Text: "Claude's", Signature: "EqA"}}},
			}},
		want: `{"systemInstruction":{"parts":[{"text":"be brief"},{"text":"env"}]},
			"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"hello"}]}]}`,
	}, {
		name: "calls: made-up ids removed, the first call of a turn signed by the fallback, results named after their calls",
		req: conv.Request{From: chat.Protocol, Messages: []conv.Message{
			{Role: conv.RoleAssistant, Parts: []conv.Part{
				{Kind: conv.PartToolCall, CallID: "gmcall_h0_0", Name: "read", Args: `{"p":"a"}`},
				{Kind: conv.PartToolCall, CallID: "call_2", Name: "ls", Args: ``},
			}},
			{Role: conv.RoleUser, Parts: []conv.Part{
				{Kind: conv.PartToolResult, CallID: "gmcall_h0_0", Content: []conv.Part{text("data")}},
				{Kind: conv.PartToolResult, CallID: "call_2", IsError: true, Content: []conv.Part{text("denied")}},
				{Kind: conv.PartToolResult, CallID: "unknown", Content: []conv.Part{text(`{"k":1}`), {Kind: conv.PartImage, MediaType: "image/png", Data: "iVBO"}}},
				text("next"),
			}},
		}},
		want: `{"contents":[
			{"role":"model","parts":[{"functionCall":{"name":"read","args":{"p":"a"}},"thoughtSignature":"skip_thought_signature_validator"},
				{"functionCall":{"id":"call_2","name":"ls","args":{}}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"read","response":{"output":"data"}}},
				{"functionResponse":{"id":"call_2","name":"ls","response":{"error":"denied"}}},
				{"functionResponse":{"id":"unknown","name":"tool","response":{"k":1}}},{"inlineData":{"mimeType":"image/png","data":"iVBO"}},
				{"text":"next"}]}]}`,
	}, {
		name: "Gemini's own signatures and thoughts go back where they were",
		req: conv.Request{From: Protocol, Messages: []conv.Message{
			{Role: conv.RoleAssistant, Parts: []conv.Part{
				{Kind: conv.PartReasoning, Text: "hm", GeminiSignature: "T"},
				{Kind: conv.PartReasoning, Text: "unsigned"},
				{Kind: conv.PartToolCall, CallID: "c1", Name: "f", Args: `{}`, GeminiSignature: "S"},
				{Kind: conv.PartToolCall, CallID: "c2", Name: "f", Args: `{}`},
			}},
			{Role: conv.RoleAssistant, Parts: []conv.Part{{Kind: conv.PartText, Text: "done", GeminiSignature: "E"}}},
		}},
		want: `{"contents":[{"role":"model","parts":[{"text":"hm","thought":true,"thoughtSignature":"T"},{"text":"unsigned","thought":true},
			{"functionCall":{"id":"c1","name":"f","args":{}},"thoughtSignature":"S"},{"functionCall":{"id":"c2","name":"f","args":{}}}]},
			{"role":"model","parts":[{"text":"done","thoughtSignature":"E"}]}]}`,
	}, {
		name: "another protocol's reasoning stays out",
		req: conv.Request{From: chat.Protocol, Messages: []conv.Message{
			{Role: conv.RoleAssistant, Parts: []conv.Part{{Kind: conv.PartReasoning, Text: "reasoning_content"}, text("ok")}},
		}},
		want: `{"contents":[{"role":"model","parts":[{"text":"ok"}]}]}`,
	}, {
		name: "media: base64 inline, URLs as file data with a MIME type, text documents as text",
		req: conv.Request{Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{
			{Kind: conv.PartImage, MediaType: "image/jpeg", Data: "/9j/"},
			{Kind: conv.PartImage, URL: "https://x/a.webp?s=1"},
			{Kind: conv.PartDocument, MediaType: "application/pdf", Data: "JVBE"},
			{Kind: conv.PartDocument, Text: "plain doc"},
		}}}},
		want: `{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"image/jpeg","data":"/9j/"}},
			{"fileData":{"mimeType":"image/webp","fileUri":"https://x/a.webp?s=1"}},
			{"inlineData":{"mimeType":"application/pdf","data":"JVBE"}},{"text":"plain doc"}]}]}`,
	}, {
		name: "tools, a named choice, limits, sampling (0 is a value), at most five stops",
		req: conv.Request{From: anthropic.Protocol, Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{text("x")}}},
			Tools: []conv.Tool{
				{Name: "a", Description: "A", Schema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"p":{"type":"string","$schema":"x"}},"additionalProperties":false}`)},
				{Kind: conv.ToolCustom, Name: "apply_patch"},
				{Name: "n"},
			},
			ToolChoice: conv.ToolChoice{Mode: conv.ChoiceTool, Name: "a"},
			MaxTokens:  i64(512), Temperature: f64(0), TopP: f64(1), Stop: []string{"1", "2", "3", "4", "5", "6"}},
		want: `{"contents":[{"role":"user","parts":[{"text":"x"}]}],
			"tools":[{"functionDeclarations":[
				{"name":"a","description":"A","parametersJsonSchema":{"type":"object","properties":{"p":{"type":"string"}},"additionalProperties":false}},
				{"name":"apply_patch","parametersJsonSchema":{"type":"object","properties":{"input":{"type":"string","description":"the tool's input, as free-form text"}},"required":["input"]}},
				{"name":"n","parametersJsonSchema":{"type":"object","properties":{}}}]}],
			"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["a"]}},
			"generationConfig":{"maxOutputTokens":512,"temperature":0,"topP":1,"stopSequences":["1","2","3","4","5"]}}`,
	}, {
		name: "a Gemini client's other members and generation config come back",
		req: conv.Request{From: Protocol, Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{text("x")}}},
			MaxTokens: i64(9),
			Extra: map[string]json.RawMessage{
				"safetySettings":   json.RawMessage(`[]`),
				"generationConfig": json.RawMessage(`{"topK":40,"responseMimeType":"application/json"}`),
			}},
		want: `{"contents":[{"role":"user","parts":[{"text":"x"}]}],"safetySettings":[],
			"generationConfig":{"topK":40,"responseMimeType":"application/json","maxOutputTokens":9}}`,
	}, {
		name: "another protocol's members do not",
		req: conv.Request{From: chat.Protocol, Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{text("x")}}},
			Extra: map[string]json.RawMessage{"seed": json.RawMessage(`1`)}},
		want: `{"contents":[{"role":"user","parts":[{"text":"x"}]}]}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Codec.EncodeRequest(&tt.req)
			if err != nil {
				t.Fatalf("EncodeRequest: %v", err)
			}
			jsonEqual(t, b, tt.want)
		})
	}
}

func TestEncodeToolChoice(t *testing.T) {
	tests := []struct {
		choice conv.ToolChoice
		want   string
	}{
		{conv.ToolChoice{}, ``},
		{conv.ToolChoice{Mode: conv.ChoiceAuto}, `{"functionCallingConfig":{"mode":"AUTO"}}`},
		{conv.ToolChoice{Mode: conv.ChoiceAny}, `{"functionCallingConfig":{"mode":"ANY"}}`},
		{conv.ToolChoice{Mode: conv.ChoiceNone}, `{"functionCallingConfig":{"mode":"NONE"}}`},
		{conv.ToolChoice{Mode: conv.ChoiceTool, Name: "f"}, `{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f"]}}`},
	}
	for _, tt := range tests {
		t.Run(string(tt.choice.Mode), func(t *testing.T) {
			r := conv.Request{Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{text("x")}}},
				Tools: []conv.Tool{{Name: "f"}}, ToolChoice: tt.choice}
			b, err := Codec.EncodeRequest(&r)
			if err != nil {
				t.Fatal(err)
			}
			var got struct{ ToolConfig json.RawMessage }
			_ = json.Unmarshal(b, &got)
			if tt.want == "" {
				if got.ToolConfig != nil {
					t.Errorf("toolConfig = %s, want none", got.ToolConfig)
				}
				return
			}
			jsonEqual(t, got.ToolConfig, tt.want)
		})
	}
}

func TestEncodeThinking(t *testing.T) {
	tests := []struct {
		name  string
		from  conv.Protocol
		model string
		r     conv.Reasoning
		want  string
	}{
		{"nothing asked", chat.Protocol, "gemini-2.5-pro", conv.Reasoning{}, ``},
		{"effort to Gemini 3 is a level", chat.Protocol, "gemini-3-pro-preview", conv.Reasoning{Effort: "medium", Enabled: true}, `{"thinkingLevel":"medium","includeThoughts":true}`},
		{"xhigh folds into high", responses.Protocol, "gemini-3-flash", conv.Reasoning{Effort: "xhigh", Enabled: true}, `{"thinkingLevel":"high","includeThoughts":true}`},
		{"effort to 2.5 is a budget", chat.Protocol, "gemini-2.5-flash", conv.Reasoning{Effort: "low", Enabled: true}, `{"thinkingBudget":2048,"includeThoughts":true}`},
		{"a budget stays a budget", anthropic.Protocol, "gemini-3-pro", conv.Reasoning{BudgetTokens: 5000, Enabled: true}, `{"thinkingBudget":5000,"includeThoughts":true}`},
		{"on without either is dynamic", anthropic.Protocol, "gemini-2.5-pro", conv.Reasoning{Enabled: true}, `{"thinkingBudget":-1,"includeThoughts":true}`},
		{"none is off", chat.Protocol, "gemini-2.5-flash", conv.Reasoning{Effort: "none"}, `{"thinkingBudget":0}`},
		{"none on Gemini 3 is its lowest level", chat.Protocol, "gemini-3-flash", conv.Reasoning{Effort: "none"}, `{"thinkingLevel":"minimal"}`},
		{"a Gemini client's includeThoughts is its own", Protocol, "gemini-2.5-pro", conv.Reasoning{Enabled: true}, `{"thinkingBudget":-1}`},
		{"summaries asked", Protocol, "gemini-2.5-pro", conv.Reasoning{Enabled: true, Summary: "auto"}, `{"thinkingBudget":-1,"includeThoughts":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := conv.Request{From: tt.from, Model: tt.model, Reasoning: tt.r,
				Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{text("x")}}}}
			b, err := Codec.EncodeRequest(&r)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				GenerationConfig struct{ ThinkingConfig json.RawMessage }
			}
			_ = json.Unmarshal(b, &got)
			if tt.want == "" {
				if got.GenerationConfig.ThinkingConfig != nil {
					t.Errorf("thinkingConfig = %s, want none", got.GenerationConfig.ThinkingConfig)
				}
				return
			}
			jsonEqual(t, got.GenerationConfig.ThinkingConfig, tt.want)
		})
	}
}

// A call the store knows gets its signature back from it, for the
// conversation it was recorded in only; one it does not know, the fallback
// on the first call of the turn.
func TestEncodeSignaturesFromStore(t *testing.T) {
	s := NewSignatureStore(1<<20, time.Hour)
	s.Put("conv-a", "toolu_1", "SIG1")
	s.Put("conv-a", "toolu_2", "SIG2")
	r := conv.Request{From: anthropic.Protocol, Messages: []conv.Message{
		{Role: conv.RoleAssistant, Parts: []conv.Part{
			{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "f", Args: `{}`},
			{Kind: conv.PartToolCall, CallID: "toolu_2", Name: "f", Args: `{}`},
		}},
		{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartToolResult, CallID: "toolu_1"}, {Kind: conv.PartToolResult, CallID: "toolu_2"}}},
	}}
	tests := []struct {
		name, key  string
		sig1, sig2 string
	}{
		{"its conversation", "conv-a", "SIG1", "SIG2"},
		{"another conversation", "conv-b", fallbackSignature, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ForConversation(s, tt.key).EncodeRequest(&r)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Contents []wireContent
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			parts := got.Contents[0].Parts
			if parts[0].ThoughtSignature != tt.sig1 || parts[1].ThoughtSignature != tt.sig2 {
				t.Errorf("signatures = %q, %q; want %q, %q", parts[0].ThoughtSignature, parts[1].ThoughtSignature, tt.sig1, tt.sig2)
			}
		})
	}
}

func TestEncodeRequestUnsupported(t *testing.T) {
	for _, r := range []conv.Request{
		{PreviousResponseID: "resp_1", Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{text("x")}}}},
		{Messages: []conv.Message{{Role: conv.RoleAssistant, Parts: []conv.Part{{Kind: conv.PartReasoning, Text: "foreign"}}}}},
	} {
		if _, err := Codec.EncodeRequest(&r); !conv.IsUnsupported(err) {
			t.Errorf("EncodeRequest(%+v) = %v, want Unsupported", r, err)
		}
	}
}

func TestSchemaOut(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"null", `null`, `{"type":"object","properties":{}}`},
		{"$schema removed, not a property named so", `{"$schema":"x","type":"object","properties":{"$schema":{"type":"string","$schema":"y"}}}`,
			`{"type":"object","properties":{"$schema":{"type":"string"}}}`},
		{"a union at the top becomes one object, none required",
			`{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"number"}}}]}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}}}`},
		{"allOf keeps every requirement",
			`{"type":"object","allOf":[{"properties":{"a":{}},"required":["a"]},{"properties":{"b":{}},"required":["b"]}]}`,
			`{"type":"object","properties":{"a":{},"b":{}},"required":["a","b"]}`},
		{"nested unions stay", `{"type":"object","properties":{"x":{"oneOf":[{"type":"string"},{"type":"null"}]}}}`,
			`{"type":"object","properties":{"x":{"oneOf":[{"type":"string"},{"type":"null"}]}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jsonEqual(t, schemaOut(json.RawMessage(tt.in)), tt.want)
		})
	}
}
