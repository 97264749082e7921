package anthropic

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// claudeCodeBody is a request as Claude Code sends it: the rotating
// billing line first in system, cache markers on system, tools and the
// last user text, a server tool, thinking on, a history with signed and
// redacted thinking, tool calls, tool results followed by text in the
// same user turn, server-tool blocks, an image, and a system message in
// the middle.
const claudeCodeBody = `{
 "model":"claude-sonnet-4-5-20250929",
 "max_tokens":32000,
 "stream":true,
 "temperature":1,
 "system":[
  {"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.3.a1b; cc_entrypoint=cli"},
  {"type":"text","text":"You are Claude Code, Anthropic's official CLI for Claude.","cache_control":{"type":"ephemeral"}},
  {"type":"text","text":"You are an interactive CLI tool <env>linux</env>","cache_control":{"type":"ephemeral","ttl":"1h"}}
 ],
 "messages":[
  {"role":"user","content":[
   {"type":"text","text":"<system-reminder>cwd: /repo</system-reminder>"},
   {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
   {"type":"text","text":""},
   {"type":"text","text":"What is in this screenshot? Then list the files."}
  ]},
  {"role":"assistant","content":[
   {"type":"thinking","thinking":"The user wants a description, then ls.","signature":"EqQBCkYIBxgCKkBsig=="},
   {"type":"text","text":"A login form. Listing files."},
   {"type":"tool_use","id":"toolu_01A","name":"Bash","input":{"description":"List files","command":"ls -la"}}
  ]},
  {"role":"user","content":[
   {"type":"tool_result","tool_use_id":"toolu_01A","content":"total 8\n-rw-r--r-- a.go"},
   {"type":"text","text":"also check b.go"}
  ]},
  {"role":"assistant","content":[
   {"type":"redacted_thinking","data":"EmwKAhgBEgyRED"},
   {"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"go 1.26"}},
   {"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://go.dev","title":"Go","encrypted_content":"x"}]},
   {"type":"tool_use","id":"toolu_01B","name":"Read","input":{"file_path":"/repo/b.go"}},
   {"type":"tool_use","id":"toolu_01C","name":"Read","input":{}}
  ]},
  {"role":"user","content":[
   {"type":"tool_result","tool_use_id":"toolu_01B","content":[{"type":"text","text":"package b"},{"type":"image","source":{"type":"url","url":"https://example.com/b.png"}}]},
   {"type":"tool_result","tool_use_id":"toolu_01C","content":"file_path is required","is_error":true}
  ]},
  {"role":"system","content":"The user switched to plan mode."},
  {"role":"user","content":[{"type":"text","text":"go on","cache_control":{"type":"ephemeral"}}]}
 ],
 "tools":[
  {"name":"Bash","description":"Executes a bash command","input_schema":{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"}},"required":["command"]}},
  {"type":"custom","name":"Read","description":"Reads a file","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}}},"cache_control":{"type":"ephemeral"}},
  {"name":"ExitPlanMode","description":"Leave plan mode","input_schema":null},
  {"type":"web_search_20250305","name":"web_search","max_uses":5}
 ],
 "metadata":{"user_id":"user_2f0c_account__session_6a1e"},
 "thinking":{"type":"enabled","budget_tokens":31999},
 "context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]},
 "top_k":null
}`

