package responses

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// codexBody is a request as Codex CLI sends it mid-session: instructions,
// two developer messages and the environment context before the prompt,
// then a history with reasoning, parallel function calls, an apply_patch
// custom tool call, a namespaced (MCP) call whose output holds an image,
// a hosted web search, and a later developer message.
const codexBody = `{
  "model": "gpt-5.1-codex",
  "instructions": "You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI.",
  "input": [
    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions instructions>sandbox_mode is workspace-write</permissions instructions>"}]},
    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<collaboration_mode>default</collaboration_mode>"}]},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/home/u/proj</cwd>\n  <shell>bash</shell>\n</environment_context>"}]},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the failing test"}]},
    {"type": "reasoning", "id": "rs_0a1", "summary": [{"type": "summary_text", "text": "**Inspecting tests**"}, {"type": "summary_text", "text": "I will run the suite."}], "content": null, "encrypted_content": "gAAAAABo-enc-1"},
    {"type": "function_call", "name": "exec_command", "arguments": "{\"workdir\": \"/home/u/proj\", \"cmd\": \"go test ./...\"}", "call_id": "call_A"},
    {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"git status\"}", "call_id": "call_B"},
    {"type": "function_call_output", "call_id": "call_A", "output": "--- FAIL: TestParse (0.00s)"},
    {"type": "function_call_output", "call_id": "call_B", "output": "On branch main"},
    {"type": "custom_tool_call", "status": "completed", "call_id": "call_C", "name": "apply_patch", "input": "*** Begin Patch\n*** Update File: parse.go\n@@\n-\treturn a\n+\treturn b\n*** End Patch\n"},
    {"type": "custom_tool_call_output", "call_id": "call_C", "output": "Success. Updated the following files:\nM parse.go\n"},
    {"type": "function_call", "namespace": "mcp__docs", "name": "read", "arguments": "{\"path\":\"README.md\"}", "call_id": "call_D"},
    {"type": "function_call_output", "call_id": "call_D", "output": [{"type": "input_text", "text": "the diagram:"}, {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]},
    {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "go test flags"}},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Fixed: TestParse passes."}]},
    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<model_switch>now gpt-5.1-codex-max</model_switch>"}]},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "thanks, now commit"}]}
  ],
  "tools": [
    {"type": "function", "name": "exec_command", "description": "Runs a command in a PTY.", "strict": false, "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}, "workdir": {"type": "string"}}, "required": ["cmd"], "additionalProperties": false}},
    {"type": "function", "name": "update_plan", "description": "Updates the task plan.", "strict": true, "parameters": {"type": "object", "properties": {"plan": {"type": "array", "items": {"type": "string"}}}, "required": ["plan"], "additionalProperties": false}},
    {"type": "custom", "name": "apply_patch", "description": "Use the apply_patch tool to edit files.", "format": {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch hunk+ end_patch\nbegin_patch: \"*** Begin Patch\" LF"}},
    {"type": "namespace", "name": "mcp__docs", "description": "Tools of the docs MCP server.", "tools": [
      {"type": "function", "name": "read", "description": "Reads a document.", "strict": false, "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
      {"type": "function", "name": "list", "description": "Lists documents.", "parameters": null}
    ]},
    {"type": "web_search", "external_web_access": false},
    {"type": "tool_search", "execution": "client", "description": "Searches deferred tools."}
  ],
  "tool_choice": "auto",
  "parallel_tool_calls": true,
  "reasoning": {"effort": "medium", "summary": "auto"},
  "store": false,
  "stream": true,
  "include": ["reasoning.encrypted_content"],
  "prompt_cache_key": "0199b1c2-7d5e-7a31-9c0e-3f2a1b4c5d6e",
  "text": {"verbosity": "low"},
  "client_metadata": {"x-codex-turn": "3"}
}`

