package responses

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// encodeAll runs events (then Fail(failMsg), when not "") through an
// encoder for req.
func encodeAll(req *conv.Request, evs []conv.Event, failMsg string) []byte {
	e := Codec.StreamEncoder(req)
	var out []byte
	for _, ev := range evs {
		out = e.Encode(out, ev)
	}
	if failMsg != "" {
		out = e.Fail(out, failMsg)
	}
	return out
}

// checkStreamRules asserts what every client stream must hold: each
// event's data type is its event name, sequence numbers count up from 0,
// and an item is announced (output_item.added) before any event about it.
func checkStreamRules(t *testing.T, stream []sse) {
	t.Helper()
	announced := map[string]bool{}
	for i, ev := range stream {
		var head struct {
			Type   string `json:"type"`
			Seq    *int   `json:"sequence_number"`
			ItemID string `json:"item_id"`
			Item   *struct {
				ID string `json:"id"`
			} `json:"item"`
		}
		if err := json.Unmarshal([]byte(ev.data), &head); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if head.Type != ev.name {
			t.Errorf("event %d: named %q, typed %q", i, ev.name, head.Type)
		}
		if head.Seq == nil || *head.Seq != i {
			t.Errorf("event %d (%s): sequence_number %v, want %d", i, ev.name, head.Seq, i)
		}
		switch {
		case ev.name == "response.output_item.added":
			announced[head.Item.ID] = true
		case ev.name == "response.output_item.done":
			if !announced[head.Item.ID] {
				t.Errorf("event %d: item %s done before it was added", i, head.Item.ID)
			}
		case head.ItemID != "" && !announced[head.ItemID]:
			t.Errorf("event %d (%s): item %s not announced yet", i, ev.name, head.ItemID)
		}
	}
}

