package anthropic

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// claudeStream is an upstream stream: thinking with a signature, text,
// two tool calls with input_json_delta cut at odd places, two
// message_delta events (the second with a zero input count that must not
// win), a ping, and a duplicated message_stop.
var claudeStream = []string{
	"message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":300,"cache_read_input_tokens":20000,"output_tokens":1}}}`,
	"ping", `{"type": "ping"}`,
	"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
	"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}}`,
	"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"look."}}`,
	"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkYI"}}`,
	"content_block_stop", `{"type":"content_block_stop","index":0}`,
	"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
	"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"I'll read "}}`,
	"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"both."}}`,
	"content_block_stop", `{"type":"content_block_stop","index":1}`,
	"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01","name":"Read","input":{}}}`,
	"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`,
	"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"file_pa"}}`,
	"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"th\": \"/a.go\""}}`,
	"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"}"}}`,
	"content_block_stop", `{"type":"content_block_stop","index":2}`,
	"content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_02","name":"Bash","input":{}}}`,
	"content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"timeout\": 120000, \"comm"}}`,
	"content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"and\":\"go test ./...\"}"}}`,
	"content_block_stop", `{"type":"content_block_stop","index":3}`,
	"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":150}}`,
	"message_delta", `{"type":"message_delta","delta":{},"usage":{"input_tokens":0,"cache_read_input_tokens":20000,"output_tokens":162}}`,
	"message_stop", `{"type":"message_stop"}`,
	"message_stop", `{"type":"message_stop"}`,
}

func claudeStreamEvents() []conv.Event {
	reasoning := conv.Part{Kind: conv.PartReasoning}
	text := conv.Part{Kind: conv.PartText}
	read := conv.Part{Kind: conv.PartToolCall, CallID: "toolu_01", Name: "Read"}
	bash := conv.Part{Kind: conv.PartToolCall, CallID: "toolu_02", Name: "Bash"}
	return []conv.Event{
		{Type: conv.EvStart, ID: "msg_01", Model: "claude-sonnet-4-5", Usage: conv.Usage{Input: 12, Output: 1, CacheRead: 20000, CacheWrite: 300}},
		{Type: conv.EvBlockStart, Index: 0, Part: reasoning},
		{Type: conv.EvDelta, Index: 0, Text: "Let me "},
		{Type: conv.EvDelta, Index: 0, Text: "look."},
		{Type: conv.EvBlockStop, Index: 0, Part: conv.Part{Kind: conv.PartReasoning, Signature: "EqQBCkYI"}},
		{Type: conv.EvBlockStart, Index: 1, Part: text},
		{Type: conv.EvDelta, Index: 1, Text: "I'll read "},
		{Type: conv.EvDelta, Index: 1, Text: "both."},
		{Type: conv.EvBlockStop, Index: 1, Part: text},
		{Type: conv.EvBlockStart, Index: 2, Part: read},
		{Type: conv.EvDelta, Index: 2, Text: `{"file_path":"/a.go"}`},
		{Type: conv.EvBlockStop, Index: 2, Part: read},
		{Type: conv.EvBlockStart, Index: 3, Part: bash},
		{Type: conv.EvDelta, Index: 3, Text: `{"command":"go test ./...","timeout":120000}`},
		{Type: conv.EvBlockStop, Index: 3, Part: bash},
		{Type: conv.EvFinish, Stop: conv.StopToolUse, Usage: conv.Usage{Input: 12, Output: 162, CacheRead: 20000, CacheWrite: 300}},
	}
}

func TestStreamDecode(t *testing.T) {
	got, complete := decodeStream(t, claudeStream...)
	if !complete {
		t.Error("End reported a complete stream as cut")
	}
	sameEvents(t, got, claudeStreamEvents())
}

