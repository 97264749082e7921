package chat

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Neutral events, spelled short.
func evStart(id, model string) conv.Event {
	return conv.Event{Type: conv.EvStart, ID: id, Model: model}
}
func evBegin(i int, k conv.PartKind) conv.Event {
	return conv.Event{Type: conv.EvBlockStart, Index: i, Part: conv.Part{Kind: k}}
}
func evDelta(i int, s string) conv.Event { return conv.Event{Type: conv.EvDelta, Index: i, Text: s} }
func evStop(i int, k conv.PartKind) conv.Event {
	return conv.Event{Type: conv.EvBlockStop, Index: i, Part: conv.Part{Kind: k}}
}

// evCall is the three events of a whole tool call.
func evCall(i int, id, name, args string) []conv.Event {
	p := conv.Part{Kind: conv.PartToolCall, CallID: id, Name: name}
	return []conv.Event{
		{Type: conv.EvBlockStart, Index: i, Part: p},
		{Type: conv.EvDelta, Index: i, Text: args},
		{Type: conv.EvBlockStop, Index: i, Part: p},
	}
}
func evFinish(s conv.StopReason, u conv.Usage) conv.Event {
	return conv.Event{Type: conv.EvFinish, Stop: s, Usage: u}
}

func events(groups ...any) []conv.Event {
	var out []conv.Event
	for _, g := range groups {
		switch g := g.(type) {
		case conv.Event:
			out = append(out, g)
		case []conv.Event:
			out = append(out, g...)
		}
	}
	return out
}

const (
	txt = conv.PartText
	rsn = conv.PartReasoning
)

// chunk is a chat.completion.chunk data line with the given choice JSON
// (a delta and maybe a finish_reason) and extra top-level members.
func chunk(choice string, more ...string) string {
	s := `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,` + choice + `}]`
	for _, m := range more {
		s += "," + m
	}
	return s + "}"
}

func content(s string) string {
	return chunk(`"delta":{"content":` + quote(s) + `},"finish_reason":null`)
}
func reasonDelta(s string) string {
	return chunk(`"delta":{"content":null,"reasoning_content":` + quote(s) + `}`)
}
func finish(reason string, more ...string) string {
	return chunk(`"delta":{},"finish_reason":"`+reason+`"`, more...)
}
func quote(s string) string { return string(conv.Marshal(s)) }

const roleChunk = `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`

