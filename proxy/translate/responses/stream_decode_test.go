package responses

import (
	"strconv"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// events builds an upstream stream from (type, other members) pairs, with
// increasing sequence numbers as OpenAI sends them.
func events(pairs ...string) []sse {
	out := make([]sse, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		typ, members := pairs[i], pairs[i+1]
		data := `{"type":"` + typ + `","sequence_number":` + strconv.Itoa(i/2)
		if members != "" {
			data += "," + members
		}
		out = append(out, sse{name: typ, data: data + "}"})
	}
	return out
}

const (
	respCreated    = `"response":{"id":"resp_9","object":"response","created_at":1760000000,"status":"in_progress","model":"gpt-5.1-codex","output":[],"usage":null}`
	respInProgress = respCreated
)

// TestStreamDecodeCodexTurn: a whole turn as OpenAI streams it to Codex —
// a two-part reasoning summary, text, a function call whose arguments come
// in fragments, an apply_patch custom call, and the final usage.
func TestStreamDecodeCodexTurn(t *testing.T) {
	in := events(
		"response.created", respCreated,
		"response.in_progress", respInProgress,
		"response.output_item.added", `"output_index":0,"item":{"id":"rs_9","type":"reasoning","summary":[]}`,
		"response.reasoning_summary_part.added", `"item_id":"rs_9","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}`,
		"response.reasoning_summary_text.delta", `"item_id":"rs_9","output_index":0,"summary_index":0,"delta":"**Reading**"`,
		"response.reasoning_summary_text.done", `"item_id":"rs_9","output_index":0,"summary_index":0,"text":"**Reading**"`,
		"response.reasoning_summary_part.done", `"item_id":"rs_9","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":"**Reading**"}`,
		"response.reasoning_summary_part.added", `"item_id":"rs_9","output_index":0,"summary_index":1,"part":{"type":"summary_text","text":""}`,
		"response.reasoning_summary_text.delta", `"item_id":"rs_9","output_index":0,"summary_index":1,"delta":"Looking at "`,
		"response.reasoning_summary_text.delta", `"item_id":"rs_9","output_index":0,"summary_index":1,"delta":"main.go"`,
		"response.reasoning_summary_text.done", `"item_id":"rs_9","output_index":0,"summary_index":1,"text":"Looking at main.go"`,
		"response.output_item.done", `"output_index":0,"item":{"id":"rs_9","type":"reasoning","summary":[{"type":"summary_text","text":"**Reading**"},{"type":"summary_text","text":"Looking at main.go"}],"encrypted_content":"gAAAAA9"}`,
		"response.output_item.added", `"output_index":1,"item":{"id":"msg_9","type":"message","status":"in_progress","role":"assistant","content":[]}`,
		"response.content_part.added", `"item_id":"msg_9","output_index":1,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`,
		"response.output_text.delta", `"item_id":"msg_9","output_index":1,"content_index":0,"delta":"I'll ","logprobs":[]`,
		"response.output_text.delta", `"item_id":"msg_9","output_index":1,"content_index":0,"delta":"check.","logprobs":[]`,
		"response.output_text.done", `"item_id":"msg_9","output_index":1,"content_index":0,"text":"I'll check.","logprobs":[]`,
		"response.content_part.done", `"item_id":"msg_9","output_index":1,"content_index":0,"part":{"type":"output_text","text":"I'll check.","annotations":[]}`,
		"response.output_item.done", `"output_index":1,"item":{"id":"msg_9","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"I'll check.","annotations":[]}]}`,
		"response.output_item.added", `"output_index":2,"item":{"id":"fc_9","type":"function_call","status":"in_progress","arguments":"","call_id":"call_9","name":"exec_command"}`,
		"response.function_call_arguments.delta", `"item_id":"fc_9","output_index":2,"delta":"{\"cmd\":"`,
		"response.function_call_arguments.delta", `"item_id":"fc_9","output_index":2,"delta":" \"cat main.go\""`,
		"response.function_call_arguments.delta", `"item_id":"fc_9","output_index":2,"delta":"}"`,
		"response.function_call_arguments.done", `"item_id":"fc_9","output_index":2,"arguments":"{\"cmd\": \"cat main.go\"}"`,
		"response.output_item.done", `"output_index":2,"item":{"id":"fc_9","type":"function_call","status":"completed","arguments":"{\"cmd\": \"cat main.go\"}","call_id":"call_9","name":"exec_command"}`,
		"response.output_item.added", `"output_index":3,"item":{"id":"ctc_9","type":"custom_tool_call","status":"in_progress","call_id":"call_10","name":"apply_patch","input":""}`,
		"response.custom_tool_call_input.delta", `"item_id":"ctc_9","output_index":3,"delta":"*** Begin Patch\n"`,
		"response.custom_tool_call_input.delta", `"item_id":"ctc_9","output_index":3,"delta":"*** End Patch\n"`,
		"response.custom_tool_call_input.done", `"item_id":"ctc_9","output_index":3,"input":"*** Begin Patch\n*** End Patch\n"`,
		"response.output_item.done", `"output_index":3,"item":{"id":"ctc_9","type":"custom_tool_call","status":"completed","call_id":"call_10","name":"apply_patch","input":"*** Begin Patch\n*** End Patch\n"}`,
		"response.completed", `"response":{"id":"resp_9","object":"response","status":"completed","model":"gpt-5.1-codex","output":[],"usage":{"input_tokens":5000,"input_tokens_details":{"cached_tokens":4096},"output_tokens":400,"output_tokens_details":{"reasoning_tokens":128},"total_tokens":5400}}`,
	)
	got, complete := decodeAll(t, in)
	if !complete {
		t.Error("a stream with response.completed is complete")
	}
	assertEvents(t, got, []conv.Event{
		evStart("resp_9", "gpt-5.1-codex"),
		evBlockStart(0, conv.Part{Kind: conv.PartReasoning, ItemID: "rs_9"}),
		evDelta(0, "**Reading**"),
		evDelta(0, "\n\nLooking at "),
		evDelta(0, "main.go"),
		evStop(0, conv.Part{Kind: conv.PartReasoning, Encrypted: "gAAAAA9", ItemID: "rs_9"}),
		evBlockStart(1, textPart),
		evDelta(1, "I'll "),
		evDelta(1, "check."),
		evStop(1, textPart),
		evBlockStart(2, conv.Part{Kind: conv.PartToolCall, CallID: "call_9", Name: "exec_command"}),
		evDelta(2, `{"cmd":"cat main.go"}`),
		evStop(2, toolCallKind),
		evBlockStart(3, conv.Part{Kind: conv.PartToolCall, CallID: "call_10", Name: "apply_patch", Custom: true}),
		evDelta(3, conv.CustomArgs("*** Begin Patch\n*** End Patch\n")),
		evStop(3, toolCallKind),
		evFinish(conv.StopToolUse, conv.Usage{Input: 904, CacheRead: 4096, Output: 400, Reasoning: 128}),
	})
}

func TestStreamDecode(t *testing.T) {
	completed := `"response":{"id":"resp_9","status":"completed","model":"gpt-5.1-codex","usage":{"input_tokens":10,"output_tokens":5}}`
	usage := conv.Usage{Input: 10, Output: 5}
	for _, c := range []struct {
		name     string
		in       []sse
		want     []conv.Event
		complete bool
	}{{
		name: "items given whole at output_item.done, with no deltas",
		in: events(
			"response.created", respCreated,
			"response.output_item.added", `"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}`,
			"response.output_item.done", `"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Quick."}],"encrypted_content":"enc"}`,
			"response.output_item.added", `"output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}`,
			"response.output_item.done", `"output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}`,
			"response.completed", completed,
		),
		want: []conv.Event{
			evStart("resp_9", "gpt-5.1-codex"),
			evBlockStart(0, conv.Part{Kind: conv.PartReasoning, ItemID: "rs_1"}),
			evDelta(0, "Quick."),
			evStop(0, conv.Part{Kind: conv.PartReasoning, Encrypted: "enc", ItemID: "rs_1"}),
			evBlockStart(1, textPart),
			evDelta(1, "Done."),
			evStop(1, textPart),
			evFinish(conv.StopEnd, usage),
		},
		complete: true,
	}, {
		name: "argument fragments before their item, interleaved calls, a namespaced call, arguments only in fragments",
		in: events(
			"response.created", respCreated,
			"response.function_call_arguments.delta", `"item_id":"fc_b","output_index":1,"delta":"{\"q\":"`,
			"response.output_item.added", `"output_index":0,"item":{"id":"fc_a","type":"function_call","call_id":"call_a","name":"read","namespace":"mcp__docs","arguments":""}`,
			"response.output_item.added", `"output_index":1,"item":{"id":"fc_b","type":"function_call","call_id":"call_b","name":"search","arguments":""}`,
			"response.function_call_arguments.delta", `"item_id":"fc_a","output_index":0,"delta":"{\"path\""`,
			"response.function_call_arguments.delta", `"item_id":"fc_b","output_index":1,"delta":"\"go\"}"`,
			"response.function_call_arguments.delta", `"item_id":"fc_a","output_index":0,"delta":":\"a.md\"}"`,
			"response.output_item.done", `"output_index":1,"item":{"id":"fc_b","type":"function_call","call_id":"call_b","name":"search"}`,
			"response.output_item.done", `"output_index":0,"item":{"id":"fc_a","type":"function_call","call_id":"call_a","name":"read","namespace":"mcp__docs"}`,
			"response.completed", completed,
		),
		want: []conv.Event{
			evStart("resp_9", "gpt-5.1-codex"),
			evBlockStart(0, conv.Part{Kind: conv.PartToolCall, CallID: "call_b", Name: "search"}),
			evDelta(0, `{"q":"go"}`),
			evStop(0, toolCallKind),
			evBlockStart(1, conv.Part{Kind: conv.PartToolCall, CallID: "call_a", Name: "mcp__docs__read", Namespace: "mcp__docs"}),
			evDelta(1, `{"path":"a.md"}`),
			evStop(1, toolCallKind),
			evFinish(conv.StopToolUse, usage),
		},
		complete: true,
	}, {
		name: "response.incomplete is a finish for max tokens",
		in: events(
			"response.created", respCreated,
			"response.output_text.delta", `"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Long answ"`,
			"response.incomplete", `"response":{"id":"resp_9","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":10,"output_tokens":5}}`,
		),
		want: []conv.Event{
			evStart("resp_9", "gpt-5.1-codex"),
			evBlockStart(0, textPart),
			evDelta(0, "Long answ"),
			evStop(0, textPart),
			evFinish(conv.StopMaxTokens, usage),
		},
		complete: true,
	}, {
		name: "response.completed with status incomplete (as ccmesh writes it for Codex) is max tokens too",
		in: events(
			"response.created", respCreated,
			"response.completed", `"response":{"id":"resp_9","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}`,
		),
		want:     []conv.Event{evStart("resp_9", "gpt-5.1-codex"), evFinish(conv.StopMaxTokens, conv.Usage{})},
		complete: true,
	}, {
		name: "response.failed mid-text is an error; nothing follows",
		in: events(
			"response.created", respCreated,
			"response.output_item.added", `"output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}`,
			"response.output_text.delta", `"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hel"`,
			"response.failed", `"response":{"id":"resp_9","status":"failed","error":{"code":"server_error","message":"The server had an error processing your request."}}`,
			"response.output_text.delta", `"item_id":"msg_1","output_index":0,"content_index":0,"delta":"lo"`,
		),
		want: []conv.Event{
			evStart("resp_9", "gpt-5.1-codex"),
			evBlockStart(0, textPart),
			evDelta(0, "Hel"),
			{Type: conv.EvError, Err: &conv.StreamError{Type: "server_error", Message: "The server had an error processing your request."}},
		},
	}, {
		name: "an error event",
		in: events(
			"response.created", respCreated,
			"error", `"code":"rate_limit_exceeded","message":"Rate limit reached for gpt-5 on tokens per min.","param":null`,
		),
		want: []conv.Event{
			evStart("resp_9", "gpt-5.1-codex"),
			{Type: conv.EvError, Err: &conv.StreamError{Type: "rate_limit_exceeded", Message: "Rate limit reached for gpt-5 on tokens per min."}},
		},
	}, {
		name: "a cut stream: the open text is closed, a half call gets {} arguments",
		in: events(
			"response.created", respCreated,
			"response.output_text.delta", `"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Running"`,
			"response.output_item.added", `"output_index":1,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"exec_command","arguments":""}`,
			"response.function_call_arguments.delta", `"item_id":"fc_1","output_index":1,"delta":"{\"cmd\":\"rm -"`,
		),
		want: []conv.Event{
			evStart("resp_9", "gpt-5.1-codex"),
			evBlockStart(0, textPart),
			evDelta(0, "Running"),
			evStop(0, textPart),
			evBlockStart(1, conv.Part{Kind: conv.PartToolCall, CallID: "call_1", Name: "exec_command"}),
			evDelta(1, "{}"),
			evStop(1, toolCallKind),
		},
	}, {
		name: "only response.completed: its output is replayed",
		in: events(
			"response.completed", `"response":{"id":"resp_5","status":"completed","model":"m","output":[
				{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]},
				{"type":"function_call","call_id":"c","name":"f","arguments":"{\"b\":1, \"a\":2}"}],
				"usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":1},"output_tokens":2}}`,
		),
		want: []conv.Event{
			evStart("resp_5", "m"),
			evBlockStart(0, textPart),
			evDelta(0, "hi"),
			evStop(0, textPart),
			evBlockStart(1, conv.Part{Kind: conv.PartToolCall, CallID: "c", Name: "f"}),
			evDelta(1, `{"a":2,"b":1}`),
			evStop(1, toolCallKind),
			evFinish(conv.StopToolUse, conv.Usage{Input: 2, CacheRead: 1, Output: 2}),
		},
		complete: true,
	}, {
		name: "raw reasoning text (no summary) and a refusal; unnamed events use their type",
		in: func() []sse {
			in := events(
				"response.created", respCreated,
				"response.output_item.added", `"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}`,
				"response.reasoning_text.delta", `"item_id":"rs_1","output_index":0,"content_index":0,"delta":"think"`,
				"response.reasoning_summary_text.delta", `"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"ignored: raw text came first"`,
				"response.output_item.done", `"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"think"}]}`,
				"response.refusal.delta", `"item_id":"msg_1","output_index":1,"content_index":0,"delta":"No."`,
				"response.output_item.done", `"output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"refusal","refusal":"No."}]}`,
				"response.completed", completed,
			)
			for i := range in {
				in[i].name = ""
			}
			return append(in, sse{data: "[DONE]"})
		}(),
		want: []conv.Event{
			evStart("resp_9", "gpt-5.1-codex"),
			evBlockStart(0, conv.Part{Kind: conv.PartReasoning, ItemID: "rs_1"}),
			evDelta(0, "think"),
			evStop(0, conv.Part{Kind: conv.PartReasoning, ItemID: "rs_1"}),
			evBlockStart(1, textPart),
			evDelta(1, "No."),
			evStop(1, textPart),
			evFinish(conv.StopEnd, usage),
		},
		complete: true,
	}, {
		name: "events of types not translated are skipped, even unparseable ones",
		in: append(events(
			"response.created", respCreated,
			"response.web_search_call.in_progress", `"item_id":"ws_1","output_index":0`,
			"response.output_text.annotation.added", `"item_id":"msg_1","output_index":1,"annotation":{"type":"url_citation"}`,
		), sse{name: "response.audio.delta", data: `{"delta":{"weird":true}}`}),
		want: []conv.Event{evStart("resp_9", "gpt-5.1-codex")},
	}} {
		t.Run(c.name, func(t *testing.T) {
			got, complete := decodeAll(t, c.in)
			if complete != c.complete {
				t.Errorf("End = %v, want %v", complete, c.complete)
			}
			assertEvents(t, got, c.want)
		})
	}
}

func TestStreamDecodeBadEvent(t *testing.T) {
	d := Codec.StreamDecoder()
	if err := d.Decode("response.output_text.delta", []byte(`{"delta":`), func(conv.Event) {}); err == nil {
		t.Error("a truncated event of a translated type must be an error")
	}
}