// assertStream compares a client stream with the wanted events: names in
// order, data structurally.
func assertStream(t *testing.T, got []byte, want []sse) {
	t.Helper()
	stream := parseSSE(t, got)
	checkStreamRules(t, stream)
	for i := range max(len(stream), len(want)) {
		switch {
		case i >= len(stream):
			t.Errorf("event %d missing: %s %s", i, want[i].name, want[i].data)
		case i >= len(want):
			t.Errorf("event %d extra: %s %s", i, stream[i].name, stream[i].data)
		case stream[i].name != want[i].name:
			t.Errorf("event %d is %s, want %s", i, stream[i].name, want[i].name)
		default:
			var g, w any
			_ = json.Unmarshal([]byte(stream[i].data), &g)
			if err := json.Unmarshal([]byte(want[i].data), &w); err != nil {
				t.Fatalf("want event %d: %v", i, err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("event %d (%s)\n got: %s\nwant: %s", i, want[i].name, stream[i].data, compact(want[i].data))
			}
		}
	}
}

// clientEvents builds the expected client stream: sequence numbers are
// added in order.
func clientEvents(pairs ...string) []sse { return events(pairs...) }

const (
	inProgress = `"response":{"id":"msg_up","object":"response","created_at":1700000000,"status":"in_progress","model":"gpt-5.1-codex","output":[]}`
	msgAdded   = `"output_index":0,"item":{"id":"msg_tok_0","type":"message","status":"in_progress","role":"assistant","content":[]}`
	msgDone    = `"output_index":0,"item":{"id":"msg_tok_0","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello","annotations":[]}]}`
	fcDone     = `{"id":"fc_tok_1","type":"function_call","status":"completed","call_id":"toolu_1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}`
)

// TestStreamEncodeTextToolFinish: the exact stream Codex gets for text, a
// tool call and the finish of an Anthropic upstream.
func TestStreamEncodeTextToolFinish(t *testing.T) {
	got := encodeAll(codexClient(), []conv.Event{
		{Type: conv.EvStart, ID: "msg_up", Model: "claude-sonnet-4-5", Usage: conv.Usage{Input: 10, CacheRead: 100}},
		evBlockStart(0, textPart),
		evDelta(0, "Hel"),
		evDelta(0, "lo"),
		evStop(0, textPart),
		evBlockStart(1, conv.Part{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "exec_command"}),
		evDelta(1, `{"cmd":"ls"}`),
		evStop(1, toolCallKind),
		evFinish(conv.StopToolUse, conv.Usage{Input: 10, CacheRead: 100, Output: 20}),
	}, "")
	assertStream(t, got, clientEvents(
		"response.created", inProgress,
		"response.in_progress", inProgress,
		"response.output_item.added", msgAdded,
		"response.content_part.added", `"item_id":"msg_tok_0","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`,
		"response.output_text.delta", `"item_id":"msg_tok_0","output_index":0,"content_index":0,"delta":"Hel"`,
		"response.output_text.delta", `"item_id":"msg_tok_0","output_index":0,"content_index":0,"delta":"lo"`,
		"response.output_text.done", `"item_id":"msg_tok_0","output_index":0,"content_index":0,"text":"Hello"`,
		"response.content_part.done", `"item_id":"msg_tok_0","output_index":0,"content_index":0,"part":{"type":"output_text","text":"Hello","annotations":[]}`,
		"response.output_item.done", msgDone,
		"response.output_item.added", `"output_index":1,"item":{"id":"fc_tok_1","type":"function_call","status":"in_progress","call_id":"toolu_1","name":"exec_command","arguments":""}`,
		"response.function_call_arguments.delta", `"item_id":"fc_tok_1","output_index":1,"delta":"{\"cmd\":\"ls\"}"`,
		"response.function_call_arguments.done", `"item_id":"fc_tok_1","output_index":1,"arguments":"{\"cmd\":\"ls\"}"`,
		"response.output_item.done", `"output_index":1,"item":`+fcDone,
		"response.completed", `"response":{"id":"msg_up","object":"response","created_at":1700000000,"status":"completed","model":"gpt-5.1-codex",
			"output":[{"id":"msg_tok_0","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello","annotations":[]}]},`+fcDone+`],
			"usage":{"input_tokens":110,"input_tokens_details":{"cached_tokens":100},"output_tokens":20,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":130}}`,
	))
}

// TestStreamEncodeReasoningCustomNamespace: thinking with its signature,
// an apply_patch call as a custom tool call, a namespaced call, and a
// max-tokens finish as response.completed with status incomplete.
func TestStreamEncodeReasoningCustomNamespace(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"
	const head = `"response":{"id":"resp_tok","object":"response","created_at":1700000000,"status":"in_progress","model":"gpt-5.1-codex","output":[]}`
	rsDone := `{"id":"rs_tok_0","type":"reasoning","summary":[{"type":"summary_text","text":"Need a file."}],"encrypted_content":"` + conv.SignaturePrefix + `EqQB"}`
	ctcDone := `{"id":"ctc_tok_1","type":"custom_tool_call","status":"completed","call_id":"toolu_2","name":"apply_patch","input":` + string(conv.Marshal(patch)) + `}`
	nsDone := `{"id":"fc_tok_2","type":"function_call","status":"completed","call_id":"toolu_3","name":"read","namespace":"mcp__docs","arguments":"{}"}`
	got := encodeAll(codexClient(), []conv.Event{
		{Type: conv.EvStart, Model: "claude"},
		evBlockStart(0, reasoningKind),
		evDelta(0, "Need "),
		evDelta(0, "a file."),
		evStop(0, conv.Part{Kind: conv.PartReasoning, Signature: "EqQB"}),
		evBlockStart(1, conv.Part{Kind: conv.PartToolCall, CallID: "toolu_2", Name: "apply_patch"}),
		evDelta(1, conv.CustomArgs(patch)),
		evStop(1, toolCallKind),
		evBlockStart(2, conv.Part{Kind: conv.PartToolCall, CallID: "toolu_3", Name: "mcp__docs__read"}),
		evDelta(2, "{}"),
		evStop(2, toolCallKind),
		evFinish(conv.StopMaxTokens, conv.Usage{Input: 7, Output: 9}),
		evFinish(conv.StopEnd, conv.Usage{Input: 1}), // a second finish is ignored
	}, "too late") // and so is a Fail after the end
	assertStream(t, got, clientEvents(
		"response.created", head,
		"response.in_progress", head,
		"response.output_item.added", `"output_index":0,"item":{"id":"rs_tok_0","type":"reasoning","summary":[]}`,
		"response.reasoning_summary_part.added", `"item_id":"rs_tok_0","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}`,
		"response.reasoning_summary_text.delta", `"item_id":"rs_tok_0","output_index":0,"summary_index":0,"delta":"Need "`,
		"response.reasoning_summary_text.delta", `"item_id":"rs_tok_0","output_index":0,"summary_index":0,"delta":"a file."`,
		"response.reasoning_summary_text.done", `"item_id":"rs_tok_0","output_index":0,"summary_index":0,"text":"Need a file."`,
		"response.reasoning_summary_part.done", `"item_id":"rs_tok_0","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":"Need a file."}`,
		"response.output_item.done", `"output_index":0,"item":`+rsDone,
		"response.output_item.added", `"output_index":1,"item":{"id":"ctc_tok_1","type":"custom_tool_call","status":"in_progress","call_id":"toolu_2","name":"apply_patch","input":""}`,
		"response.custom_tool_call_input.delta", `"item_id":"ctc_tok_1","output_index":1,"delta":`+string(conv.Marshal(patch)),
		"response.custom_tool_call_input.done", `"item_id":"ctc_tok_1","output_index":1,"input":`+string(conv.Marshal(patch)),
		"response.output_item.done", `"output_index":1,"item":`+ctcDone,
		"response.output_item.added", `"output_index":2,"item":{"id":"fc_tok_2","type":"function_call","status":"in_progress","call_id":"toolu_3","name":"read","namespace":"mcp__docs","arguments":""}`,
		"response.function_call_arguments.delta", `"item_id":"fc_tok_2","output_index":2,"delta":"{}"`,
		"response.function_call_arguments.done", `"item_id":"fc_tok_2","output_index":2,"arguments":"{}"`,
		"response.output_item.done", `"output_index":2,"item":`+nsDone,
		"response.completed", `"response":{"id":"resp_tok","object":"response","created_at":1700000000,"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"gpt-5.1-codex",
			"output":[`+rsDone+`,`+ctcDone+`,`+nsDone+`],
			"usage":{"input_tokens":7,"input_tokens_details":{"cached_tokens":0},"output_tokens":9,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":16}}`,
	))
}

func TestStreamEncodeErrors(t *testing.T) {
	const head = `"response":{"id":"resp_tok","object":"response","created_at":1700000000,"status":"in_progress","model":"gpt-5.1-codex","output":[]}`
	hiDone := `{"id":"msg_tok_0","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi","annotations":[]}]}`
	hiStart := []string{
		"response.created", head,
		"response.in_progress", head,
		"response.output_item.added", `"output_index":0,"item":{"id":"msg_tok_0","type":"message","status":"in_progress","role":"assistant","content":[]}`,
		"response.content_part.added", `"item_id":"msg_tok_0","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`,
		"response.output_text.delta", `"item_id":"msg_tok_0","output_index":0,"content_index":0,"delta":"Hi"`,
	}
	hiClose := []string{
		"response.output_text.done", `"item_id":"msg_tok_0","output_index":0,"content_index":0,"text":"Hi"`,
		"response.content_part.done", `"item_id":"msg_tok_0","output_index":0,"content_index":0,"part":{"type":"output_text","text":"Hi","annotations":[]}`,
		"response.output_item.done", `"output_index":0,"item":` + hiDone,
	}
	failed := func(code, msg, output string) []string {
		return []string{"response.failed", `"response":{"id":"resp_tok","object":"response","created_at":1700000000,"status":"failed","error":{"code":"` + code + `","message":"` + msg + `"},"model":"gpt-5.1-codex","output":[` + output + `]}`}
	}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, c := range []struct {
		name string
		in   []conv.Event
		fail string
		want []string
	}{{
		name: "an upstream error mid-text completes the text, then response.failed; nothing follows",
		in: []conv.Event{
			{Type: conv.EvStart}, evBlockStart(0, textPart), evDelta(0, "Hi"),
			{Type: conv.EvError, Err: &conv.StreamError{Type: "overloaded_error", Message: "Overloaded"}},
			evDelta(0, "more"), evFinish(conv.StopEnd, conv.Usage{}),
		},
		want: cat(hiStart, hiClose, failed("overloaded_error", "Overloaded", hiDone)),
	}, {
		name: "Fail with a tool call open leaves the call out",
		in: []conv.Event{
			{Type: conv.EvStart}, evBlockStart(0, textPart), evDelta(0, "Hi"), evStop(0, textPart),
			evBlockStart(1, conv.Part{Kind: conv.PartToolCall, CallID: "c", Name: "exec_command"}),
		},
		fail: "upstream stream ended early",
		want: cat(hiStart, hiClose, []string{
			"response.output_item.added", `"output_index":1,"item":{"id":"fc_tok_1","type":"function_call","status":"in_progress","call_id":"c","name":"exec_command","arguments":""}`,
		}, failed("upstream_error", "upstream stream ended early", hiDone)),
	}, {
		name: "Fail before anything still starts the response",
		fail: "no answer",
		want: cat(hiStart[:4], failed("upstream_error", "no answer", "")),
	}} {
		t.Run(c.name, func(t *testing.T) {
			assertStream(t, encodeAll(codexClient(), c.in, c.fail), clientEvents(c.want...))
		})
	}
}

// TestStreamRoundTrip: a Responses stream written by the encoder reads
// back, through the decoder, as the same neutral events.
func TestStreamRoundTrip(t *testing.T) {
	in := []conv.Event{
		evStart("resp_rt", "gpt-5.1-codex"),
		evBlockStart(0, conv.Part{Kind: conv.PartReasoning, ItemID: "rs_up"}),
		evDelta(0, "plan"),
		evStop(0, conv.Part{Kind: conv.PartReasoning, Encrypted: "gAAA", ItemID: "rs_up"}),
		evBlockStart(1, textPart),
		evDelta(1, "a"),
		evDelta(1, "b"),
		evStop(1, textPart),
		evBlockStart(2, conv.Part{Kind: conv.PartToolCall, CallID: "c1", Name: "apply_patch", Custom: true}),
		evDelta(2, conv.CustomArgs("p")),
		evStop(2, toolCallKind),
		evBlockStart(3, conv.Part{Kind: conv.PartToolCall, CallID: "c2", Name: "mcp__docs__read", Namespace: "mcp__docs"}),
		evDelta(3, `{"x":[1,2]}`),
		evStop(3, toolCallKind),
		evFinish(conv.StopToolUse, conv.Usage{Input: 3, CacheRead: 4, Output: 5, Reasoning: 2}),
	}
	stream := parseSSE(t, encodeAll(codexClient(), in, ""))
	got, complete := decodeAll(t, stream)
	if !complete {
		t.Error("the round trip lost the finish")
	}
	want := append([]conv.Event(nil), in...)
	want[0].Model = "gpt-5.1-codex" // the client's model, echoed
	assertEvents(t, got, want)
}