func TestStreamDecoder(t *testing.T) {
	pin(t)
	start := evStart("chatcmpl-7", "up-model")
	usage := `"usage":{"prompt_tokens":100,"completion_tokens":20,"prompt_cache_hit_tokens":60,"completion_tokens_details":{"reasoning_tokens":12}}`
	wantUsage := conv.Usage{Input: 40, CacheRead: 60, Output: 20, Reasoning: 12}
	for _, c := range []struct {
		name     string
		lines    []string
		want     []conv.Event
		complete bool
	}{
		{"DeepSeek: reasoning_content then content, usage in the finish chunk",
			[]string{roleChunk, reasonDelta("Let me"), reasonDelta(" think"), content("Hi"), content(" there"), finish("stop", usage), "[DONE]"},
			events(start, evBegin(0, rsn), evDelta(0, "Let me"), evDelta(0, " think"), evStop(0, rsn),
				evBegin(1, txt), evDelta(1, "Hi"), evDelta(1, " there"), evStop(1, txt), evFinish(conv.StopEnd, wantUsage)),
			true},
		{"OpenRouter reasoning deltas; reasoning and text alternate into new blocks",
			[]string{chunk(`"delta":{"reasoning":"a"}`), content("b"), chunk(`"delta":{"reasoning":"c","content":"d"}`), finish("stop"), "[DONE]"},
			events(start, evBegin(0, rsn), evDelta(0, "a"), evStop(0, rsn), evBegin(1, txt), evDelta(1, "b"), evStop(1, txt),
				evBegin(2, rsn), evDelta(2, "c"), evStop(2, rsn), evBegin(3, txt), evDelta(3, "d"), evStop(3, txt), evFinish(conv.StopEnd, conv.Usage{})),
			true},
		{"several tool calls in one chunk, usage chunk after the finish",
			[]string{roleChunk, content("Checking."),
				chunk(`"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"weather","arguments":""}},{"index":1,"id":"call_b","type":"function","function":{"name":"weather","arguments":""}}]}`),
				chunk(`"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}},{"index":1,"function":{"arguments":"{\"city\":\"Oslo\"}"}}]}`),
				chunk(`"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \"Paris\"}"}}]}`),
				finish("tool_calls"),
				`{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[],` + usage + `}`,
				"[DONE]"},
			events(start, evBegin(0, txt), evDelta(0, "Checking."), evStop(0, txt),
				evCall(1, "call_a", "weather", `{"city":"Paris"}`), evCall(2, "call_b", "weather", `{"city":"Oslo"}`),
				evFinish(conv.StopToolUse, wantUsage)),
			true},
		{"argument fragments before the id and name, calls out of order, finish stop with calls",
			[]string{
				chunk(`"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"b\":"}}]}`),
				chunk(`"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"second"}}]}`),
				chunk(`"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"first","arguments":"{}"}}]}`),
				chunk(`"delta":{"tool_calls":[{"index":1,"function":{"arguments":"2}"}}]}`),
				finish("stop"), "[DONE]"},
			events(start, evCall(0, "call_1", "first", "{}"), evCall(1, "call_2", "second", `{"b":2}`), evFinish(conv.StopToolUse, conv.Usage{})),
			true},
		{"every call numbered 0, told apart by id; a call without id gets one",
			[]string{
				chunk(`"delta":{"tool_calls":[{"index":0,"id":"x1","function":{"name":"f","arguments":"{\"n\":1}"}}]}`),
				chunk(`"delta":{"tool_calls":[{"index":0,"id":"x2","function":{"name":"f","arguments":"{\"n\":2}"}}]}`),
				chunk(`"delta":{"tool_calls":[{"function":{"name":"g","arguments":"{}"}}]}`),
				finish("tool_calls"), "[DONE]"},
			events(start, evCall(0, "x1", "f", `{"n":1}`), evCall(1, "x2", "f", `{"n":2}`), evCall(2, "call_GEN", "g", "{}"), evFinish(conv.StopToolUse, conv.Usage{})),
			true},
		{"finish_reason repeated: only the first counts, calls emitted once, later usage kept",
			[]string{
				chunk(`"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{\"q\":1}"}}]}`),
				finish("length"),
				finish("stop", usage),
				"[DONE]"},
			events(start, evCall(0, "c", "f", `{"q":1}`), evFinish(conv.StopMaxTokens, wantUsage)),
			true},
		{"cut in the arguments at length: {} and max_tokens",
			[]string{chunk(`"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"write","arguments":"{\"text\":\"very lo"}}]}`), finish("length"), "[DONE]"},
			events(start, evCall(0, "c", "write", "{}"), evFinish(conv.StopMaxTokens, conv.Usage{})),
			true},
		{"no usage at all",
			[]string{content("ok"), finish("stop"), "[DONE]"},
			events(start, evBegin(0, txt), evDelta(0, "ok"), evStop(0, txt), evFinish(conv.StopEnd, conv.Usage{})),
			true},
		{"Moonshot usage inside the choice; content_filter",
			[]string{content("x"), chunk(`"delta":{},"finish_reason":"content_filter","usage":{"prompt_tokens":9,"completion_tokens":1,"cached_tokens":8}`), "[DONE]"},
			events(start, evBegin(0, txt), evDelta(0, "x"), evStop(0, txt), evFinish(conv.StopRefusal, conv.Usage{Input: 1, CacheRead: 8, Output: 1})),
			true},
		{"finish without [DONE]: End finishes it",
			[]string{content("ok"), finish("stop", usage)},
			events(start, evBegin(0, txt), evDelta(0, "ok"), evStop(0, txt), evFinish(conv.StopEnd, wantUsage)),
			true},
		{"[DONE] without a finish_reason still ends the message",
			[]string{content("ok"), "[DONE]"},
			events(start, evBegin(0, txt), evDelta(0, "ok"), evStop(0, txt), evFinish(conv.StopEnd, conv.Usage{})),
			true},
		{"cut stream: no finish, End emits nothing, not even the buffered call",
			[]string{roleChunk, content("partial"), chunk(`"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]}`)},
			events(start, evBegin(0, txt), evDelta(0, "partial")),
			false},
		{"error chunk mid-stream; nothing after it counts",
			[]string{content("partial"), `{"error":{"message":"Rate limit reached","type":"rate_limit_exceeded","code":"rate_limit_exceeded"}}`, content("late"), "[DONE]"},
			events(start, evBegin(0, txt), evDelta(0, "partial"),
				conv.Event{Type: conv.EvError, Err: &conv.StreamError{Type: "rate_limit_exceeded", Message: "Rate limit reached"}}),
			false},
		{"error chunk first, typed by its numeric code",
			[]string{`{"error":{"message":"Service busy","code":503}}`},
			events(conv.Event{Type: conv.EvError, Err: &conv.StreamError{Type: "503", Message: "Service busy"}}),
			false},
		{"<think> and </think> split across chunks, multi-byte text around them",
			[]string{roleChunk, content("<thi"), content("nk>\nStep 1: "), content("héllo wörld — 思考</th"), content("ink>\n\n"), content("Answer: 日本"), content("語 ✓"), finish("stop"), "[DONE]"},
			events(start, evBegin(0, rsn), evDelta(0, "Step 1: "), evDelta(0, "héllo wörld — 思考"), evStop(0, rsn),
				evBegin(1, txt), evDelta(1, "Answer: 日本"), evDelta(1, "語 ✓"), evStop(1, txt), evFinish(conv.StopEnd, conv.Usage{})),
			true},
		{"a tag prefix that is no tag: only its bytes were held",
			[]string{content("<think>a </"), content("div> b <"), content("/t"), content("able>"), content("</think>Done"), finish("stop"), "[DONE]"},
			events(start, evBegin(0, rsn), evDelta(0, "a "), evDelta(0, "</div> b "), evDelta(0, "</table>"), evStop(0, rsn),
				evBegin(1, txt), evDelta(1, "Done"), evStop(1, txt), evFinish(conv.StopEnd, conv.Usage{})),
			true},
		{"content starting with < that is not <think>",
			[]string{content("<"), content("b>bold</b> <think> stays"), finish("stop"), "[DONE]"},
			events(start, evBegin(0, txt), evDelta(0, "<b>bold</b> <think> stays"), evStop(0, txt), evFinish(conv.StopEnd, conv.Usage{})),
			true},
		{"held tag prefix at the finish is text",
			[]string{content("<thi"), finish("stop"), "[DONE]"},
			events(start, evBegin(0, txt), evDelta(0, "<thi"), evStop(0, txt), evFinish(conv.StopEnd, conv.Usage{})),
			true},
		{"unclosed <think> at the finish: the held bytes stay reasoning",
			[]string{content("<think>deep</"), finish("length"), "[DONE]"},
			events(start, evBegin(0, rsn), evDelta(0, "deep"), evDelta(0, "</"), evStop(0, rsn), evFinish(conv.StopMaxTokens, conv.Usage{})),
			true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []conv.Event
			emit := func(ev conv.Event) { got = append(got, ev) }
			d := Codec.StreamDecoder()
			for _, l := range c.lines {
				if err := d.Decode("", []byte(l), emit); err != nil {
					t.Fatalf("Decode(%s): %v", l, err)
				}
			}
			complete := d.End(emit)
			if complete != c.complete {
				t.Errorf("complete = %v, want %v", complete, c.complete)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("events\n%s\nwant\n%s", dump(got), dump(c.want))
			}
			checkDiscipline(t, got)
		})
	}
}