// codexWant is codexBody in the neutral model.
func codexWant() *conv.Request {
	text := func(s string) conv.Part { return conv.Part{Kind: conv.PartText, Text: s} }
	return &conv.Request{
		From:   Protocol,
		Model:  "gpt-5.1-codex",
		Stream: true,
		System: []conv.Part{
			text("You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI."),
			text("<permissions instructions>sandbox_mode is workspace-write</permissions instructions>"),
			text("<collaboration_mode>default</collaboration_mode>"),
		},
		Messages: []conv.Message{
			{Role: conv.RoleUser, Parts: []conv.Part{text("<environment_context>\n  <cwd>/home/u/proj</cwd>\n  <shell>bash</shell>\n</environment_context>")}},
			{Role: conv.RoleUser, Parts: []conv.Part{text("fix the failing test")}},
			{Role: conv.RoleAssistant, Parts: []conv.Part{
				{Kind: conv.PartReasoning, Text: "**Inspecting tests**\n\nI will run the suite.", ItemID: "rs_0a1", Encrypted: "gAAAAABo-enc-1"},
				{Kind: conv.PartToolCall, CallID: "call_A", Name: "exec_command", Args: `{"cmd":"go test ./...","workdir":"/home/u/proj"}`},
				{Kind: conv.PartToolCall, CallID: "call_B", Name: "exec_command", Args: `{"cmd":"git status"}`},
			}},
			{Role: conv.RoleUser, Parts: []conv.Part{
				{Kind: conv.PartToolResult, CallID: "call_A", Content: []conv.Part{text("--- FAIL: TestParse (0.00s)")}},
				{Kind: conv.PartToolResult, CallID: "call_B", Content: []conv.Part{text("On branch main")}},
			}},
			{Role: conv.RoleAssistant, Parts: []conv.Part{
				{Kind: conv.PartToolCall, CallID: "call_C", Name: "apply_patch", Args: conv.CustomArgs("*** Begin Patch\n*** Update File: parse.go\n@@\n-\treturn a\n+\treturn b\n*** End Patch\n")},
			}},
			{Role: conv.RoleUser, Parts: []conv.Part{
				{Kind: conv.PartToolResult, CallID: "call_C", Content: []conv.Part{text("Success. Updated the following files:\nM parse.go\n")}},
			}},
			{Role: conv.RoleAssistant, Parts: []conv.Part{
				{Kind: conv.PartToolCall, CallID: "call_D", Name: "mcp__docs__read", Args: `{"path":"README.md"}`},
			}},
			{Role: conv.RoleUser, Parts: []conv.Part{
				{Kind: conv.PartToolResult, CallID: "call_D", Content: []conv.Part{text("the diagram:"), {Kind: conv.PartImage, MediaType: "image/png", Data: "iVBORw0KGgo="}}},
			}},
			{Role: conv.RoleAssistant, Parts: []conv.Part{text("Fixed: TestParse passes.")}},
			{Role: conv.RoleSystem, Parts: []conv.Part{text("<model_switch>now gpt-5.1-codex-max</model_switch>")}},
			{Role: conv.RoleUser, Parts: []conv.Part{text("thanks, now commit")}},
		},
		Tools: []conv.Tool{
			{Kind: conv.ToolFunction, Name: "exec_command", Description: "Runs a command in a PTY.", Strict: ptr(false),
				Schema: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"},"workdir":{"type":"string"}},"required":["cmd"],"additionalProperties":false}`)},
			{Kind: conv.ToolFunction, Name: "update_plan", Description: "Updates the task plan.", Strict: ptr(true),
				Schema: json.RawMessage(`{"type":"object","properties":{"plan":{"type":"array","items":{"type":"string"}}},"required":["plan"],"additionalProperties":false}`)},
			{Kind: conv.ToolCustom, Name: "apply_patch", Description: "Use the apply_patch tool to edit files.", Schema: conv.CustomSchema,
				Format: json.RawMessage(`{"type":"grammar","syntax":"lark","definition":"start: begin_patch hunk+ end_patch\nbegin_patch: \"*** Begin Patch\" LF"}`)},
			{Kind: conv.ToolFunction, Name: "mcp__docs__read", Description: "Reads a document.", Strict: ptr(false), Namespace: "mcp__docs",
				Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
			{Kind: conv.ToolFunction, Name: "mcp__docs__list", Description: "Lists documents.", Namespace: "mcp__docs", Schema: conv.EmptySchema},
		},
		ToolChoice:        conv.ToolChoice{Mode: conv.ChoiceAuto},
		ParallelToolCalls: ptr(true),
		Reasoning:         conv.Reasoning{Effort: "medium", Summary: "auto", Enabled: true},
		PromptCacheKey:    "0199b1c2-7d5e-7a31-9c0e-3f2a1b4c5d6e",
		Extra: map[string]json.RawMessage{
			"store":             json.RawMessage(`false`),
			"include":           json.RawMessage(`["reasoning.encrypted_content"]`),
			"text":              json.RawMessage(`{"verbosity":"low"}`),
			"client_metadata":   json.RawMessage(`{"x-codex-turn":"3"}`),
			"ccmesh.namespaces": json.RawMessage(`{"mcp__docs":"Tools of the docs MCP server."}`),
		},
		Dropped: []string{"tool web_search", "tool tool_search", "input item web_search_call"},
	}
}

func TestDecodeCodexRequest(t *testing.T) {
	got, err := Codec.DecodeRequest([]byte(codexBody))
	if err != nil {
		t.Fatal(err)
	}
	assertRequest(t, got, codexWant())
}

func TestDecodeRequest(t *testing.T) {
	text := func(s string) conv.Part { return conv.Part{Kind: conv.PartText, Text: s} }
	for _, c := range []struct {
		name string
		body string
		want *conv.Request
	}{{
		name: "string input and OpenAI SDK defaults",
		body: `{"model":"gpt-5-mini","input":"Say hi","temperature":0,"top_p":0,"max_output_tokens":256,"user":"u-1","metadata":{"app":"x"}}`,
		want: &conv.Request{From: Protocol, Model: "gpt-5-mini",
			Messages:    []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{text("Say hi")}}},
			Temperature: ptr(0.0), TopP: ptr(0.0), MaxTokens: ptr[int64](256), User: "u-1",
			Extra: map[string]json.RawMessage{"metadata": json.RawMessage(`{"app":"x"}`)}},
	}, {
		name: "an Anthropic signature and redacted thinking come back from encrypted_content",
		body: `{"model":"claude-sonnet-4-5","input":[
			{"role":"user","content":"what is 2+2?"},
			{"type":"reasoning","id":"rs_tok_0","summary":[{"type":"summary_text","text":"Simple arithmetic."}],"encrypted_content":"` + conv.SignaturePrefix + `EqQBCkYIBxgCKkDsig=="},
			{"type":"reasoning","id":"rs_tok_1","summary":[],"encrypted_content":"` + conv.RedactedPrefix + `EmwKAhgBEgy3redacted"},
			{"type":"message","role":"assistant","content":[{"type":"output_text","text":"4"}]},
			{"role":"user","content":[{"type":"input_text","text":"and 3+3?"}]}],
			"reasoning":{"effort":"high"}}`,
		want: &conv.Request{From: Protocol, Model: "claude-sonnet-4-5",
			Messages: []conv.Message{
				{Role: conv.RoleUser, Parts: []conv.Part{text("what is 2+2?")}},
				{Role: conv.RoleAssistant, Parts: []conv.Part{
					{Kind: conv.PartReasoning, Text: "Simple arithmetic.", ItemID: "rs_tok_0", Signature: "EqQBCkYIBxgCKkDsig=="},
					{Kind: conv.PartReasoning, ItemID: "rs_tok_1", Redacted: "EmwKAhgBEgy3redacted"},
					text("4"),
				}},
				{Role: conv.RoleUser, Parts: []conv.Part{text("and 3+3?")}},
			},
			Reasoning: conv.Reasoning{Effort: "high", Enabled: true}},
	}, {
		name: "system before the first message is System, later ones RoleSystem; reasoning_text without summary",
		body: `{"input":[
			{"role":"system","content":"Be brief."},
			{"role":"developer","content":[{"type":"input_text","text":"Use tools."},{"type":"input_text","text":""}]},
			{"role":"user","content":[{"type":"input_text","text":"hi"},{"type":"input_image","image_url":"https://example.com/a.png"},{"type":"input_file","file_data":"data:application/pdf;base64,JVBERi0x","filename":"spec.pdf"},{"type":"input_file","file_url":"https://example.com/b.pdf"},{"type":"input_file","file_data":"data:text/plain;base64,aGVsbG8=","filename":"notes.txt"}]},
			{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"raw thoughts"}]},
			{"role":"assistant","content":[{"type":"refusal","refusal":"I can't."}]},
			{"role":"system","content":"Later rule."},
			{"type":"item_reference","id":"msg_old"}],
			"reasoning":{"effort":"none","summary":"concise"},"tool_choice":"none","previous_response_id":"resp_prev"}`,
		want: &conv.Request{From: Protocol,
			System: []conv.Part{text("Be brief."), text("Use tools.")},
			Messages: []conv.Message{
				{Role: conv.RoleUser, Parts: []conv.Part{text("hi"),
					{Kind: conv.PartImage, URL: "https://example.com/a.png"},
					{Kind: conv.PartDocument, MediaType: "application/pdf", Data: "JVBERi0x", Filename: "spec.pdf"},
					{Kind: conv.PartDocument, URL: "https://example.com/b.pdf"},
					{Kind: conv.PartDocument, MediaType: "text/plain", Text: "hello", Filename: "notes.txt"},
				}},
				{Role: conv.RoleAssistant, Parts: []conv.Part{{Kind: conv.PartReasoning, Text: "raw thoughts", ItemID: "rs_1"}, text("I can't.")}},
				{Role: conv.RoleSystem, Parts: []conv.Part{text("Later rule.")}},
			},
			ToolChoice:         conv.ToolChoice{Mode: conv.ChoiceNone},
			Reasoning:          conv.Reasoning{Effort: "none", Summary: "concise"},
			PreviousResponseID: "resp_prev",
			Dropped:            []string{"input item item_reference"}},
	}, {
		name: "named custom tool choice, empty messages and empty reasoning left out",
		body: `{"input":[{"role":"user","content":""},{"role":"user","content":[]},{"type":"reasoning","summary":[]},{"role":"user","content":"go"}],
			"tools":[{"type":"custom","name":"apply_patch"},{"type":"function","name":"f"},{"type":"local_shell"}],"tool_choice":{"type":"custom","name":"apply_patch"}}`,
		want: &conv.Request{From: Protocol,
			Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{text("go")}}},
			Tools: []conv.Tool{
				{Kind: conv.ToolCustom, Name: "apply_patch", Schema: conv.CustomSchema},
				{Kind: conv.ToolFunction, Name: "f", Schema: conv.EmptySchema},
			},
			ToolChoice: conv.ToolChoice{Mode: conv.ChoiceTool, Name: "apply_patch"},
			Dropped:    []string{"tool local_shell"}},
	}, {
		name: "allowed_tools keeps its mode; a hosted choice is dropped",
		body: `{"input":"x","tool_choice":{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"f"}]}}`,
		want: &conv.Request{From: Protocol,
			Messages:   []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{text("x")}}},
			ToolChoice: conv.ToolChoice{Mode: conv.ChoiceAny},
			Dropped:    []string{"tool_choice allowed_tools"}},
	}} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Codec.DecodeRequest([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			assertRequest(t, got, c.want)
		})
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`[1,2]`, "cannot unmarshal"},
		{`null`, "not a JSON object"},
		{`{"input":42}`, "neither a string nor an array"},
		{`{"input":[{"content":"x"}]}`, "without a type or a role"},
		{`{"input":[{"role":"tool","content":"x"}]}`, `role "tool"`},
		{`{"input":[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]}`, "file_id"},
		{`{"input":[{"role":"user","content":[{"type":"input_file","file_id":"file-2"}]}]}`, "file_id"},
		{`{"input":"x","tool_choice":"sometimes"}`, "tool_choice"},
		{`{"input":"x","tools":[{"type":"function"}]}`, "without a name"},
		{`{"input":[{"type":"function_call_output","output":"o"}]}`, "a tool result without the id of its call"},
		{`{"input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "a tool call without its id"},
		{`{"input":"x","temperature":"hot"}`, "temperature"},
	} {
		_, err := Codec.DecodeRequest([]byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeRequest(%s) = %v, want an error containing %q", c.body, err, c.want)
		}
	}
}

func TestEncodeRequest(t *testing.T) {
	text := func(s string) conv.Part { return conv.Part{Kind: conv.PartText, Text: s} }
	for _, c := range []struct {
		name string
		req  *conv.Request
		want string
	}{{
		name: "from Anthropic: signatures stay behind, strict defaults to false, budget becomes an effort",
		req: &conv.Request{From: anthropic.Protocol, Model: "gpt-5.1", Stream: true,
			System: []conv.Part{text("You are Claude Code."), text("Be concise.")},
			Messages: []conv.Message{
				{Role: conv.RoleUser, Parts: []conv.Part{text("look"), {Kind: conv.PartImage, MediaType: "image/jpeg", Data: "/9j/4AAQ"},
					{Kind: conv.PartDocument, MediaType: "application/pdf", Data: "JVBERi0x"}, {Kind: conv.PartDocument, MediaType: "text/plain", Text: "hello", Filename: "a.txt"}, text("")}},
				{Role: conv.RoleAssistant, Parts: []conv.Part{
					{Kind: conv.PartReasoning, Text: "thinking", Signature: "sig"},
					{Kind: conv.PartReasoning, Redacted: "red"},
					{Kind: conv.PartReasoning, Text: "plain, unverifiable"},
					{Kind: conv.PartReasoning, Encrypted: conv.SignaturePrefix + "leak"},
					{Kind: conv.PartReasoning, Text: "from gpt", Encrypted: "gAAAA-enc", ItemID: "rs_9"},
					text("Reading it."),
					{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "Read", Args: `{ "file_path": "/a" }`},
				}},
				{Role: conv.RoleUser, Parts: []conv.Part{
					{Kind: conv.PartToolResult, CallID: "toolu_1", Content: []conv.Part{text("line 1"), text("line 2")}, IsError: true},
					{Kind: conv.PartToolResult, CallID: "toolu_2", Content: []conv.Part{text("shot:"), {Kind: conv.PartImage, MediaType: "image/png", Data: "iVBO"}}},
					text("continue"),
				}},
				{Role: conv.RoleSystem, Parts: []conv.Part{text("reminder")}},
				{Role: conv.RoleUser, Parts: []conv.Part{text("")}},
			},
			Tools: []conv.Tool{
				{Kind: conv.ToolFunction, Name: "Read", Description: "Reads a file", Schema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}}}`)},
				{Kind: conv.ToolFunction, Name: "Ping", Schema: nil, Strict: ptr(true)},
			},
			ToolChoice:        conv.ToolChoice{Mode: conv.ChoiceTool, Name: "Read"},
			ParallelToolCalls: ptr(false),
			MaxTokens:         ptr[int64](32000),
			Temperature:       ptr(0.0),
			Stop:              []string{"\n\nHuman:"},
			Reasoning:         conv.Reasoning{BudgetTokens: 10000, Enabled: true},
			User:              "user_abc",
			Extra:             map[string]json.RawMessage{"context_management": json.RawMessage(`{}`)},
		},
		want: `{
			"model": "gpt-5.1",
			"instructions": "You are Claude Code.\n\nBe concise.",
			"input": [
				{"type": "message", "role": "user", "content": [
					{"type": "input_text", "text": "look"},
					{"type": "input_image", "image_url": "data:image/jpeg;base64,/9j/4AAQ"},
					{"type": "input_file", "file_data": "data:application/pdf;base64,JVBERi0x", "filename": "document.pdf"},
					{"type": "input_file", "file_data": "data:text/plain;base64,aGVsbG8=", "filename": "a.txt"}]},
				{"type": "reasoning", "id": "rs_9", "summary": [{"type": "summary_text", "text": "from gpt"}], "encrypted_content": "gAAAA-enc"},
				{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Reading it."}]},
				{"type": "function_call", "call_id": "toolu_1", "name": "Read", "arguments": "{\"file_path\":\"/a\"}"},
				{"type": "function_call_output", "call_id": "toolu_1", "output": "line 1\nline 2"},
				{"type": "function_call_output", "call_id": "toolu_2", "output": [{"type": "input_text", "text": "shot:"}, {"type": "input_image", "image_url": "data:image/png;base64,iVBO"}]},
				{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "continue"}]},
				{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "reminder"}]}
			],
			"tools": [
				{"type": "function", "name": "Read", "description": "Reads a file", "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}}, "strict": false},
				{"type": "function", "name": "Ping", "parameters": {"type": "object", "properties": {}}, "strict": true}
			],
			"tool_choice": {"type": "function", "name": "Read"},
			"parallel_tool_calls": false,
			"max_output_tokens": 32000,
			"temperature": 0,
			"reasoning": {"effort": "medium", "summary": "auto"},
			"user": "user_abc",
			"store": false,
			"include": ["reasoning.encrypted_content"],
			"stream": true
		}`,
	}, {
		name: "from Chat: shared members cross (its store wins), no tools means no tool_choice, xhigh becomes high",
		req: &conv.Request{From: chat.Protocol, Model: "gpt-5",
			Messages:          []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{text("hi")}}},
			ToolChoice:        conv.ToolChoice{Mode: conv.ChoiceAuto},
			ParallelToolCalls: ptr(true),
			TopP:              ptr(0.0),
			Reasoning:         conv.Reasoning{Effort: "xhigh", Enabled: true},
			PromptCacheKey:    "k1",
			Extra: map[string]json.RawMessage{
				"store": json.RawMessage(`true`), "metadata": json.RawMessage(`{"a":"b"}`), "seed": json.RawMessage(`7`),
				"logit_bias": json.RawMessage(`{"50256":-100}`), "stream_options": json.RawMessage(`{"include_usage":true}`),
			},
		},
		want: `{"model":"gpt-5","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],
			"top_p":0,"reasoning":{"effort":"high","summary":"auto"},"prompt_cache_key":"k1",
			"include":["reasoning.encrypted_content"],"store":true,"metadata":{"a":"b"},"seed":7}`,
	}, {
		name: "from Chat: effort none is passed on; no reasoning means no include",
		req: &conv.Request{From: chat.Protocol, Model: "gpt-5.1",
			Messages:  []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{text("hi")}}},
			Reasoning: conv.Reasoning{Effort: "none"}},
		want: `{"model":"gpt-5.1","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],"reasoning":{"effort":"none"},"store":false}`,
	}, {
		name: "from Responses: namespaces and custom tools given back, its own members as they were",
		req: &conv.Request{From: Protocol, Model: "gpt-5.1-codex",
			Messages: []conv.Message{
				{Role: conv.RoleUser, Parts: []conv.Part{text("go")}},
				{Role: conv.RoleAssistant, Parts: []conv.Part{
					{Kind: conv.PartToolCall, CallID: "c1", Name: "apply_patch", Args: conv.CustomArgs("*** Begin Patch\n*** End Patch\n")},
					{Kind: conv.PartToolCall, CallID: "c2", Name: "mcp__docs__read", Args: `{"path":"a"}`},
				}},
				{Role: conv.RoleUser, Parts: []conv.Part{
					{Kind: conv.PartToolResult, CallID: "c1", Content: []conv.Part{text("Done!")}},
					{Kind: conv.PartToolResult, CallID: "c2"},
				}},
			},
			Tools: []conv.Tool{
				{Kind: conv.ToolFunction, Name: "mcp__docs__read", Namespace: "mcp__docs", Schema: conv.EmptySchema},
				{Kind: conv.ToolCustom, Name: "apply_patch", Description: "Edit files.", Schema: conv.CustomSchema, Format: json.RawMessage(`{"type":"grammar","syntax":"lark","definition":"start: x"}`)},
				{Kind: conv.ToolFunction, Name: "mcp__docs__list", Namespace: "mcp__docs", Strict: ptr(false), Schema: conv.EmptySchema},
				{Kind: conv.ToolFunction, Name: "mcp__web__get", Namespace: "mcp__web", Schema: conv.EmptySchema},
			},
			ToolChoice:         conv.ToolChoice{Mode: conv.ChoiceTool, Name: "mcp__docs__read"},
			Reasoning:          conv.Reasoning{Effort: "xhigh", Summary: "detailed", Enabled: true},
			PreviousResponseID: "resp_1",
			Extra: map[string]json.RawMessage{
				"store": json.RawMessage(`false`), "include": json.RawMessage(`["reasoning.encrypted_content"]`),
				"ccmesh.namespaces": json.RawMessage(`{"mcp__docs":"Docs server."}`),
			},
		},
		want: `{"model":"gpt-5.1-codex",
			"input":[
				{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},
				{"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":"*** Begin Patch\n*** End Patch\n"},
				{"type":"function_call","call_id":"c2","name":"read","namespace":"mcp__docs","arguments":"{\"path\":\"a\"}"},
				{"type":"custom_tool_call_output","call_id":"c1","output":"Done!"},
				{"type":"function_call_output","call_id":"c2","output":""}],
			"tools":[
				{"type":"namespace","name":"mcp__docs","description":"Docs server.","tools":[
					{"type":"function","name":"read","parameters":{"type":"object","properties":{}},"strict":false},
					{"type":"function","name":"list","parameters":{"type":"object","properties":{}},"strict":false}]},
				{"type":"custom","name":"apply_patch","description":"Edit files.","format":{"type":"grammar","syntax":"lark","definition":"start: x"}},
				{"type":"namespace","name":"mcp__web","description":"mcp__web","tools":[
					{"type":"function","name":"get","parameters":{"type":"object","properties":{}},"strict":false}]}],
			"tool_choice":{"type":"function","name":"read"},
			"reasoning":{"effort":"xhigh","summary":"detailed"},
			"previous_response_id":"resp_1",
			"store":false,"include":["reasoning.encrypted_content"]}`,
	}, {
		name: "namespaced tools go flat to a request from another protocol",
		req: &conv.Request{From: anthropic.Protocol, Model: "m",
			Messages: []conv.Message{{Role: conv.RoleAssistant, Parts: []conv.Part{{Kind: conv.PartToolCall, CallID: "c", Name: "ns__f", Args: ""}}}},
			Tools:    []conv.Tool{{Kind: conv.ToolFunction, Name: "ns__f", Namespace: "ns", Schema: conv.EmptySchema}},
		},
		want: `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"ns__f","arguments":"{}"}],
			"tools":[{"type":"function","name":"ns__f","parameters":{"type":"object","properties":{}},"strict":false}],"store":false}`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Codec.EncodeRequest(c.req)
			if err != nil {
				t.Fatal(err)
			}
			assertJSON(t, got, c.want)
		})
	}
}

