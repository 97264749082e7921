package proxytest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// AnthropicMessage is a non-streamed Messages API answer.
func AnthropicMessage(text string, in, out int) Response {
	return Response{Body: js(map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake",
		"content":     []any{map[string]any{"type": "text", "text": text}},
		"stop_reason": "end_turn",
		"usage":       map[string]any{"input_tokens": in, "output_tokens": out},
	})}
}

// AnthropicError is an Anthropic error answer.
func AnthropicError(status int, typ, msg string) Response {
	return Response{Status: status, Body: js(map[string]any{
		"type": "error", "error": map[string]any{"type": typ, "message": msg},
	})}
}

// OpenAIError is an OpenAI error answer.
func OpenAIError(status int, typ, code, msg string) Response {
	return Response{Status: status, Body: js(map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "code": code, "param": nil},
	})}
}

// WithHeader returns r with header k set to v.
func (r Response) WithHeader(k, v string) Response {
	h := r.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set(k, v)
	r.Header = h
	return r
}

// AnthropicPrelude is the opening of a Messages stream: message_start
// (with input usage) and a ping.
func AnthropicPrelude(in int) []Event {
	return []Event{
		{"message_start", js(map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_fake", "type": "message", "role": "assistant", "content": []any{}, "model": "claude-fake",
			"usage": map[string]any{"input_tokens": in, "output_tokens": 1},
		}})},
		{"ping", `{"type": "ping"}`},
	}
}

// AnthropicStream is a complete Messages stream writing chunks as text.
func AnthropicStream(in, out int, chunks ...string) []Event {
	evs := AnthropicPrelude(in)
	evs = append(evs, Event{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`})
	for _, c := range chunks {
		evs = append(evs, Event{"content_block_delta", js(map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": c}})})
	}
	return append(evs,
		Event{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		Event{"message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, out)},
		Event{"message_stop", `{"type":"message_stop"}`},
	)
}

// AnthropicErrorEvent is the error event Anthropic sends inside a stream.
func AnthropicErrorEvent(typ, msg string) Event {
	return Event{"error", js(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})}
}

// ChatStream is a Chat Completions stream: a role-only delta, content
// chunks, a finish chunk, a usage chunk and [DONE].
func ChatStream(in, out int, chunks ...string) []Event {
	chunk := func(delta map[string]any, finish any) Event {
		return Event{Data: js(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "gpt-fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})}
	}
	evs := []Event{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	for _, c := range chunks {
		evs = append(evs, chunk(map[string]any{"content": c}, nil))
	}
	evs = append(evs, chunk(map[string]any{}, "stop"))
	evs = append(evs, Event{Data: js(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}})})
	return append(evs, Event{Data: "[DONE]"})
}

// ChatCompletion is a non-streamed Chat Completions answer.
func ChatCompletion(text string, in, out int) Response {
	return Response{Body: js(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "model": "gpt-fake",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out},
	})}
}

// ResponsesStream is a Responses API stream with typed events.
func ResponsesStream(in, out int, chunks ...string) []Event {
	seq := 0
	ev := func(typ string, fields map[string]any) Event {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		return Event{typ, js(fields)}
	}
	resp := func(status string, usage any) map[string]any {
		return map[string]any{"id": "resp_fake", "object": "response", "status": status, "usage": usage}
	}
	evs := []Event{
		ev("response.created", map[string]any{"response": resp("in_progress", nil)}),
		ev("response.in_progress", map[string]any{"response": resp("in_progress", nil)}),
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message", "role": "assistant"}}),
	}
	for _, c := range chunks {
		evs = append(evs, ev("response.output_text.delta", map[string]any{"output_index": 0, "content_index": 0, "delta": c}))
	}
	return append(evs, ev("response.completed", map[string]any{"response": resp("completed",
		map[string]any{"input_tokens": in, "output_tokens": out, "total_tokens": in + out})}))
}
