package anthropic

import (
	"encoding/json"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

type sseMessageStart struct {
	Type    string     `json:"type"`
	Message outMessage `json:"message"`
}

type sseBlockStart struct {
	Type         string   `json:"type"`
	Index        int      `json:"index"`
	ContentBlock outBlock `json:"content_block"`
}

type sseDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text,omitempty"`
	Thinking    string `json:"thinking,omitempty"`
	PartialJSON string `json:"partial_json,omitempty"`
	Signature   string `json:"signature,omitempty"`
}

type sseBlockDelta struct {
	Type  string   `json:"type"`
	Index int      `json:"index"`
	Delta sseDelta `json:"delta"`
}

type sseIndex struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

type sseMessageDelta struct {
	Type  string `json:"type"`
	Delta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage outUsage `json:"usage"`
}

type sseType struct {
	Type string `json:"type"`
}

type sseError struct {
	Type  string    `json:"type"`
	Error wireError `json:"error"`
}

// streamEncoder writes the event stream Claude Code reads. It numbers the
// blocks it writes itself, so no index is ever reused, and holds a
// reasoning block's start until it knows whether the block is thinking
// (text or a signature) or redacted_thinking (data at its stop) — an empty
// unsigned one is not written at all.
type streamEncoder struct {
	model   string
	started bool // message_start written
	done    bool // message_stop or an error written
	next    int  // the index the next written block gets
	open    bool // a block is open (written, or held when pending)
	kind    conv.PartKind
	pending bool // the open block is reasoning whose start is not written yet
	called  bool // a tool_use block was written
}

// Encode appends the bytes for ev.
func (e *streamEncoder) Encode(dst []byte, ev conv.Event) []byte {
	if e.done {
		return dst
	}
	switch ev.Type {
	case conv.EvStart:
		return e.start(dst, ev.ID, ev.Usage)
	case conv.EvBlockStart:
		dst = e.start(dst, "", conv.Usage{})
		return e.blockStart(e.closeBlock(dst, conv.Part{}), ev.Part)
	case conv.EvDelta:
		return e.delta(dst, ev.Text)
	case conv.EvBlockStop:
		return e.closeBlock(dst, ev.Part)
	case conv.EvFinish:
		dst = e.closeBlock(e.start(dst, "", conv.Usage{}), conv.Part{})
		var md sseMessageDelta
		md.Type = "message_delta"
		md.Delta.StopReason = stopOut(ev.Stop, e.called)
		md.Delta.StopSequence = nullable(ev.StopSequence)
		md.Usage = usageOut(ev.Usage)
		dst = conv.AppendSSEJSON(dst, "message_delta", md)
		e.done = true
		return conv.AppendSSEJSON(dst, "message_stop", sseType{Type: "message_stop"})
	case conv.EvError:
		se := conv.StreamError{}
		if ev.Err != nil {
			se = *ev.Err
		}
		return e.fail(dst, errorType(se.Type), se.Message)
	}
	return dst
}

// Fail closes the open block and writes an overloaded_error (Claude Code
// retries those), unless the stream already ended.
func (e *streamEncoder) Fail(dst []byte, msg string) []byte {
	if e.done {
		return dst
	}
	return e.fail(dst, "overloaded_error", msg)
}

func (e *streamEncoder) fail(dst []byte, typ, msg string) []byte {
	dst = e.closeBlock(dst, conv.Part{})
	e.done = true
	return conv.AppendSSEJSON(dst, "error", sseError{Type: "error", Error: wireError{Type: typ, Message: msg}})
}

// start writes message_start once, first.
func (e *streamEncoder) start(dst []byte, id string, u conv.Usage) []byte {
	if e.started {
		return dst
	}
	e.started = true
	if id == "" {
		id = newID("msg_")
	}
	return conv.AppendSSEJSON(dst, "message_start", sseMessageStart{Type: "message_start", Message: outMessage{
		ID: id, Type: "message", Role: "assistant", Model: e.model, Content: []outBlock{},
		Usage: outUsage{Input: u.Input, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Output: u.Output},
	}})
}

func (e *streamEncoder) blockStart(dst []byte, p conv.Part) []byte {
	e.open, e.kind = true, p.Kind
	switch p.Kind {
	case conv.PartReasoning:
		e.pending = true
		return dst
	case conv.PartToolCall:
		e.called = true
		id := p.CallID
		if id == "" {
			id = newID("toolu_")
		}
		return e.writeStart(dst, outBlock{Type: "tool_use", ID: id, Name: p.Name, Input: json.RawMessage("{}")})
	}
	e.kind = conv.PartText
	return e.writeStart(dst, outBlock{Type: "text", Text: ptr("")})
}

func (e *streamEncoder) writeStart(dst []byte, b outBlock) []byte {
	dst = conv.AppendSSEJSON(dst, "content_block_start", sseBlockStart{Type: "content_block_start", Index: e.next, ContentBlock: b})
	e.next++
	return dst
}

// thinkingStart writes a held reasoning block's start as thinking.
func (e *streamEncoder) thinkingStart(dst []byte) []byte {
	e.pending = false
	return e.writeStart(dst, outBlock{Type: "thinking", Thinking: ptr(""), Signature: ptr("")})
}

func (e *streamEncoder) delta(dst []byte, s string) []byte {
	if !e.open || s == "" {
		return dst
	}
	d := sseDelta{}
	switch e.kind {
	case conv.PartReasoning:
		if e.pending {
			dst = e.thinkingStart(dst)
		}
		d.Type, d.Thinking = "thinking_delta", s
	case conv.PartToolCall:
		d.Type, d.PartialJSON = "input_json_delta", s
	default:
		d.Type, d.Text = "text_delta", s
	}
	return conv.AppendSSEJSON(dst, "content_block_delta", sseBlockDelta{Type: "content_block_delta", Index: e.next - 1, Delta: d})
}

// closeBlock stops the open block; p is what EvBlockStop said of it (a
// reasoning block's signature or redacted data).
func (e *streamEncoder) closeBlock(dst []byte, p conv.Part) []byte {
	if !e.open {
		return dst
	}
	e.open = false
	if e.kind == conv.PartReasoning {
		switch {
		case e.pending && p.Redacted != "":
			e.pending = false
			dst = e.writeStart(dst, outBlock{Type: "redacted_thinking", Data: p.Redacted})
		case e.pending && p.Signature == "":
			e.pending = false
			return dst // empty and unsigned: never written
		case e.pending:
			dst = e.thinkingStart(dst)
		}
		if p.Signature != "" {
			dst = conv.AppendSSEJSON(dst, "content_block_delta", sseBlockDelta{
				Type: "content_block_delta", Index: e.next - 1,
				Delta: sseDelta{Type: "signature_delta", Signature: p.Signature},
			})
		}
	}
	return conv.AppendSSEJSON(dst, "content_block_stop", sseIndex{Type: "content_block_stop", Index: e.next - 1})
}

// errorType is an upstream's error type in Anthropic's words, which the
// Anthropic SDK and Claude Code act on (overloaded and rate-limit errors
// are retried).
func errorType(t string) string {
	switch t {
	case "invalid_request_error", "authentication_error", "permission_error", "not_found_error",
		"request_too_large", "rate_limit_error", "api_error", "overloaded_error", "billing_error", "timeout_error":
		return t
	case "rate_limit_exceeded", "tokens", "requests":
		return "rate_limit_error"
	case "insufficient_quota":
		return "billing_error"
	case "invalid_request", "context_length_exceeded", "invalid_prompt":
		return "invalid_request_error"
	case "server_is_overloaded", "slow_down":
		return "overloaded_error"
	}
	return "api_error"
}
