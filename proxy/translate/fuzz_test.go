package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// The fuzz targets below hold each codec to what the proxy relies on when
// a client or an upstream sends anything at all: nothing panics; a request
// a codec reads can be written by every codec (or is refused as
// Unsupported), as JSON that codec reads back; a stream decoder's events
// keep the block discipline the encoders rely on (conv.Event), and every
// client encoder turns them into SSE whose data is JSON.

func fuzzRequest(f *testing.F, p conv.Protocol, seeds []string, captured ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	for _, name := range captured {
		b, err := os.ReadFile(filepath.Join("testdata", "captured", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Codec(p).DecodeRequest(body)
		if err != nil {
			return
		}
		n := CountTokens(r)
		if bound, ok := TokensAtMost(body); ok && n > bound {
			t.Fatalf("%s: the estimate %d is over TokensAtMost's bound %d\n%q", p, n, bound, body)
		}
		for _, to := range protocols {
			out := *r
			out.Model, out.Stream = "m", true
			b, err := Codec(to).EncodeRequest(&out)
			if conv.IsUnsupported(err) {
				continue
			}
			if err != nil {
				t.Fatalf("%s → %s: encode: %v\n%q", p, to, err, body)
			}
			if !json.Valid(b) {
				t.Fatalf("%s → %s: not JSON: %q\nfrom %q", p, to, b, body)
			}
			if _, err := Codec(to).DecodeRequest(b); err != nil && !emptyConversation(b) {
				t.Fatalf("%s → %s: its own codec refuses what it wrote: %v\n%s\nfrom %q", p, to, err, b, body)
			}
		}
	})
}

// emptyConversation reports a body without messages or input: what is
// left of a conversation of nothing an encoder can carry (an empty
// reasoning item, a message without text). The decoders refuse it from a
// client, as the upstream will; the encoders write it as it came.
func emptyConversation(b []byte) bool {
	var doc struct{ Messages, Input json.RawMessage }
	_ = json.Unmarshal(b, &doc) // b is valid JSON, checked before
	for _, raw := range []json.RawMessage{doc.Messages, doc.Input} {
		if s := string(bytes.TrimSpace(raw)); s != "" && s != "[]" && s != "null" {
			return false
		}
	}
	return true
}

func FuzzAnthropicRequest(f *testing.F) {
	fuzzRequest(f, anthropic.Protocol, []string{
		`{"model":"c","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"c","system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]},` +
			`{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"t1","name":"Read","input":{"p":1}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"r"}],"is_error":true}]}],` +
			`"tools":[{"name":"Read","input_schema":null}],"tool_choice":{"type":"tool","name":"Read","disable_parallel_tool_use":true},"thinking":{"type":"enabled","budget_tokens":5000}}`,
		`{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","data":"d"}}]}],"stop_sequences":["x"],"temperature":0}`,
		`{"messages":[]}`, `null`, `{"messages":[{"role":"tool","content":5}]}`,
	}, "claude-code-turn1.json", "claude-code-count-tokens.json")
}

func FuzzChatRequest(f *testing.F) {
	fuzzRequest(f, chat.Protocol, []string{
		`{"model":"g","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"g","messages":[{"role":"system","content":"s"},{"role":"developer","content":[{"type":"text","text":"d"}]},` +
			`{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}}]},` +
			`{"role":"assistant","content":null,"reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":"out"}],"tools":[{"type":"function","function":{"name":"f","parameters":null}}],` +
			`"tool_choice":"required","parallel_tool_calls":false,"reasoning_effort":"high","max_completion_tokens":5,"stop":"x","stream_options":{"include_usage":true}}`,
		`{"messages":[{"role":"assistant","tool_calls":[{"function":{}}]}]}`, `{"messages":null}`, `[]`,
	})
}

func FuzzResponsesRequest(f *testing.F) {
	fuzzRequest(f, responses.Protocol, []string{
		`{"model":"g","input":"hi"}`,
		`{"model":"g","instructions":"be brief","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"d"}]},` +
			`{"type":"reasoning","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"gAAA"},` +
			`{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"o"},` +
			`{"type":"custom_tool_call","call_id":"c2","name":"apply_patch","input":"*** Begin Patch"},{"type":"custom_tool_call_output","call_id":"c2","output":"ok"}],` +
			`"tools":[{"type":"function","name":"f","parameters":{}},{"type":"custom","name":"apply_patch","format":{"type":"grammar"}},` +
			`{"type":"namespace","name":"mcp__x","tools":[{"type":"function","name":"read"}]},{"type":"web_search"}],"reasoning":{"effort":"low"},"max_output_tokens":9}`,
		`{"input":[{"role":"user","content":[{"type":"input_image","image_url":"https://x/y.png"}]}],"previous_response_id":"resp_1"}`,
		`{"input":[]}`, `{"input":5}`,
	}, "codex-turn1.json", "codex-turn2.json")
}

// sseSplit cuts fuzz input into SSE events as the proxy's reader does
// (blank-line separated, "event:" and "data:" lines), simply.
func sseSplit(in []byte) (names []string, datas [][]byte) {
	for _, block := range bytes.Split(in, []byte("\n\n")) {
		var name string
		var data []byte
		for _, line := range bytes.Split(block, []byte("\n")) {
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "event":
				name = string(value)
			case "data":
				if data != nil {
					data = append(append(data, '\n'), value...)
				} else {
					data = append([]byte{}, value...)
				}
			}
		}
		names, datas = append(names, name), append(datas, data)
	}
	return names, datas
}