func TestStreamDecodeQuirks(t *testing.T) {
	text := conv.Part{Kind: conv.PartText}
	for _, c := range []struct {
		name     string
		stream   []string
		want     []conv.Event
		complete bool
	}{
		{
			name: "no message_start, repeated upstream indexes, server-tool blocks skipped, redacted thinking, input given whole at the start",
			stream: []string{
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwK"}}`,
				"content_block_stop", `{"type":"content_block_stop","index":0}`,
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"x\"}"}}`,
				"content_block_stop", `{"type":"content_block_stop","index":0}`,
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://x"}]}}`,
				"content_block_stop", `{"type":"content_block_stop","index":0}`,
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Found"}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://x"}}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" it."}}`,
				"content_block_stop", `{"type":"content_block_stop","index":0}`,
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"call_9","name":"f","input":{"b":2,"a":1}}}`,
				"content_block_stop", `{"type":"content_block_stop","index":0}`,
				"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"input_tokens":7,"output_tokens":9}}`,
				"message_stop", `{"type":"message_stop"}`,
			},
			want: []conv.Event{
				{Type: conv.EvStart},
				{Type: conv.EvBlockStart, Index: 0, Part: conv.Part{Kind: conv.PartReasoning}},
				{Type: conv.EvBlockStop, Index: 0, Part: conv.Part{Kind: conv.PartReasoning, Redacted: "EmwK"}},
				{Type: conv.EvBlockStart, Index: 1, Part: text},
				{Type: conv.EvDelta, Index: 1, Text: "Found"},
				{Type: conv.EvDelta, Index: 1, Text: " it."},
				{Type: conv.EvBlockStop, Index: 1, Part: text},
				{Type: conv.EvBlockStart, Index: 2, Part: conv.Part{Kind: conv.PartToolCall, CallID: "call_9", Name: "f"}},
				{Type: conv.EvDelta, Index: 2, Text: `{"a":1,"b":2}`},
				{Type: conv.EvBlockStop, Index: 2, Part: conv.Part{Kind: conv.PartToolCall, CallID: "call_9", Name: "f"}},
				{Type: conv.EvFinish, Stop: conv.StopToolUse, Usage: conv.Usage{Input: 7, Output: 9}},
			},
			complete: true,
		},
		{
			name: "blocks left open and deltas without a start",
			stream: []string{
				"message_start", `{"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":3}}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}`,
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"b"}}`,
				"message_delta", `{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"###"},"usage":{"output_tokens":4}}`,
				"message_stop", `{"type":"message_stop"}`,
			},
			want: []conv.Event{
				{Type: conv.EvStart, ID: "m", Model: "x", Usage: conv.Usage{Input: 3}},
				{Type: conv.EvBlockStart, Index: 0, Part: conv.Part{Kind: conv.PartReasoning}},
				{Type: conv.EvDelta, Index: 0, Text: "hm"},
				{Type: conv.EvBlockStop, Index: 0, Part: conv.Part{Kind: conv.PartReasoning}},
				{Type: conv.EvBlockStart, Index: 1, Part: text},
				{Type: conv.EvDelta, Index: 1, Text: "a"},
				{Type: conv.EvBlockStop, Index: 1, Part: text},
				{Type: conv.EvBlockStart, Index: 2, Part: text},
				{Type: conv.EvDelta, Index: 2, Text: "b"},
				{Type: conv.EvBlockStop, Index: 2, Part: text},
				{Type: conv.EvFinish, Stop: conv.StopSequence, StopSequence: "###", Usage: conv.Usage{Input: 3, Output: 4}},
			},
			complete: true,
		},
		{
			name: "error event mid-stream",
			stream: []string{
				"message_start", `{"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":3,"output_tokens":1}}}`,
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
				"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			},
			want: []conv.Event{
				{Type: conv.EvStart, ID: "m", Model: "x", Usage: conv.Usage{Input: 3, Output: 1}},
				{Type: conv.EvBlockStart, Index: 0, Part: text},
				{Type: conv.EvDelta, Index: 0, Text: "Hel"},
				{Type: conv.EvError, Err: &conv.StreamError{Type: "overloaded_error", Message: "Overloaded"}},
				{Type: conv.EvBlockStop, Index: 0, Part: text}, // from End
			},
		},
		{
			name: "error before anything: no start",
			stream: []string{
				"error", `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`,
			},
			want: []conv.Event{{Type: conv.EvError, Err: &conv.StreamError{Type: "rate_limit_error", Message: "slow down"}}},
		},
		{
			name: "cut inside a tool call's arguments",
			stream: []string{
				"message_start", `{"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":3}}}`,
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Write","input":{}}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"/a"}}`,
			},
			want: []conv.Event{
				{Type: conv.EvStart, ID: "m", Model: "x", Usage: conv.Usage{Input: 3}},
				{Type: conv.EvBlockStart, Index: 0, Part: conv.Part{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "Write"}},
				{Type: conv.EvDelta, Index: 0, Text: "{}"},
				{Type: conv.EvBlockStop, Index: 0, Part: conv.Part{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "Write"}},
			},
		},
		{
			// anthropic--anthropic-message-start-prepopulated-content of
			// the recorded corpus (proxy/testdata/realstreams).
			name: "blocks and the stop reason already inside message_start, then message_stop alone",
			stream: []string{
				"message_start", `{"type":"message_start","message":{"id":"m","model":"x","content":[` +
					`{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"code_execution_result","stdout":"ok\n","return_code":0}},` +
					`{"type":"text","text":"Done."},` +
					`{"type":"tool_use","id":"toolu_f","name":"lookup","input":{"id":"c_1"},"caller":{"type":"code_execution_20250825","tool_id":"srvtoolu_1"}}],` +
					`"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}`,
				"message_stop", `{"type":"message_stop"}`,
			},
			want: []conv.Event{
				{Type: conv.EvStart, ID: "m", Model: "x"},
				{Type: conv.EvBlockStart, Index: 0, Part: text},
				{Type: conv.EvDelta, Index: 0, Text: "Done."},
				{Type: conv.EvBlockStop, Index: 0, Part: text},
				{Type: conv.EvBlockStart, Index: 1, Part: conv.Part{Kind: conv.PartToolCall, CallID: "toolu_f", Name: "lookup"}},
				{Type: conv.EvDelta, Index: 1, Text: `{"id":"c_1"}`},
				{Type: conv.EvBlockStop, Index: 1, Part: conv.Part{Kind: conv.PartToolCall, CallID: "toolu_f", Name: "lookup"}},
				{Type: conv.EvFinish, Stop: conv.StopToolUse},
			},
			complete: true,
		},
		{
			name: "cut after message_delta, before message_stop",
			stream: []string{
				"message_start", `{"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":3}}}`,
				"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}`,
			},
			want: []conv.Event{{Type: conv.EvStart, ID: "m", Model: "x", Usage: conv.Usage{Input: 3}}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, complete := decodeStream(t, c.stream...)
			if complete != c.complete {
				t.Errorf("End = %v, want %v", complete, c.complete)
			}
			sameEvents(t, got, c.want)
		})
	}
}

