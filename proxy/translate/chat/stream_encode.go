package chat

import (
	"cmp"
	"encoding/json"
	"strconv"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// streamEncoder writes chat.completion.chunk data lines for a Chat
// client. Every chunk has the same id, created and model; a text or
// reasoning delta is one chunk, a tool call one chunk with its whole
// arguments.
type streamEncoder struct {
	model        string
	includeUsage bool
	meta         []byte // `{"id":…,"object":…,"created":…,"model":…,"choices":`
	buf          []byte // the chunk being built
	started      bool
	ended        bool
	// The open block.
	kind      conv.PartKind
	call      conv.Part // the open tool call's CallID and Name
	callSent  bool
	separate  bool // the next delta of the open block follows an earlier block of its kind
	sawText   bool
	sawReason bool
	tools     int // tool calls sent: the index of the next one
}

func newStreamEncoder(req *conv.Request) *streamEncoder {
	e := &streamEncoder{}
	if req != nil {
		e.model, e.includeUsage = req.Model, req.IncludeUsage
	}
	return e
}

// Encode appends the chunks for ev.
func (e *streamEncoder) Encode(dst []byte, ev conv.Event) []byte {
	if e.ended {
		return dst
	}
	switch ev.Type {
	case conv.EvStart:
		return e.start(dst, ev.ID)
	case conv.EvError:
		msg := "upstream error"
		if ev.Err != nil {
			msg = cmp.Or(ev.Err.Message, ev.Err.Type, msg)
		}
		return e.Fail(dst, msg)
	}
	if !e.started {
		dst = e.start(dst, "")
	}
	switch ev.Type {
	case conv.EvBlockStart:
		e.kind, e.call, e.callSent = ev.Part.Kind, ev.Part, false
		e.separate = (e.kind == conv.PartText && e.sawText) || (e.kind == conv.PartReasoning && e.sawReason)
	case conv.EvDelta:
		dst = e.delta(dst, ev.Text)
	case conv.EvBlockStop:
		if e.kind == conv.PartToolCall && !e.callSent {
			dst = e.toolCall(dst, "{}")
		}
		e.kind = 0
	case conv.EvFinish:
		dst = e.finish(dst, ev)
	}
	return dst
}

// start writes the first chunk (the assistant role) and fixes the id and
// created time of all of them.
func (e *streamEncoder) start(dst []byte, id string) []byte {
	if e.started {
		return dst
	}
	e.started = true
	if id == "" {
		id = newID("chatcmpl-")
	}
	m := conv.AppendString([]byte(`{"id":`), id)
	m = append(m, `,"object":"chat.completion.chunk","created":`...)
	m = strconv.AppendInt(m, now().Unix(), 10)
	m = append(m, `,"model":`...)
	m = conv.AppendString(m, e.model)
	e.meta = append(m, `,"choices":`...)
	return e.chunk(dst, []byte(`{"role":"assistant","content":""}`), "null")
}

// chunk appends a chunk of one choice with delta and finish (JSON text).
func (e *streamEncoder) chunk(dst, delta []byte, finish string) []byte {
	b := append(e.buf[:0], e.meta...)
	b = append(b, `[{"index":0,"delta":`...)
	b = append(b, delta...)
	e.buf = appendFinish(b, finish)
	return conv.AppendSSE(dst, "", e.buf)
}

func appendFinish(b []byte, finish string) []byte {
	b = append(b, `,"finish_reason":`...)
	b = append(b, finish...)
	return append(b, "}]}"...)
}

// delta writes a text or reasoning delta, or the open tool call.
func (e *streamEncoder) delta(dst []byte, text string) []byte {
	var key string
	switch e.kind {
	case conv.PartToolCall:
		return e.toolCall(dst, text)
	case conv.PartText:
		key, e.sawText = "content", true
	case conv.PartReasoning:
		key, e.sawReason = "reasoning_content", true
	default:
		return dst
	}
	if text == "" {
		return dst
	}
	if e.separate {
		text, e.separate = "\n\n"+text, false // as EncodeResponse joins blocks
	}
	b := append(e.buf[:0], e.meta...)
	b = append(b, `[{"index":0,"delta":{"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	b = conv.AppendString(b, text)
	e.buf = appendFinish(append(b, '}'), "null")
	return conv.AppendSSE(dst, "", e.buf)
}

// toolCall writes the open tool call, whole, as one chunk.
func (e *streamEncoder) toolCall(dst []byte, args string) []byte {
	if e.callSent {
		return dst
	}
	e.callSent = true
	tc := toolCallOut(&conv.Part{CallID: e.call.CallID, Name: e.call.Name, Args: args})
	n := e.tools
	tc.Index = &n
	e.tools++
	delta := conv.Marshal(struct {
		ToolCalls []outToolCall `json:"tool_calls"`
	}{[]outToolCall{tc}})
	return e.chunk(dst, delta, "null")
}

// finish writes the finish_reason chunk, the usage chunk when the client
// asked for it, and [DONE].
func (e *streamEncoder) finish(dst []byte, ev conv.Event) []byte {
	e.ended = true
	dst = e.chunk(dst, []byte("{}"), strconv.Quote(finishReason(ev.Stop)))
	if e.includeUsage {
		b := append(e.buf[:0], e.meta...)
		b = append(b, `[],"usage":`...)
		b = append(b, conv.Marshal(usageOut(ev.Usage))...)
		e.buf = append(b, '}')
		dst = conv.AppendSSE(dst, "", e.buf)
	}
	return conv.AppendSSE(dst, "", []byte("[DONE]"))
}

var upstreamErrorCode = json.RawMessage(`"upstream_error"`)

// Fail ends a broken stream with an error chunk (and no [DONE]), as
// OpenAI reports an error mid-stream.
func (e *streamEncoder) Fail(dst []byte, msg string) []byte {
	if e.ended {
		return dst
	}
	e.ended = true
	return conv.AppendSSEJSON(dst, "", struct {
		Error wireError `json:"error"`
	}{wireError{Message: msg, Type: "server_error", Code: upstreamErrorCode}})
}
