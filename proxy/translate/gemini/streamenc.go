package gemini

import (
	"encoding/json"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// streamEncoder writes a Gemini client's stream: each text or thought
// delta one GenerateContentResponse chunk, each function call one chunk
// when its arguments are whole, a block's signature a chunk of an empty
// part that carries it (as Gemini sends it), and the finish a chunk with
// finishReason and usageMetadata. As SSE (alt=sse) every chunk is one
// data event; as an array the chunks are the elements of one JSON array.
type streamEncoder struct {
	model, id string
	array     bool
	wrote     bool // a chunk (and, as an array, "[") is written
	done      bool
	part      conv.Part // the open block's head
	// thinking is the open reasoning block's text and then the signed
	// thinking of the answer so far, for the next function call (carry.go).
	text     strings.Builder
	thinking []conv.Part
}

func newStreamEncoder(req *conv.Request, array bool) *streamEncoder {
	e := &streamEncoder{array: array}
	if req != nil {
		e.model = req.Model
	}
	return e
}

// Encode appends the bytes for ev.
func (e *streamEncoder) Encode(dst []byte, ev conv.Event) []byte {
	if e.done {
		return dst
	}
	switch ev.Type {
	case conv.EvStart:
		e.id = ev.ID
		if e.model == "" {
			e.model = ev.Model
		}
	case conv.EvBlockStart:
		e.part = ev.Part
		e.text.Reset()
	case conv.EvDelta:
		return e.delta(dst, ev.Text)
	case conv.EvBlockStop:
		p := e.part
		p.GeminiSignature = cmpOr(ev.Part.GeminiSignature, p.GeminiSignature)
		p.Signature, p.Redacted = ev.Part.Signature, ev.Part.Redacted
		if p.Text = e.text.String(); signedThinking(&p) {
			e.thinking = append(e.thinking, p)
		}
		p.Text = ""
		if p.Kind == conv.PartToolCall {
			return dst
		}
		if w, ok := answerPart(&p); ok {
			return e.chunk(dst, []wirePart{w}, "", nil)
		}
	case conv.EvFinish:
		dst = e.chunk(dst, []wirePart{{Text: ptr("")}}, stopOut(ev.Stop), usageOut(ev.Usage))
		return e.end(dst)
	case conv.EvError:
		msg, status := "upstream error", "INTERNAL"
		if ev.Err != nil {
			msg, status = ev.Err.Message, statusFor(ev.Err.Type)
		}
		return e.fail(dst, msg, status)
	}
	return dst
}

func (e *streamEncoder) delta(dst []byte, text string) []byte {
	p := e.part
	switch p.Kind {
	case conv.PartToolCall:
		p.Args = text
		w, _ := answerPart(&p)
		if w.ThoughtSignature == "" {
			w.ThoughtSignature = carryThinking(e.thinking)
		}
		e.thinking = nil
		return e.chunk(dst, []wirePart{w}, "", nil)
	case conv.PartText, conv.PartReasoning:
		if p.Kind == conv.PartReasoning {
			e.text.WriteString(text)
		}
		if text == "" {
			return dst
		}
		p.Text = text
		p.GeminiSignature, p.Signature, p.Redacted = "", "", ""
	default:
		return dst
	}
	w, _ := answerPart(&p)
	return e.chunk(dst, []wirePart{w}, "", nil)
}

// chunk appends one GenerateContentResponse.
func (e *streamEncoder) chunk(dst []byte, parts []wirePart, finish string, usage *outUsage) []byte {
	out := outResponse{
		Candidates:    []outCandidate{{Content: wireContent{Role: "model", Parts: parts}, FinishReason: finish}},
		UsageMetadata: usage, ModelVersion: e.model, ResponseID: e.id,
	}
	return e.write(dst, conv.Marshal(out))
}

func (e *streamEncoder) write(dst, data []byte) []byte {
	if !e.array {
		e.wrote = true
		return conv.AppendSSE(dst, "", data)
	}
	if e.wrote {
		dst = append(dst, ",\r\n"...)
	} else {
		dst = append(dst, '[')
	}
	e.wrote = true
	return append(dst, data...)
}

// end closes the stream: the array's "]".
func (e *streamEncoder) end(dst []byte) []byte {
	e.done = true
	if e.array {
		if !e.wrote {
			dst = append(dst, '[')
		}
		dst = append(dst, ']')
	}
	return dst
}

// Fail ends a broken stream with a Gemini error object.
func (e *streamEncoder) Fail(dst []byte, msg string) []byte {
	if e.done {
		return dst
	}
	return e.fail(dst, msg, "INTERNAL")
}

func (e *streamEncoder) fail(dst []byte, msg, status string) []byte {
	body := map[string]wireError{"error": {Code: httpStatus(status), Message: msg, Status: status}}
	dst = e.write(dst, json.RawMessage(conv.Marshal(body)))
	return e.end(dst)
}
