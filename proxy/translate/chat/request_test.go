package chat

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// A DeepSeek/OpenRouter-style client request: leading system and
// developer messages, images, a multi-turn tool history with reasoning,
// a later system message, a PDF, and members the model does not hold.
const fullChatRequest = `{
  "model": "deepseek-chat",
  "messages": [
    {"role": "system", "content": "You are terse."},
    {"role": "developer", "content": [{"type": "text", "text": "Use tools."}, {"type": "text", "text": ""}]},
    {"role": "user", "content": [
      {"type": "text", "text": "What is in this picture, and the weather?"},
      {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K", "detail": "high"}},
      {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}}
    ]},
    {"role": "assistant", "content": null, "reasoning_content": "Need the weather of two cities.",
     "tool_calls": [
       {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"unit\": \"c\", \"city\": \"Paris\"}"}},
       {"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}
     ]},
    {"role": "tool", "tool_call_id": "call_a", "content": "18C"},
    {"role": "tool", "tool_call_id": "call_b", "content": [{"type": "text", "text": "9C"}]},
    {"role": "user", "content": "Thanks. Which is warmer?"},
    {"role": "system", "content": "Answer in one word."},
    {"role": "assistant", "content": "Paris.", "reasoning": "18 > 9"},
    {"role": "user", "content": [{"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"}}]}
  ],
  "tools": [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather now", "parameters": {"type":"object","properties":{"city":{"type":"string"}}}, "strict": true}},
    {"type": "function", "function": {"name": "noop"}},
    {"type": "custom", "custom": {"name": "apply_patch"}}
  ],
  "tool_choice": "required",
  "parallel_tool_calls": false,
  "max_completion_tokens": 1000,
  "max_tokens": 5,
  "temperature": 0,
  "top_p": 0.9,
  "stop": "END",
  "reasoning_effort": "high",
  "user": "u1",
  "prompt_cache_key": "k1",
  "stream": true,
  "stream_options": {"include_usage": true},
  "seed": 7,
  "metadata": {"a": "b"}
}`