// TestRequestRoundTrip: what a Responses client sent survives
// DecodeRequest(EncodeRequest(r)); the instructions and leading developer
// messages come back as one System text, and hosted tools stay dropped.
func TestRequestRoundTrip(t *testing.T) {
	r, err := Codec.DecodeRequest([]byte(codexBody))
	if err != nil {
		t.Fatal(err)
	}
	body, err := Codec.EncodeRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Codec.DecodeRequest(body)
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	want := codexWant()
	want.System = []conv.Part{{Kind: conv.PartText, Text: joinTexts(want.System)}}
	want.Dropped = nil
	want.Tools[4].Strict = ptr(false) // an unset strict is sent as false
	assertRequest(t, back, want)
}

// TestRequestRoundTripFromOtherProtocols: a neutral request from another
// protocol keeps its conversation through a Responses body.
func TestRequestRoundTripFromOtherProtocols(t *testing.T) {
	text := func(s string) conv.Part { return conv.Part{Kind: conv.PartText, Text: s} }
	msgs := []conv.Message{
		{Role: conv.RoleUser, Parts: []conv.Part{text("hi"), {Kind: conv.PartImage, URL: "https://x/y.png"}, {Kind: conv.PartDocument, MediaType: "application/pdf", Data: "JVBE", Filename: "f.pdf"}}},
		{Role: conv.RoleAssistant, Parts: []conv.Part{
			{Kind: conv.PartReasoning, Text: "why", Encrypted: "enc", ItemID: "rs_1"},
			text("calling"),
			{Kind: conv.PartToolCall, CallID: "c1", Name: "Bash", Args: `{"command":"ls"}`},
			{Kind: conv.PartToolCall, CallID: "c2", Name: "Bash", Args: `{"command":"pwd"}`},
		}},
		{Role: conv.RoleUser, Parts: []conv.Part{
			{Kind: conv.PartToolResult, CallID: "c1", Content: []conv.Part{text("a b")}},
			{Kind: conv.PartToolResult, CallID: "c2", Content: []conv.Part{text("/"), {Kind: conv.PartImage, MediaType: "image/png", Data: "iVBO"}}},
		}},
		{Role: conv.RoleUser, Parts: []conv.Part{text("thanks")}},
		{Role: conv.RoleSystem, Parts: []conv.Part{text("be nice")}},
	}
	tools := []conv.Tool{{Kind: conv.ToolFunction, Name: "Bash", Description: "Runs bash", Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}}
	r := &conv.Request{From: anthropic.Protocol, Model: "gpt-5", System: []conv.Part{text("sys")}, Messages: msgs, Tools: tools,
		ToolChoice: conv.ToolChoice{Mode: conv.ChoiceAny}, MaxTokens: ptr[int64](100), Temperature: ptr(0.5),
		Reasoning: conv.Reasoning{Effort: "low", Enabled: true}, User: "u"}
	body, err := Codec.EncodeRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Codec.DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	want := &conv.Request{From: Protocol, Model: "gpt-5", System: r.System, Messages: msgs,
		Tools:      []conv.Tool{{Kind: conv.ToolFunction, Name: "Bash", Description: "Runs bash", Schema: tools[0].Schema, Strict: ptr(false)}},
		ToolChoice: r.ToolChoice, MaxTokens: r.MaxTokens, Temperature: r.Temperature,
		Reasoning: conv.Reasoning{Effort: "low", Summary: "auto", Enabled: true}, User: "u",
		Extra: map[string]json.RawMessage{"store": json.RawMessage(`false`), "include": json.RawMessage(`["reasoning.encrypted_content"]`)}}
	assertRequest(t, back, want)
}