// discipline checks one neutral event against the block rules of
// conv.Event; it is fed every event of one stream in order.
type discipline struct {
	started, finished bool
	next, open        int // the next block's index; the open block, -1 when none
	toolDeltas        int
	openKind          conv.PartKind
}

func (d *discipline) check(ev conv.Event) error {
	if d.finished && ev.Type != conv.EvError {
		return fmt.Errorf("event %d after EvFinish", ev.Type)
	}
	if !d.started && ev.Type != conv.EvStart && ev.Type != conv.EvError {
		return fmt.Errorf("event %d before EvStart", ev.Type)
	}
	switch ev.Type {
	case conv.EvStart:
		if d.started {
			return fmt.Errorf("a second EvStart")
		}
		d.started = true
	case conv.EvBlockStart:
		if d.open >= 0 {
			return fmt.Errorf("block %d starts while %d is open", ev.Index, d.open)
		}
		if ev.Index != d.next {
			return fmt.Errorf("block %d starts, want %d", ev.Index, d.next)
		}
		d.open, d.next, d.openKind, d.toolDeltas = ev.Index, d.next+1, ev.Part.Kind, 0
	case conv.EvDelta:
		if ev.Index != d.open || d.open < 0 {
			return fmt.Errorf("delta for block %d, open %d", ev.Index, d.open)
		}
		if d.openKind == conv.PartToolCall {
			if d.toolDeltas++; d.toolDeltas > 1 || !json.Valid([]byte(ev.Text)) {
				return fmt.Errorf("tool call delta %d %q: want one, whole JSON", d.toolDeltas, ev.Text)
			}
		}
	case conv.EvBlockStop:
		if ev.Index != d.open || d.open < 0 {
			return fmt.Errorf("stop of block %d, open %d", ev.Index, d.open)
		}
		if d.openKind == conv.PartToolCall && d.toolDeltas != 1 {
			return fmt.Errorf("tool call block %d stopped after %d deltas, want one", ev.Index, d.toolDeltas)
		}
		d.open = -1
	case conv.EvFinish:
		if d.open >= 0 {
			return fmt.Errorf("EvFinish while block %d is open", d.open)
		}
		d.finished = true
	}
	return nil
}

// checkSSE: every event a client encoder wrote has JSON data (or Chat's
// [DONE]).
func checkSSE(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if !bytes.HasSuffix(b, []byte("\n\n")) {
		return fmt.Errorf("SSE does not end with a blank line: %q", b)
	}
	_, datas := sseSplit(bytes.TrimSuffix(b, []byte("\n\n")))
	for _, d := range datas {
		if string(d) != "[DONE]" && !json.Valid(d) {
			return fmt.Errorf("data is not JSON: %q", d)
		}
	}
	return nil
}

func fuzzStream(f *testing.F, p conv.Protocol, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	req := &conv.Request{Model: "m", Tools: []conv.Tool{{Kind: conv.ToolFunction, Name: "f", Schema: conv.EmptySchema}}}
	f.Fuzz(func(t *testing.T, in []byte) {
		names, datas := sseSplit(in)
		dec := Codec(p).StreamDecoder()
		d := &discipline{open: -1}
		var encs []conv.StreamEncoder
		outs := make([][]byte, len(protocols))
		for _, to := range protocols {
			encs = append(encs, Codec(to).StreamEncoder(req))
		}
		var bad error
		emit := func(ev conv.Event) {
			if err := d.check(ev); err != nil && bad == nil {
				bad = err
			}
			for i, enc := range encs {
				outs[i] = enc.Encode(outs[i], ev)
			}
		}
		broken := false
		for i := range names {
			if err := dec.Decode(names[i], datas[i], emit); err != nil {
				broken = true
				break
			}
		}
		if !broken {
			dec.End(emit)
		}
		if bad != nil {
			t.Fatalf("%s stream decoder: %v\n%q", p, bad, in)
		}
		for i, enc := range encs {
			if broken || !d.finished {
				outs[i] = enc.Fail(outs[i], "ccmesh: broken; retry the request")
			}
			if err := checkSSE(outs[i]); err != nil {
				t.Fatalf("%s → %s encoder: %v\nfrom %q", p, protocols[i], err, in)
			}
		}
	})
}

