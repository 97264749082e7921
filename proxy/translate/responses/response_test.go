package responses

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

func TestDecodeResponse(t *testing.T) {
	for _, c := range []struct {
		name string
		body string
		want *conv.Response
	}{{
		name: "reasoning, text, function and custom tool calls; cached tokens are not input",
		body: `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-5.1-codex-2025",
			"output":[
				{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"**Plan**"},{"type":"summary_text","text":"Edit."}],"encrypted_content":"gAAA"},
				{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Editing ","annotations":[]},{"type":"output_text","text":"now.","annotations":[]}]},
				{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\": \"ls\"}"},
				{"id":"fc_2","type":"function_call","status":"completed","call_id":"call_2","namespace":"mcp__docs","name":"read","arguments":""},
				{"id":"ctc_1","type":"custom_tool_call","status":"completed","call_id":"call_3","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"},
				{"id":"ws_1","type":"web_search_call","status":"completed"}],
			"usage":{"input_tokens":1200,"input_tokens_details":{"cached_tokens":1000},"output_tokens":300,"output_tokens_details":{"reasoning_tokens":120},"total_tokens":1500}}`,
		want: &conv.Response{ID: "resp_1", Model: "gpt-5.1-codex-2025",
			Parts: []conv.Part{
				{Kind: conv.PartReasoning, Text: "**Plan**\n\nEdit.", Encrypted: "gAAA", ItemID: "rs_1"},
				{Kind: conv.PartText, Text: "Editing now."},
				{Kind: conv.PartToolCall, CallID: "call_1", Name: "exec_command", Args: `{"cmd":"ls"}`},
				{Kind: conv.PartToolCall, CallID: "call_2", Name: "mcp__docs__read", Namespace: "mcp__docs", Args: `{}`},
				{Kind: conv.PartToolCall, CallID: "call_3", Name: "apply_patch", Custom: true, Args: conv.CustomArgs("*** Begin Patch\n*** End Patch")},
			},
			Stop:  conv.StopToolUse,
			Usage: conv.Usage{Input: 200, CacheRead: 1000, Output: 300, Reasoning: 120}},
	}, {
		name: "cut by max_output_tokens",
		body: `{"id":"resp_2","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"gpt-5",
			"output":[{"type":"reasoning","id":"rs_2","summary":[]}],"usage":{"input_tokens":10,"output_tokens":16,"output_tokens_details":{"reasoning_tokens":16}}}`,
		want: &conv.Response{ID: "resp_2", Model: "gpt-5", Stop: conv.StopMaxTokens, Usage: conv.Usage{Input: 10, Output: 16, Reasoning: 16}},
	}, {
		name: "content filter is a refusal; a refusal part is text",
		body: `{"id":"resp_3","status":"incomplete","incomplete_details":{"reason":"content_filter"},"model":"gpt-5",
			"output":[{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}]}`,
		want: &conv.Response{ID: "resp_3", Model: "gpt-5", Parts: []conv.Part{{Kind: conv.PartText, Text: "I can't help with that."}}, Stop: conv.StopRefusal},
	}, {
		name: "plain answer",
		body: `{"id":"resp_4","status":"completed","model":"gpt-4.1","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi."}]}],"usage":null}`,
		want: &conv.Response{ID: "resp_4", Model: "gpt-4.1", Parts: []conv.Part{{Kind: conv.PartText, Text: "Hi."}}, Stop: conv.StopEnd},
	}} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Codec.DecodeResponse([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("\n got: %+v\nwant: %+v", got, c.want)
			}
		})
	}
}

func TestDecodeResponseErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"status":"failed","error":{"code":"server_error","message":"boom"}}`, "server_error: boom"},
		{`{"output":"x"}`, "cannot unmarshal"},
		{`{"output":null}`, "no output"},
		{`{"id":"resp_1","status":"completed"}`, "no output"},
		{`null`, "no output"},
	} {
		_, err := Codec.DecodeResponse([]byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeResponse(%s) = %v, want an error containing %q", c.body, err, c.want)
		}
	}
}

// codexClient is a Responses client's request with a custom tool and a
// namespace, as the response encoders look tools up in it.
func codexClient() *conv.Request {
	return &conv.Request{From: Protocol, Model: "gpt-5.1-codex", Tools: []conv.Tool{
		{Kind: conv.ToolFunction, Name: "exec_command", Schema: conv.EmptySchema},
		{Kind: conv.ToolCustom, Name: "apply_patch", Schema: conv.CustomSchema},
		{Kind: conv.ToolFunction, Name: "mcp__docs__read", Namespace: "mcp__docs", Schema: conv.EmptySchema},
	}}
}

func TestEncodeResponse(t *testing.T) {
	for _, c := range []struct {
		name string
		resp *conv.Response
		req  *conv.Request
		want string
	}{{
		name: "Anthropic thinking with its signature, text, custom, namespaced and plain calls",
		resp: &conv.Response{ID: "msg_01", Model: "claude-sonnet-4-5",
			Parts: []conv.Part{
				{Kind: conv.PartReasoning, Text: "Let me patch.", Signature: "EqQB"},
				{Kind: conv.PartReasoning, Redacted: "EmwK"},
				{Kind: conv.PartText, Text: "Patching."},
				{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "apply_patch", Args: conv.CustomArgs("*** Begin Patch\n*** End Patch\n")},
				{Kind: conv.PartToolCall, CallID: "toolu_2", Name: "mcp__docs__read", Args: `{"path":"a"}`},
				{Kind: conv.PartToolCall, CallID: "toolu_3", Name: "exec_command", Args: `{"cmd":"ls"}`},
			},
			Stop:  conv.StopToolUse,
			Usage: conv.Usage{Input: 10, CacheRead: 1000, CacheWrite: 50, Output: 200, Reasoning: 0}},
		req: codexClient(),
		want: `{"id":"msg_01","object":"response","created_at":1700000000,"status":"completed","model":"gpt-5.1-codex",
			"output":[
				{"id":"rs_tok_0","type":"reasoning","summary":[{"type":"summary_text","text":"Let me patch."}],"encrypted_content":"` + conv.SignaturePrefix + `EqQB"},
				{"id":"rs_tok_1","type":"reasoning","summary":[],"encrypted_content":"` + conv.RedactedPrefix + `EmwK"},
				{"id":"msg_tok_2","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Patching.","annotations":[]}]},
				{"id":"ctc_tok_3","type":"custom_tool_call","status":"completed","call_id":"toolu_1","name":"apply_patch","input":"*** Begin Patch\n*** End Patch\n"},
				{"id":"fc_tok_4","type":"function_call","status":"completed","call_id":"toolu_2","name":"read","namespace":"mcp__docs","arguments":"{\"path\":\"a\"}"},
				{"id":"fc_tok_5","type":"function_call","status":"completed","call_id":"toolu_3","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}],
			"usage":{"input_tokens":1060,"input_tokens_details":{"cached_tokens":1000},"output_tokens":200,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":1260}}`,
	}, {
		name: "max tokens is incomplete; a generated id; the upstream's reasoning id and encryption kept",
		resp: &conv.Response{Model: "gpt-5",
			Parts: []conv.Part{{Kind: conv.PartReasoning, Text: "hm", Encrypted: "gAAA", ItemID: "rs_up"}, {Kind: conv.PartText, Text: "Partial"}},
			Stop:  conv.StopMaxTokens, Usage: conv.Usage{Input: 5, Output: 16, Reasoning: 10}},
		req: &conv.Request{From: Protocol, Model: "my-alias"},
		want: `{"id":"resp_tok","object":"response","created_at":1700000000,"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"my-alias",
			"output":[
				{"id":"rs_up","type":"reasoning","summary":[{"type":"summary_text","text":"hm"}],"encrypted_content":"gAAA"},
				{"id":"msg_tok_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Partial","annotations":[]}]}],
			"usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":0},"output_tokens":16,"output_tokens_details":{"reasoning_tokens":10},"total_tokens":21}}`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Codec.EncodeResponse(c.resp, c.req)
			if err != nil {
				t.Fatal(err)
			}
			assertJSON(t, got, c.want)
		})
	}
}

// TestResponseRoundTrip: a response encoded for a Responses client decodes
// back to the same parts (a signature travels as marked encrypted_content,
// which only the request decoder unmarks).
func TestResponseRoundTrip(t *testing.T) {
	resp := &conv.Response{ID: "resp_x", Model: "gpt-5.1-codex",
		Parts: []conv.Part{
			{Kind: conv.PartReasoning, Text: "t", Encrypted: "e", ItemID: "rs_1"},
			{Kind: conv.PartText, Text: "x"},
			{Kind: conv.PartToolCall, CallID: "c1", Name: "apply_patch", Custom: true, Args: conv.CustomArgs("patch")},
			{Kind: conv.PartToolCall, CallID: "c2", Name: "mcp__docs__read", Namespace: "mcp__docs", Args: `{"a":1}`},
		},
		Stop: conv.StopToolUse, Usage: conv.Usage{Input: 1, CacheRead: 2, Output: 3, Reasoning: 1}}
	body, err := Codec.EncodeResponse(resp, codexClient())
	if err != nil {
		t.Fatal(err)
	}
	back, err := Codec.DecodeResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, resp) {
		t.Errorf("\n got: %+v\nwant: %+v", back, resp)
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(body, &v) != nil || v["error"] != nil {
		t.Errorf("unexpected body %s", body)
	}
}
