package anthropic

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// A request from a Chat client: system text, images three ways, an
// unsigned reasoning part before a tool call (so no thinking although
// the client asked), a user turn whose text comes before the tool result,
// a later system message and a document that merge into that turn, a
// custom tool, parallel calls off, both sampling knobs, an empty stop.
func TestEncodeRequestFromChat(t *testing.T) {
	r := &conv.Request{
		From: chat.Protocol, Model: "claude-opus-4-1", Stream: true,
		System: []conv.Part{{Kind: conv.PartText, Text: "You are terse."}, {Kind: conv.PartText}},
		Messages: []conv.Message{
			{Role: conv.RoleUser, Parts: []conv.Part{
				{Kind: conv.PartText, Text: "Look"},
				{Kind: conv.PartImage, MediaType: "image/png", Data: "iVBORw0KGgo="},
				{Kind: conv.PartImage, URL: "data:image/jpeg;base64,/9j/4AAQ"},
				{Kind: conv.PartImage, URL: "https://example.com/cat.jpg"},
			}},
			{Role: conv.RoleAssistant, Parts: []conv.Part{
				{Kind: conv.PartReasoning, Text: "let me think", Encrypted: "gAAAA", ItemID: "rs_1"},
				{Kind: conv.PartText, Text: "Calling"},
				{Kind: conv.PartToolCall, CallID: "call_1", Name: "read", Args: ` {"path": "a", "n": 1} `},
			}},
			{Role: conv.RoleUser, Parts: []conv.Part{
				{Kind: conv.PartText, Text: "note: result below"},
				{Kind: conv.PartToolResult, CallID: "call_1", Content: []conv.Part{{Kind: conv.PartText, Text: "file a"}}},
			}},
			{Role: conv.RoleSystem, Parts: []conv.Part{{Kind: conv.PartText, Text: "Be careful."}, {Kind: conv.PartText, Text: "Really."}}},
			{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartDocument, Filename: "notes.txt", Text: "notes"}}},
			{Role: conv.RoleAssistant, Parts: []conv.Part{{Kind: conv.PartText}}},
			{Role: conv.RoleAssistant, Parts: []conv.Part{{Kind: conv.PartText, Text: "done"}}},
		},
		Tools: []conv.Tool{
			{Name: "read", Description: "Read a file", Schema: raw(`{"type":"object","properties":{"path":{"type":"string"}}}`), Strict: ptr(true)},
			{Kind: conv.ToolCustom, Name: "apply_patch", Description: "Apply a patch", Format: raw(`{"type":"grammar","syntax":"lark","definition":"start: x"}`)},
		},
		ParallelToolCalls: ptr(false),
		Temperature:       f64(0.2), TopP: f64(0.9),
		Stop:      []string{"END", " "},
		Reasoning: conv.Reasoning{Effort: "high", Enabled: true},
		User:      "u-1",
		Extra:     map[string]json.RawMessage{"seed": raw(`1`), "top_k": raw(`3`)},
	}
	got, err := Codec.EncodeRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, got, `{
	 "model":"claude-opus-4-1","max_tokens":16384,"stream":true,
	 "system":[{"type":"text","text":"You are terse."}],
	 "messages":[
	  {"role":"user","content":[
	   {"type":"text","text":"Look"},
	   {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
	   {"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4AAQ"}},
	   {"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}}]},
	  {"role":"assistant","content":[
	   {"type":"text","text":"Calling"},
	   {"type":"tool_use","id":"call_1","name":"read","input":{"n":1,"path":"a"}}]},
	  {"role":"user","content":[
	   {"type":"tool_result","tool_use_id":"call_1","content":[{"type":"text","text":"file a"}]},
	   {"type":"text","text":"note: result below"},
	   {"type":"text","text":"System: Be careful.\n\nReally."},
	   {"type":"document","title":"notes.txt","source":{"type":"text","media_type":"text/plain","data":"notes"}}]},
	  {"role":"assistant","content":[{"type":"text","text":"done"}]}],
	 "tools":[
	  {"name":"read","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}},
	  {"name":"apply_patch","description":"Apply a patch\n\nThe input must follow this lark grammar:\nstart: x","input_schema":`+string(conv.CustomSchema)+`}],
	 "tool_choice":{"type":"auto","disable_parallel_tool_use":true},
	 "temperature":0.2,
	 "stop_sequences":["END"],
	 "metadata":{"user_id":"u-1"}
	}`)
}

// pick returns the named members of the JSON object b.
func pick(t *testing.T, b []byte, keys ...string) map[string]any {
	t.Helper()
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	return out
}