// TestCapturedCodexRequests: the bodies Codex CLI 0.171 really sent
// (../testdata/captured) decode — its system prompt is a developer
// message, not instructions — and survive a round trip.
func TestCapturedCodexRequests(t *testing.T) {
	for _, c := range []struct {
		file  string
		parts []conv.PartKind // of the messages, in order
	}{
		{"codex-turn1.json", []conv.PartKind{conv.PartText, conv.PartText}},
		{"codex-turn2.json", []conv.PartKind{conv.PartText, conv.PartText, conv.PartToolCall, conv.PartToolResult}},
	} {
		t.Run(c.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("..", "testdata", "captured", c.file))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Codec.DecodeRequest(body)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.System) == 0 || !strings.HasPrefix(r.System[0].Text, "You are Codex") {
				t.Errorf("the leading developer messages are not System: %d parts", len(r.System))
			}
			var kinds []conv.PartKind
			for _, m := range r.Messages {
				for _, p := range m.Parts {
					kinds = append(kinds, p.Kind)
				}
			}
			if !slices.Equal(kinds, c.parts) {
				t.Errorf("parts %v, want %v", kinds, c.parts)
			}
			if !slices.Equal(r.Dropped, []string{"tool tool_search", "tool web_search"}) {
				t.Errorf("Dropped = %q", r.Dropped)
			}
			if !r.Reasoning.Enabled || r.Reasoning.Effort != "medium" || !r.Stream || r.PromptCacheKey == "" {
				t.Errorf("reasoning %+v, stream %v, prompt_cache_key %q", r.Reasoning, r.Stream, r.PromptCacheKey)
			}
			out, err := Codec.EncodeRequest(r)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Codec.DecodeRequest(out)
			if err != nil {
				t.Fatal(err)
			}
			want := *r
			want.System = []conv.Part{{Kind: conv.PartText, Text: joinTexts(r.System)}}
			want.Dropped = nil
			assertRequest(t, back, &want)
		})
	}
}