func dump(evs []conv.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "  %d idx=%d kind=%v id=%q name=%q text=%q stop=%q usage=%+v err=%+v\n",
			ev.Type, ev.Index, ev.Part.Kind, ev.Part.CallID+ev.ID, ev.Part.Name+ev.Model, ev.Text, ev.Stop, ev.Usage, ev.Err)
	}
	return b.String()
}

// checkDiscipline asserts the block rules of conv.Event: indexes 0, 1, …
// in order, one block open at a time, one delta per tool call, EvFinish
// last and once.
func checkDiscipline(t *testing.T, evs []conv.Event) {
	t.Helper()
	next, open, deltas, finished := 0, -1, 0, false
	for i, ev := range evs {
		if finished {
			t.Errorf("event %d after EvFinish", i)
		}
		switch ev.Type {
		case conv.EvBlockStart:
			if open >= 0 || ev.Index != next {
				t.Errorf("event %d: block %d starts (open %d, next %d)", i, ev.Index, open, next)
			}
			open, next, deltas = ev.Index, next+1, 0
		case conv.EvDelta:
			deltas++
			if ev.Index != open {
				t.Errorf("event %d: delta for %d while %d is open", i, ev.Index, open)
			}
		case conv.EvBlockStop:
			if ev.Index != open {
				t.Errorf("event %d: stop of %d while %d is open", i, ev.Index, open)
			}
			if ev.Part.Kind == conv.PartToolCall && deltas != 1 {
				t.Errorf("event %d: tool call with %d deltas", i, deltas)
			}
			open = -1
		case conv.EvFinish:
			finished = true
			if open >= 0 {
				t.Errorf("EvFinish with block %d open", open)
			}
		}
	}
}