func TestDecodeRequestFull(t *testing.T) {
	got, err := Codec.DecodeRequest([]byte(fullChatRequest))
	if err != nil {
		t.Fatal(err)
	}
	want := &conv.Request{
		From: Protocol, Model: "deepseek-chat", Stream: true, IncludeUsage: true,
		System: []conv.Part{text("You are terse."), text("Use tools.")},
		Messages: []conv.Message{
			user(text("What is in this picture, and the weather?"),
				conv.Part{Kind: conv.PartImage, MediaType: "image/png", Data: "iVBORw0K"},
				conv.Part{Kind: conv.PartImage, URL: "https://example.com/cat.jpg"}),
			assistant(reasoning("Need the weather of two cities."),
				call("call_a", "get_weather", `{"city":"Paris","unit":"c"}`),
				call("call_b", "get_weather", `{"city":"Oslo"}`)),
			user(result("call_a", text("18C")), result("call_b", text("9C"))),
			user(text("Thanks. Which is warmer?")),
			system(text("Answer in one word.")),
			assistant(reasoning("18 > 9"), text("Paris.")),
			user(conv.Part{Kind: conv.PartDocument, MediaType: "application/pdf", Data: "JVBERi0x", Filename: "a.pdf"}),
		},
		Tools: []conv.Tool{
			{Name: "get_weather", Description: "Weather now", Schema: raw(`{"type":"object","properties":{"city":{"type":"string"}}}`), Strict: ptr(true)},
			{Name: "noop", Schema: conv.EmptySchema},
		},
		ToolChoice:        conv.ToolChoice{Mode: conv.ChoiceAny},
		ParallelToolCalls: ptr(false),
		MaxTokens:         ptr(int64(1000)),
		Temperature:       ptr(0.0),
		TopP:              ptr(0.9),
		Stop:              []string{"END"},
		Reasoning:         conv.Reasoning{Effort: "high", Enabled: true},
		User:              "u1",
		PromptCacheKey:    "k1",
		Extra:             map[string]json.RawMessage{"seed": raw(`7`), "metadata": raw(`{"a": "b"}`)},
		Dropped:           []string{"tool custom apply_patch"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", got, want)
	}
}

func TestDecodeRequest(t *testing.T) {
	msgs := func(s string) string { return `{"model":"m","messages":[` + s + `]` }
	hi := `{"role":"user","content":"hi"}`
	for _, c := range []struct {
		name, body string
		check      func(*conv.Request) any // what is compared with want
		want       any
	}{
		{"named tool choice, stop array, max_tokens",
			msgs(hi) + `,"tool_choice":{"type":"function","function":{"name":"f"}},"stop":["a","b"],"max_tokens":64}`,
			func(r *conv.Request) any { return []any{r.ToolChoice, r.Stop, *r.MaxTokens} },
			[]any{conv.ToolChoice{Mode: conv.ChoiceTool, Name: "f"}, []string{"a", "b"}, int64(64)}},
		{"tool choice none",
			msgs(hi) + `,"tool_choice":"none"}`,
			func(r *conv.Request) any { return r.ToolChoice },
			conv.ToolChoice{Mode: conv.ChoiceNone}},
		{"reasoning_effort none is not enabled",
			msgs(hi) + `,"reasoning_effort":"none"}`,
			func(r *conv.Request) any { return r.Reasoning },
			conv.Reasoning{Effort: "none"}},
		{"not streamed, nothing asked",
			msgs(hi) + `}`,
			func(r *conv.Request) any {
				return []any{r.Stream, r.IncludeUsage, r.MaxTokens == nil, r.Temperature == nil, r.Reasoning, r.ToolChoice, r.Extra == nil}
			},
			[]any{false, false, true, true, conv.Reasoning{}, conv.ToolChoice{}, true}},
		{"system after a user message stays in place",
			msgs(hi+`,{"role":"developer","content":"later"}`) + `}`,
			func(r *conv.Request) any { return []any{r.System, r.Messages} },
			[]any{[]conv.Part(nil), []conv.Message{user(text("hi")), system(text("later"))}}},
		{"image_url given as a string, content parts in assistant, refusal",
			msgs(`{"role":"user","content":[{"type":"image_url","image_url":"https://x/y.png"}]},`+
				`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"refusal","refusal":"no"}]},`+
				`{"role":"assistant","content":null,"refusal":"I can't."}`) + `}`,
			func(r *conv.Request) any { return r.Messages },
			[]conv.Message{
				user(conv.Part{Kind: conv.PartImage, URL: "https://x/y.png"}),
				assistant(text("a"), text("no")),
				assistant(text("I can't.")),
			}},
		{"tool messages separated by a user message are two user messages",
			msgs(`{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":""}}]},`+
				`{"role":"tool","tool_call_id":"1","content":"a"},{"role":"user","content":"x"},{"role":"tool","tool_call_id":"2","content":""}`) + `}`,
			func(r *conv.Request) any { return r.Messages },
			[]conv.Message{
				assistant(call("1", "f", "{}")),
				user(result("1", text("a"))),
				user(text("x")),
				user(result("2")),
			}},
		{"empty user content is left out",
			msgs(`{"role":"user","content":""},{"role":"user","content":[]},`+hi) + `}`,
			func(r *conv.Request) any { return r.Messages },
			[]conv.Message{user(text("hi"))}},
		{"bare base64 file data is a PDF",
			msgs(`{"role":"user","content":[{"type":"file","file":{"file_data":"JVBE"}}]}`) + `}`,
			func(r *conv.Request) any { return r.Messages[0].Parts[0] },
			conv.Part{Kind: conv.PartDocument, MediaType: "application/pdf", Data: "JVBE"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Codec.DecodeRequest([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.check(r); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	for _, c := range []struct {
		name, body, want string
		unsupported      bool
	}{
		{"not JSON", `{"model":`, "chat request", false},
		{"not an object", `null`, "not a JSON object", false},
		{"no messages", `{"model":"m","messages":[]}`, "messages is empty", false},
		{"unknown role", `{"messages":[{"role":"robot","content":"x"}]}`, `role "robot"`, false},
		{"tool message without id", `{"messages":[{"role":"tool","content":"x"}]}`, "tool_call_id", false},
		{"tool without a name", `{"messages":[{"role":"tool","tool_call_id":"0"}],"tools":[{"type":"function","function":{}}]}`, "a tool without a name", false},
		{"tool call without an id", `{"messages":[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, "a tool call without its id", false},
		{"bad tool_choice", `{"messages":[{"role":"user","content":"x"}],"tool_choice":"sometimes"}`, "tool_choice", false},
		{"audio", `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAA","format":"wav"}}]}]}`, "input_audio", true},
		{"uploaded file", `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-1"}}]}]}`, "file_id", true},
		{"image in a system message", `{"messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://x"}}]}]}`, "image_url", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Codec.DecodeRequest([]byte(c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
			if conv.IsUnsupported(err) != c.unsupported {
				t.Errorf("IsUnsupported(%v) = %v", err, !c.unsupported)
			}
		})
	}
}

// claudeCodeRequest is what an Anthropic client's turn looks like in the
// neutral model: thinking with a signature, text and two tool calls, then
// one user message with both results (one with a screenshot, one an
// error) and the user's next words.
func claudeCodeRequest() *conv.Request {
	return &conv.Request{
		From: anthropic.Protocol, Model: "deepseek-reasoner", Stream: true,
		System: []conv.Part{text("You are Claude Code."), text("Be brief.")},
		Messages: []conv.Message{
			user(text("Fix the layout.")),
			assistant(
				conv.Part{Kind: conv.PartReasoning, Text: "Look first.", Signature: "sig=="},
				text("Let me look."),
				call("toolu_1", "screenshot", `{ "full": true }`),
				call("toolu_2", "Read", `{"path":"a.css"}`)),
			user(
				result("toolu_1", text("Screenshot taken."), conv.Part{Kind: conv.PartImage, MediaType: "image/png", Data: "iVBO"}),
				conv.Part{Kind: conv.PartToolResult, CallID: "toolu_2", IsError: true, Content: []conv.Part{text("<tool_use_error>no such file</tool_use_error>")}},
				text("Use flexbox.")),
			assistant(call("toolu_3", "Bash", `{"command":"ls"}`)),
			user(result("toolu_3")),
		},
		Tools: []conv.Tool{
			{Name: "screenshot", Description: "Take a screenshot", Schema: raw(`{"type":"object","properties":{"full":{"type":"boolean"}}}`)},
			{Name: "Read", Schema: nil, Strict: ptr(false)},
			{Kind: conv.ToolCustom, Name: "apply_patch", Description: "Patch files.", Format: raw(`{"type":"grammar","syntax":"lark","definition":"start: patch"}`)},
		},
		ToolChoice:        conv.ToolChoice{Mode: conv.ChoiceTool, Name: "Read"},
		ParallelToolCalls: ptr(true),
		MaxTokens:         ptr(int64(32000)),
		Temperature:       ptr(0.0),
		Reasoning:         conv.Reasoning{BudgetTokens: 10000, Enabled: true},
		User:              "user_abc",
		Extra:             map[string]json.RawMessage{"metadata": raw(`{"user_id":"x"}`), "betas": raw(`["b"]`)},
	}
}

func TestEncodeRequest(t *testing.T) {
	for _, c := range []struct {
		name string
		req  func() *conv.Request
		want string
	}{
		{"claude code turn: tool messages right after the calls, the screenshot merged into the next user message",
			claudeCodeRequest, `{
  "model": "deepseek-reasoner",
  "messages": [
    {"role": "system", "content": "You are Claude Code.\n\nBe brief."},
    {"role": "user", "content": "Fix the layout."},
    {"role": "assistant", "content": "Let me look.", "reasoning_content": "Look first.", "tool_calls": [
      {"id": "toolu_1", "type": "function", "function": {"name": "screenshot", "arguments": "{\"full\":true}"}},
      {"id": "toolu_2", "type": "function", "function": {"name": "Read", "arguments": "{\"path\":\"a.css\"}"}}
    ]},
    {"role": "tool", "tool_call_id": "toolu_1", "content": "Screenshot taken."},
    {"role": "tool", "tool_call_id": "toolu_2", "content": "<tool_use_error>no such file</tool_use_error>"},
    {"role": "user", "content": [
      {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
      {"type": "text", "text": "Use flexbox."}
    ]},
    {"role": "assistant", "tool_calls": [{"id": "toolu_3", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\":\"ls\"}"}}]},
    {"role": "tool", "tool_call_id": "toolu_3", "content": "(no output)"}
  ],
  "tools": [
    {"type": "function", "function": {"name": "screenshot", "description": "Take a screenshot", "parameters": {"type":"object","properties":{"full":{"type":"boolean"}}}}},
    {"type": "function", "function": {"name": "Read", "parameters": {"type":"object","properties":{}}, "strict": false}},
    {"type": "function", "function": {"name": "apply_patch", "description": "Patch files.\n\nThe input must follow this lark grammar:\nstart: patch",
      "parameters": {"type":"object","properties":{"input":{"type":"string","description":"the tool's input, as free-form text"}},"required":["input"]}}}
  ],
  "tool_choice": {"type": "function", "function": {"name": "Read"}},
  "parallel_tool_calls": true,
  "max_tokens": 32000,
  "temperature": 0,
  "reasoning_effort": "medium",
  "user": "user_abc",
  "stream": true,
  "stream_options": {"include_usage": true}
}`},
		{"codex turn: a later developer message joins the one leading system message; shared OpenAI members only, max_completion_tokens, xhigh folds, no tools means no tool_choice",
			func() *conv.Request {
				return &conv.Request{
					From: responses.Protocol, Model: "openai/gpt-5-mini",
					Messages: []conv.Message{
						user(text("run it")),
						assistant(reasoning("r1"), call("fc_1", "shell__exec", `{"cmd":["ls"]}`)),
						system(text("Approvals changed.")),
						user(result("fc_1", text("a\nb"))),
					},
					ToolChoice:        conv.ToolChoice{Mode: conv.ChoiceAuto},
					ParallelToolCalls: ptr(false),
					MaxTokens:         ptr(int64(4096)),
					TopP:              ptr(0.0),
					Stop:              []string{"###"},
					Reasoning:         conv.Reasoning{Effort: "xhigh", Enabled: true, Summary: "auto"},
					PromptCacheKey:    "sess-1",
					Extra: map[string]json.RawMessage{
						"store": raw(`false`), "metadata": raw(`{"k":"v"}`),
						"include": raw(`["reasoning.encrypted_content"]`), "text": raw(`{"verbosity":"low"}`),
					},
				}
			}, `{
  "model": "openai/gpt-5-mini",
  "messages": [
    {"role": "system", "content": "Approvals changed."},
    {"role": "user", "content": "run it"},
    {"role": "assistant", "reasoning_content": "r1", "tool_calls": [{"id": "fc_1", "type": "function", "function": {"name": "shell__exec", "arguments": "{\"cmd\":[\"ls\"]}"}}]},
    {"role": "tool", "tool_call_id": "fc_1", "content": "a\nb"}
  ],
  "max_completion_tokens": 4096,
  "top_p": 0,
  "stop": ["###"],
  "reasoning_effort": "high",
  "prompt_cache_key": "sess-1",
  "store": false,
  "metadata": {"k": "v"}
}`},
		{"chat client: all Extra back; modeled members win; empty and reasoning-only turns dropped; documents",
			func() *conv.Request {
				return &conv.Request{
					From: Protocol, Model: "glm-4.6",
					Messages: []conv.Message{
						user(text(""), conv.Part{Kind: conv.PartDocument, MediaType: "text/plain", Text: "notes", Filename: "n.txt"},
							conv.Part{Kind: conv.PartDocument, MediaType: "application/pdf", Data: "JVBE"}),
						assistant(reasoning("thinking without a tool call is not sent back")),
						assistant(reasoning("so is this"), text("Done.")),
						system(text("")),
						system(text("Now in French.")),
						user(),
						user(conv.Part{Kind: conv.PartImage, URL: "https://x/y.png"}),
					},
					Reasoning: conv.Reasoning{Effort: "minimal", Enabled: true},
					Extra:     map[string]json.RawMessage{"model": raw(`"other"`), "n": raw(`1`), "logit_bias": raw(`{"50256":-100}`)},
				}
			}, `{
  "model": "glm-4.6",
  "messages": [
    {"role": "system", "content": "Now in French."},
    {"role": "user", "content": [
      {"type": "text", "text": "notes"},
      {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBE", "filename": "document.pdf"}}
    ]},
    {"role": "assistant", "content": "Done."},
    {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}
  ],
  "reasoning_effort": "minimal",
  "n": 1,
  "logit_bias": {"50256": -100}
}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Codec.EncodeRequest(c.req())
			if err != nil {
				t.Fatal(err)
			}
			jsonEqual(t, got, c.want)
		})
	}
}

func TestEncodeRequestUnsupported(t *testing.T) {
	for _, c := range []struct {
		name string
		req  conv.Request
		want string
	}{
		{"previous_response_id", conv.Request{PreviousResponseID: "resp_1", Messages: []conv.Message{user(text("x"))}}, "previous_response_id"},
		{"document by URL", conv.Request{Messages: []conv.Message{user(conv.Part{Kind: conv.PartDocument, URL: "https://x/a.pdf"})}}, "https://x/a.pdf"},
		{"document by URL in a tool result", conv.Request{Messages: []conv.Message{user(result("1", conv.Part{Kind: conv.PartDocument, URL: "https://x/b.pdf"}))}}, "https://x/b.pdf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Codec.EncodeRequest(&c.req)
			if !conv.IsUnsupported(err) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want Unsupported naming %q", err, c.want)
			}
		})
	}
}

// A tool result that holds only an image still gets a (non-empty) tool
// message, and the image follows it in a user message.
func TestEncodeToolResultImageOnly(t *testing.T) {
	r := &conv.Request{Model: "kimi-k2", Messages: []conv.Message{
		assistant(call("c1", "shot", "{}")),
		user(result("c1", conv.Part{Kind: conv.PartImage, MediaType: "image/jpeg", Data: "/9j/"}), text("and?")),
	}}
	got, err := Codec.EncodeRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, got, `{"model":"kimi-k2","messages":[
  {"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"shot","arguments":"{}"}}]},
  {"role":"tool","tool_call_id":"c1","content":"(the tool returned the content in the next message)"},
  {"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/"}},{"type":"text","text":"and?"}]}
]}`)
}

func TestReasoningModel(t *testing.T) {
	for model, want := range map[string]bool{
		"o1": true, "o3-mini": true, "o4-mini-2025-04-16": true, "gpt-5": true, "GPT-5.1-codex": true, "openai/o3": true,
		"gpt-4o": false, "gpt-4.1": false, "deepseek-chat": false, "omni-moderation": false, "qwen3-coder": false, "": false,
	} {
		if got := reasoningModel(model); got != want {
			t.Errorf("reasoningModel(%q) = %v", model, got)
		}
	}
}

func TestReasoningEffort(t *testing.T) {
	for _, c := range []struct {
		in   conv.Reasoning
		want string
	}{
		{conv.Reasoning{}, ""},
		{conv.Reasoning{Effort: "low", Enabled: true}, "low"},
		{conv.Reasoning{Effort: "minimal", Enabled: true}, "minimal"},
		{conv.Reasoning{Effort: "max", Enabled: true}, "high"},
		{conv.Reasoning{Effort: "none"}, "none"},
		{conv.Reasoning{BudgetTokens: 2000, Enabled: true}, "low"},
		{conv.Reasoning{BudgetTokens: 60000, Enabled: true}, "high"},
		{conv.Reasoning{BudgetTokens: 60000}, ""},
		{conv.Reasoning{Enabled: true}, ""}, // adaptive thinking without a budget: the upstream's default
	} {
		if got := reasoningEffort(c.in); got != c.want {
			t.Errorf("reasoningEffort(%+v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// What the Chat model holds survives EncodeRequest then DecodeRequest
// (a later system message comes back in the leading one, where Chat wants
// every system text).
func TestRequestRoundTrip(t *testing.T) {
	r := &conv.Request{
		From: Protocol, Model: "qwen3-max", Stream: true, IncludeUsage: true,
		System: []conv.Part{text("sys")},
		Messages: []conv.Message{
			user(text("look"), conv.Part{Kind: conv.PartImage, MediaType: "image/webp", Data: "UklG"}, conv.Part{Kind: conv.PartImage, URL: "https://x/a.png"}),
			assistant(reasoning("plan"), text("Calling."), call("c1", "f", `{"a":[1,2],"b":"<&>"}`), call("c2", "g", "{}")),
			user(result("c1", text("one")), result("c2", text("two"))),
			user(text("ok")),
			assistant(text("fine")),
			user(conv.Part{Kind: conv.PartDocument, MediaType: "application/pdf", Data: "JVBE", Filename: "x.pdf"}),
		},
		Tools: []conv.Tool{
			{Name: "f", Description: "F", Schema: raw(`{"type":"object","properties":{"a":{"type":"array"}}}`), Strict: ptr(true)},
			{Name: "g", Schema: conv.EmptySchema},
		},
		ToolChoice:        conv.ToolChoice{Mode: conv.ChoiceTool, Name: "g"},
		ParallelToolCalls: ptr(true),
		MaxTokens:         ptr(int64(100)),
		Temperature:       ptr(0.0),
		TopP:              ptr(1.0),
		Stop:              []string{"x", "y"},
		Reasoning:         conv.Reasoning{Effort: "low", Enabled: true},
		User:              "u",
		PromptCacheKey:    "p",
		Extra:             map[string]json.RawMessage{"seed": raw(`1`), "response_format": raw(`{"type":"json_object"}`)},
	}
	body, err := Codec.EncodeRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Codec.DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("round trip\n got %+v\nwant %+v\nbody %s", back, r, body)
	}
}