func TestStreamDecodeBadData(t *testing.T) {
	d := Codec.StreamDecoder()
	err := d.Decode("content_block_delta", []byte(`{"type":"content_block_delta",`), func(conv.Event) { t.Error("emitted an event for bad data") })
	if err == nil || !strings.Contains(err.Error(), "content_block_delta") {
		t.Errorf("error = %v", err)
	}
}

// encode runs events through a fresh encoder for a client that asked for
// model, then calls fail with failMsg when it is not empty.
func encode(model string, evs []conv.Event, failMsg string) []byte {
	e := Codec.StreamEncoder(&conv.Request{From: Protocol, Model: model})
	var b []byte
	for _, ev := range evs {
		b = e.Encode(b, ev)
	}
	if failMsg != "" {
		b = e.Fail(b, failMsg)
	}
	return b
}

func TestStreamEncode(t *testing.T) {
	evs := append(claudeStreamEvents(),
		conv.Event{Type: conv.EvFinish, Stop: conv.StopEnd},               // a second finish: ignored
		conv.Event{Type: conv.EvDelta, Index: 3, Text: "late"},            // after the end: ignored
		conv.Event{Type: conv.EvError, Err: &conv.StreamError{Type: "x"}}, // after the end: ignored
	)
	got := encode("claude-opus-4-5", evs, "too late to fail")
	sameSSE(t, got, events(t,
		"message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-opus-4-5","content":[],"stop_reason":null,"stop_sequence":null,
		  "usage":{"input_tokens":12,"cache_creation_input_tokens":300,"cache_read_input_tokens":20000,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"look."}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkYI"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"I'll read "}}`,
		"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"both."}}`,
		"content_block_stop", `{"type":"content_block_stop","index":1}`,
		"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01","name":"Read","input":{}}}`,
		"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"file_path\":\"/a.go\"}"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":2}`,
		"content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_02","name":"Bash","input":{}}}`,
		"content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"go test ./...\",\"timeout\":120000}"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":3}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},
		  "usage":{"input_tokens":12,"cache_creation_input_tokens":300,"cache_read_input_tokens":20000,"output_tokens":162}}`,
		"message_stop", `{"type":"message_stop"}`,
	))
}