func claudeCodeRequest() *conv.Request {
	ephemeral := raw(`{"type":"ephemeral"}`)
	return &conv.Request{
		From: Protocol, Model: "claude-sonnet-4-5-20250929", Stream: true,
		MaxTokens: i64(32000), Temperature: f64(1),
		System: []conv.Part{
			{Kind: conv.PartText, Text: "You are Claude Code, Anthropic's official CLI for Claude.", CacheControl: ephemeral},
			{Kind: conv.PartText, Text: "You are an interactive CLI tool <env>linux</env>", CacheControl: raw(`{"type":"ephemeral","ttl":"1h"}`)},
		},
		Messages: []conv.Message{
			{Role: conv.RoleUser, Parts: []conv.Part{
				{Kind: conv.PartText, Text: "<system-reminder>cwd: /repo</system-reminder>"},
				{Kind: conv.PartImage, MediaType: "image/png", Data: "iVBORw0KGgo="},
				{Kind: conv.PartText, Text: "What is in this screenshot? Then list the files."},
			}},
			{Role: conv.RoleAssistant, Parts: []conv.Part{
				{Kind: conv.PartReasoning, Text: "The user wants a description, then ls.", Signature: "EqQBCkYIBxgCKkBsig=="},
				{Kind: conv.PartText, Text: "A login form. Listing files."},
				{Kind: conv.PartToolCall, CallID: "toolu_01A", Name: "Bash", Args: `{"command":"ls -la","description":"List files"}`},
			}},
			{Role: conv.RoleUser, Parts: []conv.Part{
				{Kind: conv.PartToolResult, CallID: "toolu_01A", Content: []conv.Part{{Kind: conv.PartText, Text: "total 8\n-rw-r--r-- a.go"}}},
				{Kind: conv.PartText, Text: "also check b.go"},
			}},
			{Role: conv.RoleAssistant, Parts: []conv.Part{
				{Kind: conv.PartReasoning, Redacted: "EmwKAhgBEgyRED"},
				{Kind: conv.PartToolCall, CallID: "toolu_01B", Name: "Read", Args: `{"file_path":"/repo/b.go"}`},
				{Kind: conv.PartToolCall, CallID: "toolu_01C", Name: "Read", Args: `{}`},
			}},
			{Role: conv.RoleUser, Parts: []conv.Part{
				{Kind: conv.PartToolResult, CallID: "toolu_01B", Content: []conv.Part{
					{Kind: conv.PartText, Text: "package b"},
					{Kind: conv.PartImage, URL: "https://example.com/b.png"},
				}},
				{Kind: conv.PartToolResult, CallID: "toolu_01C", IsError: true, Content: []conv.Part{{Kind: conv.PartText, Text: "file_path is required"}}},
			}},
			{Role: conv.RoleSystem, Parts: []conv.Part{{Kind: conv.PartText, Text: "The user switched to plan mode."}}},
			{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartText, Text: "go on", CacheControl: ephemeral}}},
		},
		Tools: []conv.Tool{
			{Name: "Bash", Description: "Executes a bash command", Schema: raw(`{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"}},"required":["command"]}`)},
			{Name: "Read", Description: "Reads a file", Schema: raw(`{"type":"object","properties":{"file_path":{"type":"string"}}}`), CacheControl: ephemeral},
			{Name: "ExitPlanMode", Description: "Leave plan mode", Schema: conv.EmptySchema},
		},
		Reasoning: conv.Reasoning{Enabled: true, BudgetTokens: 31999},
		User:      "user_2f0c_account__session_6a1e",
		Extra: map[string]json.RawMessage{
			"metadata":           raw(`{"user_id":"user_2f0c_account__session_6a1e"}`),
			"context_management": raw(`{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]}`),
		},
		Dropped: []string{"server_tool_use block", "web_search_tool_result block", "web_search_20250305 tool"},
	}
}

func TestDecodeClaudeCodeRequest(t *testing.T) {
	got, err := Codec.DecodeRequest([]byte(claudeCodeBody))
	if err != nil {
		t.Fatal(err)
	}
	want := claudeCodeRequest()
	if !reflect.DeepEqual(got, want) {
		gj, wj := conv.Marshal(got), conv.Marshal(want)
		t.Errorf("decoded request differs\n got: %s\nwant: %s", gj, wj)
	}
}

