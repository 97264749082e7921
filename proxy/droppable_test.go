package proxy

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// The list says why each part is safe to leave out, and what is asked is
// never on it.
func TestDroppableList(t *testing.T) {
	seen := map[Drop]bool{}
	for _, p := range droppable {
		if p.why == "" {
			t.Errorf("%s: no reason given", p.drop)
		}
		if seen[p.drop] {
			t.Errorf("%s: listed twice", p.drop)
		}
		seen[p.drop] = true
	}
	for _, d := range []Drop{"model", "messages", "input", "tools", "system", "max_tokens", "stream", "thinking", "instructions", "tools[].name", "tools[].input_schema", "beta:", "beta:a b", "anything"} {
		if _, ok := d.Why(); ok {
			t.Errorf("%s may be dropped", d)
		}
	}
	for _, d := range []Drop{"context_management", "tools[].defer_loading", "cache_control.ttl", "beta:context-management-2025-06-27"} {
		if _, ok := d.Why(); !ok {
			t.Errorf("%s may not be dropped", d)
		}
	}
}

// Each refusal is read in the words endpoints really send it in.
func TestRefusedDrops(t *testing.T) {
	tests := []struct {
		name, body string
		want       []Drop
	}{
		{"anthropic extra input", `{"type":"error","error":{"type":"invalid_request_error","message":"context_management: Extra inputs are not permitted"}}`, []Drop{"context_management"}},
		{"anthropic nested tool flag", `{"type":"error","error":{"type":"invalid_request_error","message":"tools.3.custom.defer_loading: Extra inputs are not permitted"}}`, []Drop{"tools[].defer_loading"}},
		{"anthropic cache ttl", `{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0.cache_control.ttl: Extra inputs are not permitted"}}`, []Drop{"cache_control.ttl"}},
		{"anthropic betas by name", "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"Unexpected value(s) `context-management-2025-06-27`, `advanced-tool-use-2025-11-20` for the `anthropic-beta` header. Please consult our documentation at docs.anthropic.com or try again without the header.\"}}",
			[]Drop{"beta:context-management-2025-06-27", "beta:advanced-tool-use-2025-11-20"}},
		{"openai unrecognized", `{"error":{"message":"Unrecognized request argument supplied: context_management","type":"invalid_request_error","param":null,"code":null}}`, []Drop{"context_management"}},
		{"openai unrecognized several", `{"error":{"message":"Unrecognized request arguments supplied: prompt_cache_key, safety_identifier","type":"invalid_request_error"}}`, []Drop{"prompt_cache_key", "safety_identifier"}},
		{"serde unknown field", "{\"error\":\"Failed to deserialize the JSON body into the target type: unknown field `stream_options`, expected one of `model`, `messages` at line 1 column 200\"}", []Drop{"stream_options"}},
		{"go unknown field", `{"error":{"message":"json: unknown field \"parallel_tool_calls\""}}`, []Drop{"parallel_tool_calls"}},
		{"vllm python list", `{"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'store'), 'msg': 'Extra inputs are not permitted', 'input': False}]","type":"BadRequestError","param":null,"code":400}`, []Drop{"store"}},
		{"vllm nested python list", `{"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'tools', 0, 'eager_input_streaming'), 'msg': 'Extra inputs are not permitted', 'input': True}]"}`, []Drop{"tools[].eager_input_streaming"}},
		{"fastapi detail", `{"detail":[{"type":"extra_forbidden","loc":["body","context_management"],"msg":"Extra inputs are not permitted","input":{}}]}`, []Drop{"context_management"}},
		{"json schema", `{"error":{"message":"output_config: property not allowed"}}`, []Drop{"output_config"}},
		{"bedrock", `{"message":"#: extraneous key [context_management] is not permitted"}`, []Drop{"context_management"}},
		{"adaptive thinking", `{"type":"error","error":{"type":"invalid_request_error","message":"thinking.type: Input tag 'adaptive' found using 'type' does not match any of the expected tags: 'disabled', 'enabled'"}}`, []Drop{"thinking.adaptive"}},
		{"chinese unsupported", `{"error":{"message":"不支持的参数: context_management","type":"invalid_request_error"}}`, []Drop{"context_management"}},
		{"chinese after", `{"error":{"message":"参数 stream_options 不被支持","type":"new_api_error"}}`, []Drop{"stream_options"}},
		{"chinese unknown field", `{"error":{"message":"未知字段：prompt_cache_key"}}`, []Drop{"prompt_cache_key"}},
		{"chinese beta", `{"error":{"message":"不支持的 anthropic-beta 值: context-management-2025-06-27"}}`, []Drop{"beta:context-management-2025-06-27"}},
		{"not droppable: messages", `{"type":"error","error":{"type":"invalid_request_error","message":"messages: Extra inputs are not permitted"}}`, nil},
		{"not droppable: tools", `{"error":{"message":"Unrecognized request argument supplied: tools"}}`, nil},
		{"not a refusal of a part", `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 128000 > 64000, which is the maximum allowed number of output tokens"}}`, nil},
		{"plain text", `Bad Request`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := refusedDrops([]byte(tc.body)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// canonical re-encodes a JSON document with sorted keys.
func canonical(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestApplyDrops(t *testing.T) {
	const body = `{"model":"claude-sonnet-4-5", "max_tokens": 32000,
		"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]},
		"thinking":{"type":"adaptive"},
		"tools":[{"name":"Read","input_schema":{"type":"object","properties":{"defer_loading":{"type":"boolean"}}},"defer_loading":true,"cache_control":{"type":"ephemeral","ttl":"1h"}},
		         {"name":"Bash","input_schema":{},"eager_input_streaming":true}],
		"messages":[{"role":"user","content":[{"type":"text","text":"context_management: hi","cache_control":{"type":"ephemeral","ttl":"1h"}}]}],
		"stream":true}`
	tests := []struct {
		name  string
		drops Drops
		want  string
	}{
		{"nothing", nil, body},
		{"only betas", Drops{"beta:x-2025-01-01"}, body},
		{"top-level", Drops{"context_management"}, `{"model":"claude-sonnet-4-5","max_tokens":32000,"thinking":{"type":"adaptive"},
			"tools":[{"name":"Read","input_schema":{"type":"object","properties":{"defer_loading":{"type":"boolean"}}},"defer_loading":true,"cache_control":{"type":"ephemeral","ttl":"1h"}},{"name":"Bash","input_schema":{},"eager_input_streaming":true}],
			"messages":[{"role":"user","content":[{"type":"text","text":"context_management: hi","cache_control":{"type":"ephemeral","ttl":"1h"}}]}],"stream":true}`},
		{"tool flags, not a schema property of that name", Drops{"tools[].defer_loading", "tools[].eager_input_streaming"}, `{"model":"claude-sonnet-4-5","max_tokens":32000,"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]},"thinking":{"type":"adaptive"},
			"tools":[{"name":"Read","input_schema":{"type":"object","properties":{"defer_loading":{"type":"boolean"}}},"cache_control":{"type":"ephemeral","ttl":"1h"}},{"name":"Bash","input_schema":{}}],
			"messages":[{"role":"user","content":[{"type":"text","text":"context_management: hi","cache_control":{"type":"ephemeral","ttl":"1h"}}]}],"stream":true}`},
		{"ttl anywhere", Drops{"cache_control.ttl"}, `{"model":"claude-sonnet-4-5","max_tokens":32000,"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]},"thinking":{"type":"adaptive"},
			"tools":[{"name":"Read","input_schema":{"type":"object","properties":{"defer_loading":{"type":"boolean"}}},"defer_loading":true,"cache_control":{"type":"ephemeral"}},{"name":"Bash","input_schema":{},"eager_input_streaming":true}],
			"messages":[{"role":"user","content":[{"type":"text","text":"context_management: hi","cache_control":{"type":"ephemeral"}}]}],"stream":true}`},
		{"adaptive thinking gets a budget", Drops{"thinking.adaptive"}, `{"model":"claude-sonnet-4-5","max_tokens":32000,"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]},"thinking":{"type":"enabled","budget_tokens":16000},
			"tools":[{"name":"Read","input_schema":{"type":"object","properties":{"defer_loading":{"type":"boolean"}}},"defer_loading":true,"cache_control":{"type":"ephemeral","ttl":"1h"}},{"name":"Bash","input_schema":{},"eager_input_streaming":true}],
			"messages":[{"role":"user","content":[{"type":"text","text":"context_management: hi","cache_control":{"type":"ephemeral","ttl":"1h"}}]}],"stream":true}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := applyDrops([]byte(body), tc.drops)
			if canonical(t, got) != canonical(t, []byte(tc.want)) {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	// The members kept stay in the client's order.
	got := applyDrops([]byte(`{"z":1,"store":false,"a":2,"m":[1, 2]}`), Drops{"store"})
	if want := `{"z":1,"a":2,"m":[1,2]}`; string(got) != want {
		t.Errorf("order: got %s, want %s", got, want)
	}
	// max_completion_tokens goes as max_tokens, in its place.
	got = applyDrops([]byte(`{"model":"m","max_completion_tokens":100,"stream":true}`), Drops{"max_completion_tokens"})
	if want := `{"model":"m","max_tokens":100,"stream":true}`; string(got) != want {
		t.Errorf("rename: got %s, want %s", got, want)
	}
	// No room for a budget: adaptive thinking is left out.
	got = applyDrops([]byte(`{"model":"m","max_tokens":1000,"thinking":{"type":"adaptive"}}`), Drops{"thinking.adaptive"})
	if want := `{"model":"m","max_tokens":1000}`; string(got) != want {
		t.Errorf("no room: got %s, want %s", got, want)
	}
	// A body that is not an object, or broken, goes as it came.
	for _, b := range []string{`[1,2]`, `{"store":`, `not json`, ``} {
		if got := applyDrops([]byte(b), Drops{"store"}); !bytes.Equal(got, []byte(b)) {
			t.Errorf("%q became %q", b, got)
		}
	}
}

func TestWithoutBetas(t *testing.T) {
	ds := Drops{"beta:context-management-2025-06-27", "store", "beta:effort-2025-11-24"}
	h := "claude-code-20250219,interleaved-thinking-2025-05-14, context-management-2025-06-27,effort-2025-11-24"
	if got, want := ds.withoutBetas(h), "claude-code-20250219,interleaved-thinking-2025-05-14"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := ds.withoutBetas("effort-2025-11-24"); got != "" {
		t.Errorf("all dropped: %q", got)
	}
	if got := (Drops{"store"}).withoutBetas(h); got != h {
		t.Errorf("no beta drops changed the header: %q", got)
	}
}

func BenchmarkApplyDrops(b *testing.B) {
	body := bytes.Repeat([]byte(`{"role":"user","content":[{"type":"text","text":"some words of a long conversation","cache_control":{"type":"ephemeral","ttl":"1h"}}]},`), 600)
	body = append([]byte(`{"model":"claude-sonnet-4-5","context_management":{},"messages":[`), body[:len(body)-1]...)
	body = append(body, `],"stream":true}`...)
	ds := Drops{"context_management", "cache_control.ttl"}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		applyDrops(body, ds)
	}
}