func TestStreamDecoderBadChunk(t *testing.T) {
	d := Codec.StreamDecoder()
	if err := d.Decode("", []byte(`{"choices":[`), func(conv.Event) {}); err == nil {
		t.Error("a chunk that is not JSON must be an error")
	}
}

// sse joins data lines as a Chat stream writes them.
func sse(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("data: " + l + "\n\n")
	}
	return b.String()
}

func TestStreamEncoder(t *testing.T) {
	pin(t)
	const meta = `{"id":"msg_1","object":"chat.completion.chunk","created":1700000000,"model":"my-alias","choices":`
	line := func(delta, finish string) string {
		return meta + `[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
	}
	first := line(`{"role":"assistant","content":""}`, "null")
	u := conv.Usage{Input: 10, CacheRead: 90, Output: 7, Reasoning: 3}
	usageLine := meta + `[],"usage":{"prompt_tokens":100,"completion_tokens":7,"total_tokens":107,"prompt_tokens_details":{"cached_tokens":90},"completion_tokens_details":{"reasoning_tokens":3}}}`
	toolPart := func(id, name string) conv.Part { return conv.Part{Kind: conv.PartToolCall, CallID: id, Name: name} }
	for _, c := range []struct {
		name  string
		usage bool
		evs   []conv.Event
		fail  string // Fail(msg) after the events when set
		want  string
	}{
		{"reasoning, text, two tool calls, usage chunk", true,
			events(conv.Event{Type: conv.EvStart, ID: "msg_1", Model: "claude-x"},
				evBegin(0, rsn), evDelta(0, "Hmm <ok>"), evStop(0, rsn),
				evBegin(1, txt), evDelta(1, "Héllo"), evDelta(1, ""), evDelta(1, " wörld"), evStop(1, txt),
				evCall(2, "toolu_1", "Read", `{"path":"a.go"}`),
				evCall(3, "toolu_2", "Bash", `{"cmd":"ls"}`),
				evFinish(conv.StopToolUse, u)),
			"",
			sse(first,
				line(`{"reasoning_content":"Hmm <ok>"}`, "null"),
				line(`{"content":"Héllo"}`, "null"),
				line(`{"content":" wörld"}`, "null"),
				line(`{"tool_calls":[{"index":0,"id":"toolu_1","type":"function","function":{"name":"Read","arguments":"{\"path\":\"a.go\"}"}}]}`, "null"),
				line(`{"tool_calls":[{"index":1,"id":"toolu_2","type":"function","function":{"name":"Bash","arguments":"{\"cmd\":\"ls\"}"}}]}`, "null"),
				line(`{}`, `"tool_calls"`),
				usageLine,
				"[DONE]")},
		{"no include_usage: finish then [DONE]; text blocks after reasoning are set apart", false,
			events(conv.Event{Type: conv.EvStart, ID: "msg_1"},
				evBegin(0, txt), evDelta(0, "One."), evStop(0, txt),
				evBegin(1, rsn), evDelta(1, "r"), evStop(1, rsn),
				evBegin(2, txt), evDelta(2, "Two."), evStop(2, txt),
				evFinish(conv.StopMaxTokens, u)),
			"",
			sse(first,
				line(`{"content":"One."}`, "null"),
				line(`{"reasoning_content":"r"}`, "null"),
				line(`{"content":"\n\nTwo."}`, "null"),
				line(`{}`, `"length"`),
				"[DONE]")},
		{"error mid-stream: an error chunk, no [DONE], nothing after", true,
			events(conv.Event{Type: conv.EvStart, ID: "msg_1"}, evBegin(0, txt), evDelta(0, "par"),
				conv.Event{Type: conv.EvError, Err: &conv.StreamError{Type: "overloaded_error", Message: "Overloaded"}},
				evDelta(0, "tial"), evFinish(conv.StopEnd, u)),
			"late failure",
			sse(first,
				line(`{"content":"par"}`, "null"),
				`{"error":{"message":"Overloaded","type":"server_error","code":"upstream_error"}}`)},
		{"Fail after content", true,
			events(conv.Event{Type: conv.EvStart, ID: "msg_1"}, evBegin(0, txt), evDelta(0, "cut")),
			"upstream stream ended early",
			sse(first,
				line(`{"content":"cut"}`, "null"),
				`{"error":{"message":"upstream stream ended early","type":"server_error","code":"upstream_error"}}`)},
		{"tool call without a delta gets {}; refusal is content_filter", false,
			events(conv.Event{Type: conv.EvStart, ID: "msg_1"},
				conv.Event{Type: conv.EvBlockStart, Index: 0, Part: toolPart("c1", "f")},
				conv.Event{Type: conv.EvBlockStop, Index: 0, Part: toolPart("c1", "f")},
				evFinish(conv.StopRefusal, conv.Usage{})),
			"",
			sse(first,
				line(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`, "null"),
				line(`{}`, `"content_filter"`),
				"[DONE]")},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := Codec.StreamEncoder(&conv.Request{From: Protocol, Model: "my-alias", IncludeUsage: c.usage})
			var out []byte
			for _, ev := range c.evs {
				out = e.Encode(out, ev)
			}
			if c.fail != "" {
				out = e.Fail(out, c.fail)
			}
			if string(out) != c.want {
				t.Errorf("stream\n%s\nwant\n%s", out, c.want)
			}
		})
	}
}