func TestEncodeThinking(t *testing.T) {
	hi := []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartText, Text: "hi"}}}}
	call := func(before ...conv.Part) []conv.Message {
		parts := append(before, conv.Part{Kind: conv.PartToolCall, CallID: "c", Name: "f", Args: "{}"})
		return []conv.Message{
			hi[0],
			{Role: conv.RoleAssistant, Parts: parts},
			{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartToolResult, CallID: "c"}}},
		}
	}
	tool := []conv.Tool{{Name: "f"}}
	for _, c := range []struct {
		name string
		r    conv.Request
		want string // max_tokens, thinking, temperature, top_p, output_config
	}{
		{"effort high, default limit grows", conv.Request{From: chat.Protocol, Reasoning: conv.Reasoning{Effort: "high", Enabled: true}, Temperature: f64(0.5)},
			`{"max_tokens":28672,"thinking":{"type":"enabled","budget_tokens":24576}}`},
		{"effort max, default limit capped, budget halved", conv.Request{From: responses.Protocol, Reasoning: conv.Reasoning{Effort: "max"}},
			`{"max_tokens":32000,"thinking":{"type":"enabled","budget_tokens":16000}}`},
		{"enabled without effort is medium", conv.Request{From: chat.Protocol, Reasoning: conv.Reasoning{Enabled: true}},
			`{"max_tokens":16384,"thinking":{"type":"enabled","budget_tokens":8192}}`},
		{"client limit kept, budget halved", conv.Request{From: chat.Protocol, MaxTokens: i64(4000), Reasoning: conv.Reasoning{Effort: "medium"}},
			`{"max_tokens":4000,"thinking":{"type":"enabled","budget_tokens":2000}}`},
		{"budget at least 1024", conv.Request{From: chat.Protocol, MaxTokens: i64(1500), Reasoning: conv.Reasoning{Effort: "minimal"}},
			`{"max_tokens":1500,"thinking":{"type":"enabled","budget_tokens":1024}}`},
		{"no room for thinking", conv.Request{From: chat.Protocol, MaxTokens: i64(1000), Reasoning: conv.Reasoning{Effort: "low"}, Temperature: f64(0), TopP: f64(1)},
			`{"max_tokens":1000,"temperature":0}`},
		{"budget given", conv.Request{From: chat.Protocol, Reasoning: conv.Reasoning{BudgetTokens: 5000}},
			`{"max_tokens":16384,"thinking":{"type":"enabled","budget_tokens":5000}}`},
		{"effort none", conv.Request{From: chat.Protocol, Reasoning: conv.Reasoning{Effort: "none"}, TopP: f64(0)},
			`{"max_tokens":16384,"top_p":0}`},
		{"forced tool choice", conv.Request{From: chat.Protocol, Tools: tool, ToolChoice: conv.ToolChoice{Mode: conv.ChoiceAny}, Reasoning: conv.Reasoning{Effort: "low"}},
			`{"max_tokens":16384}`},
		{"unsigned tool call in history", conv.Request{From: chat.Protocol, Messages: call(conv.Part{Kind: conv.PartReasoning, Text: "hmm"}), Reasoning: conv.Reasoning{Effort: "low"}, Temperature: f64(1)},
			`{"max_tokens":16384,"temperature":1}`},
		{"signed tool call in history", conv.Request{From: responses.Protocol, Messages: call(conv.Part{Kind: conv.PartReasoning, Text: "hmm", Signature: "sig"}), Reasoning: conv.Reasoning{Effort: "low"}},
			`{"max_tokens":16384,"thinking":{"type":"enabled","budget_tokens":2048}}`},
		{"redacted tool call in history", conv.Request{From: responses.Protocol, Messages: call(conv.Part{Kind: conv.PartReasoning, Redacted: "data"}), Reasoning: conv.Reasoning{Effort: "low"}},
			`{"max_tokens":16384,"thinking":{"type":"enabled","budget_tokens":2048}}`},
		{"anthropic adaptive with effort", conv.Request{From: Protocol, Reasoning: conv.Reasoning{Enabled: true, Effort: "high"}, Temperature: f64(1)},
			`{"max_tokens":16384,"thinking":{"type":"adaptive"},"output_config":{"effort":"high"}}`},
		{"anthropic effort without thinking keeps both knobs", conv.Request{From: Protocol, Reasoning: conv.Reasoning{Effort: "low"}, Temperature: f64(0.3), TopP: f64(0.8), MaxTokens: i64(100)},
			`{"max_tokens":100,"temperature":0.3,"top_p":0.8,"output_config":{"effort":"low"}}`},
		{"anthropic budget", conv.Request{From: Protocol, MaxTokens: i64(32000), Reasoning: conv.Reasoning{Enabled: true, BudgetTokens: 31999}},
			`{"max_tokens":32000,"thinking":{"type":"enabled","budget_tokens":31999}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.r
			r.Model = "m"
			if r.Messages == nil {
				r.Messages = hi
			}
			b, err := Codec.EncodeRequest(&r)
			if err != nil {
				t.Fatal(err)
			}
			got := pick(t, b, "max_tokens", "thinking", "temperature", "top_p", "output_config")
			var want map[string]any
			if err := json.Unmarshal([]byte(c.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %s, want %s", conv.Marshal(got), c.want)
			}
		})
	}
}

func TestEncodeRequestCases(t *testing.T) {
	hi := []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartText, Text: "hi"}}}}
	hiJSON := `"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]`
	tool := []conv.Tool{{Name: "f", Schema: raw(`null`)}}
	toolJSON := `"tools":[{"name":"f","input_schema":{"type":"object","properties":{}}}]`
	for _, c := range []struct {
		name string
		r    conv.Request
		want string
	}{
		{"no tools, no tool choice", conv.Request{From: chat.Protocol, Messages: hi, ToolChoice: conv.ToolChoice{Mode: conv.ChoiceAny}, ParallelToolCalls: ptr(false)},
			`{"model":"m","max_tokens":16384,` + hiJSON + `}`},
		{"tool choice none ignores parallel calls", conv.Request{From: chat.Protocol, Messages: hi, Tools: tool, ToolChoice: conv.ToolChoice{Mode: conv.ChoiceNone}, ParallelToolCalls: ptr(false)},
			`{"model":"m","max_tokens":16384,` + hiJSON + `,` + toolJSON + `,"tool_choice":{"type":"none"}}`},
		{"named tool choice", conv.Request{From: responses.Protocol, Messages: hi, Tools: tool, ToolChoice: conv.ToolChoice{Mode: conv.ChoiceTool, Name: "f"}},
			`{"model":"m","max_tokens":16384,` + hiJSON + `,` + toolJSON + `,"tool_choice":{"type":"tool","name":"f"}}`},
		{"anthropic client: extra, metadata and strict written back, modeled names never overridden", conv.Request{
			From: Protocol, Messages: hi, User: "ignored: metadata comes from Extra",
			Tools: []conv.Tool{{Name: "f", Schema: raw(`{"type":"object"}`), Strict: ptr(true), CacheControl: raw(`{"type":"ephemeral"}`)}},
			Extra: map[string]json.RawMessage{
				"top_k": raw(`5`), "metadata": raw(`{"user_id":"abc"}`), "model": raw(`"other"`), "max_tokens": raw(`1`),
				"context_management": raw(`{"edits": []}`), "output_config": raw(`{"format":{"type":"json_schema"}}`), "bad": raw(`{`),
			}},
			`{"model":"m","max_tokens":16384,` + hiJSON + `,"tools":[{"name":"f","input_schema":{"type":"object"},"strict":true,"cache_control":{"type":"ephemeral"}}],
			  "output_config":{"format":{"type":"json_schema"}},"context_management":{"edits":[]},"metadata":{"user_id":"abc"},"top_k":5}`},
		{"documents", conv.Request{From: chat.Protocol, Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{
			{Kind: conv.PartDocument, Filename: "a.pdf", Data: "JVBERi0="},
			{Kind: conv.PartDocument, Filename: "b.md", MediaType: "text/markdown", Data: "IyBUaXRsZQ=="},
			{Kind: conv.PartDocument, URL: "https://example.com/c.pdf"},
			{Kind: conv.PartDocument, URL: "data:application/pdf;base64,JVBERi0="},
		}}}},
			`{"model":"m","max_tokens":16384,"messages":[{"role":"user","content":[
			  {"type":"document","title":"a.pdf","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}},
			  {"type":"document","title":"b.md","source":{"type":"text","media_type":"text/plain","data":"# Title"}},
			  {"type":"document","source":{"type":"url","url":"https://example.com/c.pdf"}},
			  {"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}}]}]}`},
		{"reasoning: signed and redacted kept in order, unsigned and encrypted dropped, none in user turns", conv.Request{From: responses.Protocol, Messages: []conv.Message{
			{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartReasoning, Text: "x", Signature: "s"}, {Kind: conv.PartText, Text: "q"}}},
			{Role: conv.RoleAssistant, Parts: []conv.Part{
				{Kind: conv.PartReasoning, Text: "a", Signature: "sigA"},
				{Kind: conv.PartReasoning, Text: "b"},
				{Kind: conv.PartReasoning, Encrypted: "enc"},
				{Kind: conv.PartReasoning, Redacted: "red"},
				{Kind: conv.PartText, Text: "answer"},
			}},
		}},
			`{"model":"m","max_tokens":16384,"messages":[
			  {"role":"user","content":[{"type":"text","text":"q"}]},
			  {"role":"assistant","content":[{"type":"thinking","thinking":"a","signature":"sigA"},{"type":"redacted_thinking","data":"red"},{"type":"text","text":"answer"}]}]}`},
		{"tool result with image, error flag, cache marker; empty result has no content", conv.Request{From: chat.Protocol, Messages: []conv.Message{
			{Role: conv.RoleAssistant, Parts: []conv.Part{{Kind: conv.PartToolCall, CallID: "a", Name: "f", Args: "not json"}, {Kind: conv.PartToolCall, CallID: "b", Name: "f"}}},
			{Role: conv.RoleUser, Parts: []conv.Part{
				{Kind: conv.PartToolResult, CallID: "a", IsError: true, CacheControl: raw(`{"type":"ephemeral"}`), Content: []conv.Part{{Kind: conv.PartText, Text: "boom"}, {Kind: conv.PartImage, MediaType: "image/gif", Data: "R0lG"}}},
				{Kind: conv.PartToolResult, CallID: "b"},
			}},
		}},
			`{"model":"m","max_tokens":16384,"messages":[
			  {"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b","name":"f","input":{}}]},
			  {"role":"user","content":[
			    {"type":"tool_result","tool_use_id":"a","is_error":true,"cache_control":{"type":"ephemeral"},"content":[{"type":"text","text":"boom"},{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lG"}}]},
			    {"type":"tool_result","tool_use_id":"b"}]}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.r
			r.Model = "m"
			got, err := Codec.EncodeRequest(&r)
			if err != nil {
				t.Fatal(err)
			}
			jsonEqual(t, got, c.want)
		})
	}
}

// Thinking the history cannot carry is left off, and with it the
// context-management edits that need thinking; the request is not changed.
func TestEncodeThinkingEditsWithoutThinking(t *testing.T) {
	cm := `{"edits":[{"type":"clear_thinking_20251015","keep":"all"},{"type":"clear_tool_uses_20250919"}]}`
	r := &conv.Request{
		From: Protocol, Model: "m", MaxTokens: i64(8000),
		Messages: []conv.Message{
			{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartText, Text: "hi"}}},
			{Role: conv.RoleAssistant, Parts: []conv.Part{{Kind: conv.PartReasoning, Text: "from another upstream"}, {Kind: conv.PartToolCall, CallID: "c", Name: "f"}}},
			{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartToolResult, CallID: "c"}}},
		},
		Reasoning: conv.Reasoning{Enabled: true, BudgetTokens: 4000},
		Extra:     map[string]json.RawMessage{"context_management": raw(cm)},
	}
	b, err := Codec.EncodeRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	got := pick(t, b, "thinking", "context_management")
	want := map[string]any{"context_management": map[string]any{"edits": []any{map[string]any{"type": "clear_tool_uses_20250919"}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %s", conv.Marshal(got))
	}
	if string(r.Extra["context_management"]) != cm {
		t.Errorf("the request's Extra changed: %s", r.Extra["context_management"])
	}
	r.Extra["context_management"] = raw(`{"edits":[{"type":"clear_thinking_20251015"}]}`)
	if b, _ = Codec.EncodeRequest(r); strings.Contains(string(b), "context_management") {
		t.Errorf("context_management with nothing left was sent: %s", b)
	}
}

func TestEncodeRequestUnsupported(t *testing.T) {
	hi := []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartText, Text: "hi"}}}}
	for _, c := range []struct {
		name string
		r    conv.Request
		want string
	}{
		{"previous response id", conv.Request{From: responses.Protocol, Messages: hi, PreviousResponseID: "resp_1"}, "previous_response_id"},
		{"no messages", conv.Request{From: responses.Protocol, System: []conv.Part{{Kind: conv.PartText, Text: "sys"}}}, "at least one user or assistant message"},
		{"word document", conv.Request{From: chat.Protocol, Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{
			{Kind: conv.PartDocument, Filename: "a.docx", MediaType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", Data: "UEsDBA=="},
		}}}}, "PDF and plain-text documents only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Codec.EncodeRequest(&c.r)
			if !conv.IsUnsupported(err) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want Unsupported containing %q", err, c.want)
			}
		})
	}
}

// What the model holds survives an Anthropic client's request encoded
// for an Anthropic upstream and decoded again.
func TestRequestRoundTrip(t *testing.T) {
	ephemeral := raw(`{"type":"ephemeral"}`)
	r := &conv.Request{
		From: Protocol, Model: "claude-opus-4-5", Stream: true,
		System: []conv.Part{{Kind: conv.PartText, Text: "sys", CacheControl: ephemeral}},
		Messages: []conv.Message{
			{Role: conv.RoleUser, Parts: []conv.Part{
				{Kind: conv.PartText, Text: "look"},
				{Kind: conv.PartImage, MediaType: "image/webp", Data: "UklGRg=="},
				{Kind: conv.PartImage, URL: "https://example.com/x.png", CacheControl: ephemeral},
				{Kind: conv.PartDocument, Filename: "a.pdf", MediaType: "application/pdf", Data: "JVBERi0="},
				{Kind: conv.PartDocument, MediaType: "text/plain", Text: "plain"},
			}},
			{Role: conv.RoleAssistant, Parts: []conv.Part{
				{Kind: conv.PartReasoning, Text: "think", Signature: "sig"},
				{Kind: conv.PartReasoning, Redacted: "red"},
				{Kind: conv.PartText, Text: "calling"},
				{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "f", Args: `{"a":[1,2],"b":"x<y"}`},
			}},
			{Role: conv.RoleUser, Parts: []conv.Part{
				{Kind: conv.PartToolResult, CallID: "toolu_1", IsError: true, Content: []conv.Part{{Kind: conv.PartText, Text: "no"}}},
				{Kind: conv.PartText, Text: "again"},
			}},
		},
		Tools:             []conv.Tool{{Name: "f", Description: "does f", Schema: raw(`{"type":"object","properties":{"a":{"type":"array"}}}`), Strict: ptr(true), CacheControl: ephemeral}},
		ToolChoice:        conv.ToolChoice{Mode: conv.ChoiceAuto},
		ParallelToolCalls: ptr(true),
		MaxTokens:         i64(20000),
		Stop:              []string{"STOP"},
		Reasoning:         conv.Reasoning{Enabled: true, BudgetTokens: 10000, Effort: "medium"},
		User:              "user_1",
		Extra: map[string]json.RawMessage{
			"metadata":      raw(`{"user_id":"user_1"}`),
			"output_config": raw(`{"format":{"type":"json_schema"}}`),
			"top_k":         raw(`5`),
		},
	}
	b, err := Codec.EncodeRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Codec.DecodeRequest(b)
	if err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("round trip changed the request\n got: %s\nwant: %s\nwire: %s", conv.Marshal(got), conv.Marshal(r), b)
	}
}

// The Claude Code request, decoded and encoded for an Anthropic upstream:
// the billing line and server tools stay out, the mid-conversation system
// message becomes user text, and thinking stays on (every tool call has
// signed or redacted thinking before it) without temperature.
func TestClaudeCodeRequestReencoded(t *testing.T) {
	r, err := Codec.DecodeRequest([]byte(claudeCodeBody))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Codec.EncodeRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, bad := range []string{"billing-header", "web_search", "server_tool_use", `"temperature"`, `"role":"system"`} {
		if strings.Contains(s, bad) {
			t.Errorf("re-encoded request contains %s: %s", bad, s)
		}
	}
	got := pick(t, b, "thinking", "max_tokens", "metadata", "context_management")
	want := map[string]any{
		"thinking":           map[string]any{"type": "enabled", "budget_tokens": 31999.0},
		"max_tokens":         32000.0,
		"metadata":           map[string]any{"user_id": "user_2f0c_account__session_6a1e"},
		"context_management": map[string]any{"edits": []any{map[string]any{"type": "clear_thinking_20251015", "keep": "all"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %s", conv.Marshal(got))
	}
	var w struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	last := w.Messages[len(w.Messages)-1]
	var types []string
	for _, c := range last.Content {
		types = append(types, c.Type+":"+c.Text)
	}
	wantTypes := []string{"tool_result:", "tool_result:", "text:System: The user switched to plan mode.", "text:go on"}
	if len(w.Messages) != 5 || !reflect.DeepEqual(types, wantTypes) {
		t.Errorf("%d messages, last turn %q, want 5 and %q", len(w.Messages), types, wantTypes)
	}
}