func sse(events ...string) string { return strings.Join(events, "\n\n") + "\n\n" }

func FuzzAnthropicStream(f *testing.F) {
	fuzzStream(f, anthropic.Protocol,
		sse(`event: message_start`+"\n"+`data: {"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":3}}}`,
			`event: ping`+"\n"+`data: {"type":"ping"}`,
			`event: content_block_start`+"\n"+`data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
			`event: content_block_delta`+"\n"+`data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}`,
			`event: content_block_delta`+"\n"+`data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
			`event: content_block_stop`+"\n"+`data: {"type":"content_block_stop","index":0}`,
			`event: content_block_start`+"\n"+`data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}`,
			`event: content_block_delta`+"\n"+`data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`,
			`event: content_block_delta`+"\n"+`data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"1}"}}`,
			`event: content_block_stop`+"\n"+`data: {"type":"content_block_stop","index":1}`,
			`event: message_delta`+"\n"+`data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`,
			`event: message_stop`+"\n"+`data: {"type":"message_stop"}`),
		sse(`event: content_block_delta`+"\n"+`data: {"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`),
		sse(`event: error`+"\n"+`data: {"type":"error","error":{"type":"overloaded_error","message":"busy"}}`),
		sse(`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":"a"}}`, `data: {"type":"message_stop"}`),
	)
}

func FuzzChatStream(f *testing.F) {
	chunk := func(delta, finish string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","model":"g","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
	}
	fuzzStream(f, chat.Protocol,
		sse(chunk(`{"role":"assistant","content":""}`, "null"), chunk(`{"reasoning_content":"r"}`, "null"), chunk(`{"content":"<think>a</think>b"}`, "null"),
			chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\""}}]}`, "null"),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":":1}"}},{"index":1,"id":"c2","function":{"name":"f","arguments":"{}"}}]}`, "null"),
			chunk(`{}`, `"tool_calls"`),
			`data: {"id":"c","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":1}}}`,
			`data: [DONE]`),
		sse(chunk(`{"tool_calls":[{"index":5,"function":{"arguments":"{"}}]}`, `"length"`)),
		sse(`data: {"error":{"message":"boom","type":"server_error"}}`),
		sse(chunk(`{"content":"a"}`, "null"), `: keep-alive`, `data: `),
	)
}

func FuzzResponsesStream(f *testing.F) {
	fuzzStream(f, responses.Protocol,
		sse(`event: response.created`+"\n"+`data: {"type":"response.created","response":{"id":"r","model":"g","status":"in_progress"}}`,
			`event: response.output_item.added`+"\n"+`data: {"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs1"}}`,
			`event: response.reasoning_summary_text.delta`+"\n"+`data: {"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"hm"}`,
			`event: response.output_item.done`+"\n"+`data: {"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs1","encrypted_content":"gAAA"}}`,
			`event: response.output_item.added`+"\n"+`data: {"type":"response.output_item.added","output_index":1,"item":{"type":"message","role":"assistant"}}`,
			`event: response.output_text.delta`+"\n"+`data: {"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"hi"}`,
			`event: response.output_item.added`+"\n"+`data: {"type":"response.output_item.added","output_index":2,"item":{"type":"function_call","call_id":"c1","name":"f","arguments":""}}`,
			`event: response.function_call_arguments.delta`+"\n"+`data: {"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\"a\":1"}`,
			`event: response.output_item.done`+"\n"+`data: {"type":"response.output_item.done","output_index":2,"item":{"type":"function_call","call_id":"c1","name":"f","arguments":"{\"a\":1}"}}`,
			`event: response.completed`+"\n"+`data: {"type":"response.completed","response":{"id":"r","status":"completed","usage":{"input_tokens":5,"output_tokens":6}}}`),
		sse(`event: response.failed`+"\n"+`data: {"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}`),
		sse(`data: {"type":"response.output_text.delta","output_index":7,"delta":"x"}`, `data: {"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}`),
		sse(`event: error`+"\n"+`data: {"type":"error","code":"rate_limit_exceeded","message":"slow down"}`),
	)
}