func TestStreamEncodeCases(t *testing.T) {
	text := conv.Part{Kind: conv.PartText}
	reasoning := conv.Part{Kind: conv.PartReasoning}
	start := `{"type":"message_start","message":{"id":"<generated>","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,
	  "usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}}`
	zeroUsage := `"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}`
	for _, c := range []struct {
		name string
		evs  []conv.Event
		fail string
		want []string
	}{
		{
			name: "no EvStart, blocks started while one is open, then Fail",
			evs: []conv.Event{
				{Type: conv.EvBlockStart, Index: 0, Part: text},
				{Type: conv.EvDelta, Index: 0, Text: "a"},
				{Type: conv.EvBlockStart, Index: 1, Part: reasoning},
				{Type: conv.EvDelta, Index: 1, Text: "hm"},
				{Type: conv.EvBlockStart, Index: 2, Part: text},
				{Type: conv.EvDelta, Index: 2, Text: "b"},
			},
			fail: "upstream connection lost",
			want: []string{
				"message_start", start,
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}`,
				"content_block_stop", `{"type":"content_block_stop","index":0}`,
				"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
				"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"hm"}}`,
				"content_block_stop", `{"type":"content_block_stop","index":1}`,
				"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
				"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"b"}}`,
				"content_block_stop", `{"type":"content_block_stop","index":2}`,
				"error", `{"type":"error","error":{"type":"overloaded_error","message":"upstream connection lost"}}`,
			},
		},
		{
			name: "empty unsigned reasoning is not written, redacted is, unsigned text has no signature, stop sequence",
			evs: []conv.Event{
				{Type: conv.EvStart, ID: "resp_1", Usage: conv.Usage{Input: 5}},
				{Type: conv.EvBlockStart, Index: 0, Part: reasoning},
				{Type: conv.EvBlockStop, Index: 0, Part: reasoning},
				{Type: conv.EvBlockStart, Index: 1, Part: reasoning},
				{Type: conv.EvBlockStop, Index: 1, Part: conv.Part{Kind: conv.PartReasoning, Redacted: "EmwK"}},
				{Type: conv.EvBlockStart, Index: 2, Part: reasoning},
				{Type: conv.EvDelta, Index: 2, Text: "summary"},
				{Type: conv.EvBlockStop, Index: 2, Part: conv.Part{Kind: conv.PartReasoning, Encrypted: "gAAA"}},
				{Type: conv.EvBlockStart, Index: 3, Part: text},
				{Type: conv.EvDelta, Index: 3, Text: ""},
				{Type: conv.EvDelta, Index: 3, Text: "x"},
				{Type: conv.EvBlockStop, Index: 3, Part: text},
				{Type: conv.EvFinish, Stop: conv.StopSequence, StopSequence: "###", Usage: conv.Usage{Input: 5, Output: 9}},
			},
			want: []string{
				"message_start", `{"type":"message_start","message":{"id":"resp_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,
				  "usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}}`,
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwK"}}`,
				"content_block_stop", `{"type":"content_block_stop","index":0}`,
				"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
				"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"summary"}}`,
				"content_block_stop", `{"type":"content_block_stop","index":1}`,
				"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
				"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"x"}}`,
				"content_block_stop", `{"type":"content_block_stop","index":2}`,
				"message_delta", `{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"###"},
				  "usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":9}}`,
				"message_stop", `{"type":"message_stop"}`,
			},
		},
		{
			name: "signed reasoning without text; finish closes the open block; end_turn after a call is tool_use",
			evs: []conv.Event{
				{Type: conv.EvStart, ID: "msg_1"},
				{Type: conv.EvBlockStart, Index: 0, Part: reasoning},
				{Type: conv.EvBlockStop, Index: 0, Part: conv.Part{Kind: conv.PartReasoning, Signature: "sig"}},
				{Type: conv.EvBlockStart, Index: 1, Part: conv.Part{Kind: conv.PartToolCall, Name: "f"}},
				{Type: conv.EvDelta, Index: 1, Text: "{}"},
				{Type: conv.EvFinish, Stop: conv.StopEnd},
			},
			want: []string{
				"message_start", strings.Replace(start, "<generated>", "msg_1", 1),
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
				"content_block_stop", `{"type":"content_block_stop","index":0}`,
				"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"<generated>","name":"f","input":{}}}`,
				"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}`,
				"content_block_stop", `{"type":"content_block_stop","index":1}`,
				"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},` + zeroUsage + `}`,
				"message_stop", `{"type":"message_stop"}`,
			},
		},
		{
			name: "upstream error mid-block, in Anthropic's words; Fail after it adds nothing",
			evs: []conv.Event{
				{Type: conv.EvStart, ID: "msg_1"},
				{Type: conv.EvBlockStart, Index: 0, Part: text},
				{Type: conv.EvDelta, Index: 0, Text: "Hel"},
				{Type: conv.EvError, Err: &conv.StreamError{Type: "rate_limit_exceeded", Message: "Rate limit reached"}},
				{Type: conv.EvDelta, Index: 0, Text: "lo"},
			},
			fail: "cut",
			want: []string{
				"message_start", strings.Replace(start, "<generated>", "msg_1", 1),
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
				"content_block_stop", `{"type":"content_block_stop","index":0}`,
				"error", `{"type":"error","error":{"type":"rate_limit_error","message":"Rate limit reached"}}`,
			},
		},
		{
			name: "error before anything",
			evs:  []conv.Event{{Type: conv.EvError, Err: &conv.StreamError{Type: "server_error", Message: "boom"}}},
			want: []string{"error", `{"type":"error","error":{"type":"api_error","message":"boom"}}`},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			sameSSE(t, encode("m", c.evs, c.fail), events(t, c.want...))
		})
	}
}