func TestDecodeRequest(t *testing.T) {
	user := func(parts ...conv.Part) []conv.Message {
		return []conv.Message{{Role: conv.RoleUser, Parts: parts}}
	}
	hi := conv.Part{Kind: conv.PartText, Text: "hi"}
	for _, c := range []struct {
		name, body string
		want       conv.Request // From and Model are filled in
	}{
		{
			name: "string system and content, leading system message joins System",
			body: `{"system":"Be brief.","messages":[{"role":"system","content":[{"type":"text","text":"x-anthropic-billing-header: a=b"},{"type":"text","text":"And kind."}]},{"role":"user","content":"hi"}]}`,
			want: conv.Request{
				System:   []conv.Part{{Kind: conv.PartText, Text: "Be brief."}, {Kind: conv.PartText, Text: "And kind."}},
				Messages: user(hi),
			},
		},
		{
			name: "sampling, stops, zero values kept",
			body: `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1024,"temperature":0,"top_p":0,"stop_sequences":["\n\nHuman:"],"top_k":5,"service_tier":"auto"}`,
			want: conv.Request{
				Messages: user(hi), MaxTokens: i64(1024), Temperature: f64(0), TopP: f64(0), Stop: []string{"\n\nHuman:"},
				Extra: map[string]json.RawMessage{"top_k": raw(`5`), "service_tier": raw(`"auto"`)},
			},
		},
		{
			name: "documents",
			body: `{"messages":[{"role":"user","content":[
				{"type":"document","title":"spec.pdf","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="},"cache_control":{"type":"ephemeral"}},
				{"type":"document","source":{"type":"text","media_type":"text/plain","data":"plain words"}},
				{"type":"document","source":{"type":"url","url":"https://example.com/a.pdf"}},
				{"type":"document","source":{"type":"content","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]}},
				{"type":"document","source":{"type":"file","file_id":"file_1"}},
				{"type":"image","source":{"type":"file","file_id":"file_2"}}]}]}`,
			want: conv.Request{
				Messages: user(
					conv.Part{Kind: conv.PartDocument, Filename: "spec.pdf", MediaType: "application/pdf", Data: "JVBERi0=", CacheControl: raw(`{"type":"ephemeral"}`)},
					conv.Part{Kind: conv.PartDocument, MediaType: "text/plain", Text: "plain words"},
					conv.Part{Kind: conv.PartDocument, URL: "https://example.com/a.pdf"},
					conv.Part{Kind: conv.PartDocument, MediaType: "text/plain", Text: "one\n\ntwo"},
				),
				Dropped: []string{"document source file", "image source file"},
			},
		},
		{
			name: "tool choice any, parallel calls off",
			body: `{"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"any","disable_parallel_tool_use":true}}`,
			want: conv.Request{
				Messages: user(hi), Tools: []conv.Tool{{Name: "f", Schema: conv.EmptySchema}},
				ToolChoice: conv.ToolChoice{Mode: conv.ChoiceAny}, ParallelToolCalls: ptr(false),
			},
		},
		{
			name: "tool choice naming a tool",
			body: `{"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{"type":"object"},"strict":true}],"tool_choice":{"type":"tool","name":"f","disable_parallel_tool_use":false}}`,
			want: conv.Request{
				Messages: user(hi), Tools: []conv.Tool{{Name: "f", Schema: raw(`{"type":"object"}`), Strict: ptr(true)}},
				ToolChoice: conv.ToolChoice{Mode: conv.ChoiceTool, Name: "f"}, ParallelToolCalls: ptr(true),
			},
		},
		{
			name: "tool choice naming a dropped server tool is dropped",
			body: `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"bash_20250124","name":"bash"},{"type":"text_editor_20250728","name":"str_replace_based_edit_tool"}],"tool_choice":{"type":"tool","name":"bash"}}`,
			want: conv.Request{
				Messages: user(hi),
				Dropped:  []string{"bash_20250124 tool", "text_editor_20250728 tool", "tool_choice bash"},
			},
		},
		{
			name: "adaptive thinking with effort, rest of output_config kept",
			body: `{"messages":[{"role":"user","content":"hi"}],"thinking":{"type":"adaptive"},"output_config":{"effort":"high","format":{"type":"json_schema"}}}`,
			want: conv.Request{
				Messages:  user(hi),
				Reasoning: conv.Reasoning{Enabled: true, Effort: "high"},
				Extra:     map[string]json.RawMessage{"output_config": raw(`{"format":{"type":"json_schema"}}`)},
			},
		},
		{
			name: "thinking disabled, effort alone",
			body: `{"messages":[{"role":"user","content":"hi"}],"thinking":{"type":"disabled"},"output_config":{"effort":"low"}}`,
			want: conv.Request{Messages: user(hi), Reasoning: conv.Reasoning{Effort: "low"}},
		},
		{
			name: "empty messages and nulls are left out",
			body: `{"messages":[{"role":"user","content":""},{"role":"assistant","content":[]},{"role":"user","content":null},{"role":"user","content":[{"type":"text","text":"hi"}]}],"system":null,"tools":null,"metadata":null,"temperature":null}`,
			want: conv.Request{Messages: user(hi)},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Codec.DecodeRequest([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			want.From = Protocol
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %s\nwant %s", conv.Marshal(got), conv.Marshal(want))
			}
		})
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`not json`, "invalid character"},
		{`null`, "not a JSON object"},
		{`[]`, "cannot unmarshal array"},
		{`{"model":"m"}`, "messages: missing"},
		{`{"messages":{}}`, "messages"},
		{`{"messages":[{"role":"tool","content":"x"}]}`, `unknown role "tool"`},
		{`{"messages":[{"role":"user","content":5}]}`, "neither a string nor an array"},
		{`{"messages":[{"role":"user","content":"x"}],"tools":[{"input_schema":{}}]}`, "tools[0]: no name"},
		{`{"messages":[{"role":"user","content":[{"type":"tool_result","content":"r"}]}]}`, "a tool result without the id of its call"},
		{`{"messages":[{"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}]}]}`, "a tool call without its id or name"},
		{`{"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"sometimes"}}`, `unknown type "sometimes"`},
		{`{"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"tool"}}`, "without a name"},
		{`{"messages":[{"role":"user","content":"x"}],"max_tokens":"lots"}`, "max_tokens"},
	} {
		_, err := Codec.DecodeRequest([]byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeRequest(%s) error = %v, want one containing %q", c.body, err, c.want)
		}
		if conv.IsUnsupported(err) {
			t.Errorf("DecodeRequest(%s): a bad body is a plain error, not Unsupported", c.body)
		}
	}
}