func TestStreamEncoderGeneratedID(t *testing.T) {
	pin(t)
	e := Codec.StreamEncoder(&conv.Request{Model: "m"})
	out := e.Encode(nil, conv.Event{Type: conv.EvStart})
	out = e.Encode(out, evFinish(conv.StopEnd, conv.Usage{}))
	want := sse(`{"id":"chatcmpl-GEN","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		`{"id":"chatcmpl-GEN","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		"[DONE]")
	if string(out) != want {
		t.Errorf("stream\n%s\nwant\n%s", out, want)
	}
}

// A Chat upstream's stream decoded and encoded for a Chat client carries
// the same text, reasoning, calls and usage.
func TestStreamThrough(t *testing.T) {
	pin(t)
	lines := []string{roleChunk, reasonDelta("why"), content("Hi"),
		chunk(`"delta":{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\": 1}"}}]}`),
		finish("tool_calls"), `{"id":"chatcmpl-7","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":2}}}`, "[DONE]"}
	d := Codec.StreamDecoder()
	e := Codec.StreamEncoder(&conv.Request{Model: "alias", IncludeUsage: true})
	var out []byte
	emit := func(ev conv.Event) { out = e.Encode(out, ev) }
	for _, l := range lines {
		if err := d.Decode("", []byte(l), emit); err != nil {
			t.Fatal(err)
		}
	}
	if !d.End(emit) {
		t.Fatal("incomplete")
	}
	const meta = `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1700000000,"model":"alias","choices":`
	want := sse(meta+`[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		meta+`[{"index":0,"delta":{"reasoning_content":"why"},"finish_reason":null}]}`,
		meta+`[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`,
		meta+`[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":null}]}`,
		meta+`[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		meta+`[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":0}}}`,
		"[DONE]")
	if string(out) != want {
		t.Errorf("stream\n%s\nwant\n%s", out, want)
	}
}