// An Anthropic stream decoded, encoded for a client and decoded again
// yields the same events: nothing is lost or renumbered on the way.
func TestStreamRoundTrip(t *testing.T) {
	first, _ := decodeStream(t, claudeStream...)
	out := encode("claude-sonnet-4-5", first, "")
	var pairs []string
	for _, ev := range parseSSE(t, out) {
		pairs = append(pairs, ev.name, string(conv.Marshal(ev.data)))
	}
	second, complete := decodeStream(t, pairs...)
	if !complete {
		t.Error("re-decoded stream not complete")
	}
	want := claudeStreamEvents()
	sameEvents(t, second, want)
}

// A response replayed as a stream, encoded, decoded and collected is the
// response (unsigned reasoning comes back with its text, as the client
// saw it).
func TestReplayEncodeCollect(t *testing.T) {
	resp := &conv.Response{
		ID: "msg_r", Model: "m",
		Parts: []conv.Part{
			{Kind: conv.PartReasoning, Text: "plan"},
			{Kind: conv.PartReasoning, Text: "deep", Signature: "sig"},
			{Kind: conv.PartReasoning, Redacted: "red"},
			{Kind: conv.PartText, Text: "hi"},
			{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "f", Args: `{"a":1}`},
		},
		Stop:  conv.StopToolUse,
		Usage: conv.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4},
	}
	e := Codec.StreamEncoder(&conv.Request{Model: "m"})
	var b []byte
	conv.Replay(resp, func(ev conv.Event) { b = e.Encode(b, ev) })
	d := Codec.StreamDecoder()
	c := conv.NewCollect()
	for _, ev := range parseSSE(t, b) {
		data, _ := json.Marshal(ev.data)
		if err := d.Decode(ev.name, data, c.Add); err != nil {
			t.Fatal(err)
		}
	}
	if !d.End(c.Add) {
		t.Error("not complete")
	}
	got, complete := c.Response()
	if !complete || !reflect.DeepEqual(got, resp) {
		t.Errorf("got  %+v\nwant %+v\nSSE: %s", got, resp, b)
	}
}

func BenchmarkStreamDecodeEncode(b *testing.B) {
	data := make([][]byte, len(claudeStream)/2)
	for i := range data {
		data[i] = []byte(claudeStream[2*i+1])
	}
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		d := Codec.StreamDecoder()
		e := Codec.StreamEncoder(&conv.Request{Model: "m"})
		out = out[:0]
		emit := func(ev conv.Event) { out = e.Encode(out, ev) }
		for i := range data {
			if err := d.Decode(claudeStream[2*i], data[i], emit); err != nil {
				b.Fatal(err)
			}
		}
		d.End(emit)
	}
}
