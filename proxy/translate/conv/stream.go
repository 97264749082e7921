package conv

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
)

// EventType is the kind of a neutral stream event.
type EventType uint8

const (
	// EvStart opens the message: ID, Model, and Usage as far as the
	// upstream reported it at the start (often only input tokens).
	EvStart EventType = iota + 1
	// EvBlockStart opens block Index. Part.Kind is PartText,
	// PartReasoning or PartToolCall (with CallID and Name).
	EvBlockStart
	// EvDelta adds Text to block Index: text, reasoning text, or — once,
	// for a tool call — its complete canonical arguments.
	EvDelta
	// EvBlockStop closes block Index. For a reasoning block Part carries
	// the final Signature, Redacted or Encrypted/ItemID, when there are any;
	// for any block, the GeminiSignature Gemini put on it (a tool call's
	// also rides on its EvBlockStart).
	EvBlockStop
	// EvFinish ends the message: Stop, StopSequence and the final Usage
	// (totals, not increments).
	EvFinish
	// EvError is an error the upstream reported in its stream: Err.
	EvError
)

// Event is one neutral stream event. Decoders guarantee the block
// discipline encoders rely on: blocks are numbered 0, 1, 2, … in the order
// they start and never reused; at most one block is open at a time (a
// block is stopped before the next starts); a tool-call block carries its
// whole canonical arguments in exactly one EvDelta (decoders buffer the
// fragments, so calls never interleave and arguments are never cut);
// EvStart comes first and EvFinish once, after the last block stopped.
type Event struct {
	Type         EventType
	Index        int
	Part         Part
	Text         string
	ID, Model    string
	Stop         StopReason
	StopSequence string
	Usage        Usage
	Err          *StreamError
}

// StreamError is an error carried inside a stream.
type StreamError struct {
	// Type is the upstream's error type ("overloaded_error",
	// "rate_limit_exceeded", …), Message its text.
	Type, Message string
}

// StreamDecoder turns one upstream's SSE events into neutral events.
type StreamDecoder interface {
	// Decode reads one SSE event (its event name, "" when none, and its
	// data) and emits the neutral events it yields, possibly none.
	Decode(name string, data []byte, emit func(Event)) error
	// End is called once when the upstream's stream ends, whether or not
	// it sent its terminal event. It emits what is still pending (buffered
	// tool calls, the EvFinish held for a late usage report) and reports
	// whether the stream was complete: a finish was seen.
	End(emit func(Event)) (complete bool)
}

// StreamEncoder turns neutral events into a client's SSE bytes.
type StreamEncoder interface {
	// Encode appends the client's bytes for ev to dst.
	Encode(dst []byte, ev Event) []byte
	// Fail appends the bytes that end a stream broken after content
	// reached the client (msg says why), after closing what is open.
	Fail(dst []byte, msg string) []byte
}

// AppendSSE appends one SSE event; name may be "" (OpenAI Chat sends data
// lines only).
func AppendSSE(dst []byte, name string, data []byte) []byte {
	if name != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, "\n\n"...)
}

// AppendSSEJSON appends one SSE event whose data is v as JSON.
func AppendSSEJSON(dst []byte, name string, v any) []byte {
	return AppendSSE(dst, name, Marshal(v))
}

// Marshal is json.Marshal without HTML escaping ("<" stays "<", as the
// upstream wrote it) and without the trailing newline. Values the proxy
// builds always marshal; a failure is a bug and yields "null". An
// Appender writes itself.
func Marshal(v any) []byte {
	if a, ok := v.(Appender); ok {
		if out, ok := a.AppendJSON(nil); ok {
			return out
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("null")
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Collect runs a whole stream through an aggregator: the events of a
// stream become the Response a non-streamed request expects (an upstream
// that streams when asked not to).
type Collect struct {
	resp  Response
	open  int // index into resp.Parts of the open block, -1 when none
	ended bool
	Err   *StreamError
}

// NewCollect returns an empty aggregator.
func NewCollect() *Collect { return &Collect{open: -1} }

// Add takes one event.
func (c *Collect) Add(ev Event) {
	switch ev.Type {
	case EvStart:
		c.resp.ID, c.resp.Model, c.resp.Usage = ev.ID, ev.Model, ev.Usage
	case EvBlockStart:
		p := ev.Part
		c.resp.Parts = append(c.resp.Parts, p)
		c.open = len(c.resp.Parts) - 1
	case EvDelta:
		if c.open < 0 {
			return
		}
		p := &c.resp.Parts[c.open]
		if p.Kind == PartToolCall {
			p.Args += ev.Text
		} else {
			p.Text += ev.Text
		}
	case EvBlockStop:
		if c.open < 0 {
			return
		}
		p := &c.resp.Parts[c.open]
		if p.Kind == PartToolCall {
			p.Args = CanonicalArgs(p.Args)
		}
		p.GeminiSignature = cmpOr(ev.Part.GeminiSignature, p.GeminiSignature)
		if p.Kind == PartReasoning {
			p.Signature = cmpOr(ev.Part.Signature, p.Signature)
			p.Redacted = cmpOr(ev.Part.Redacted, p.Redacted)
			p.Encrypted = cmpOr(ev.Part.Encrypted, p.Encrypted)
			p.ItemID = cmpOr(ev.Part.ItemID, p.ItemID)
		}
		c.open = -1
	case EvFinish:
		c.resp.Stop, c.resp.StopSequence, c.ended = ev.Stop, ev.StopSequence, true
		if !ev.Usage.IsZero() {
			c.resp.Usage = ev.Usage
		}
	case EvError:
		c.Err = ev.Err
	}
}

// Response is what was collected; complete is false when no EvFinish came.
func (c *Collect) Response() (resp *Response, complete bool) { return &c.resp, c.ended }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Replay emits the events of a stream that carries resp: a non-streamed
// answer turned into the stream a streaming client expects (an upstream
// that ignored stream:true).
func Replay(resp *Response, emit func(Event)) {
	start := Usage{Input: resp.Usage.Input, CacheRead: resp.Usage.CacheRead, CacheWrite: resp.Usage.CacheWrite}
	emit(Event{Type: EvStart, ID: resp.ID, Model: resp.Model, Usage: start})
	for i, p := range resp.Parts {
		head := p
		head.Text, head.Args = "", ""
		head.Signature, head.Redacted, head.Encrypted = "", "", ""
		emit(Event{Type: EvBlockStart, Index: i, Part: head})
		switch {
		case p.Kind == PartToolCall:
			emit(Event{Type: EvDelta, Index: i, Text: CanonicalArgs(p.Args)})
		case p.Text != "":
			emit(Event{Type: EvDelta, Index: i, Text: p.Text})
		}
		emit(Event{Type: EvBlockStop, Index: i, Part: p})
	}
	emit(Event{Type: EvFinish, Stop: resp.Stop, StopSequence: resp.StopSequence, Usage: resp.Usage})
}

// MarshalObject is Marshal of an object written as encoding/json writes a
// map (keys in sorted order), member by member into one buffer made
// sizeHint bytes large, a slice member element by element (an Appender
// writes itself): no value of it is ever held twice. encoding/json marshals into a buffer of its own that
// doubles as it grows, then copies it out; for the request of a long
// conversation that was three times the body in garbage (bench/NOTES.md,
// Request decoding).
func MarshalObject(m map[string]any, sizeHint int) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	b.Grow(sizeHint)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// put writes v and drops the newline Encode ends with.
	put := func(v any) bool {
		if enc.Encode(v) != nil {
			return false
		}
		b.Truncate(b.Len() - 1)
		return true
	}
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(AppendString(b.AvailableBuffer(), k))
		b.WriteByte(':')
		if out, ok := appendScalar(b.AvailableBuffer(), m[k]); ok {
			b.Write(out)
			continue
		}
		v := reflect.ValueOf(m[k])
		if v.Kind() != reflect.Slice || v.IsNil() || v.Type().Elem().Kind() == reflect.Uint8 {
			if !put(m[k]) {
				return []byte("null")
			}
			continue
		}
		b.WriteByte('[')
		for j := range v.Len() {
			if j > 0 {
				b.WriteByte(',')
			}
			e := v.Index(j).Interface()
			if a, ok := e.(Appender); ok {
				if out, ok := a.AppendJSON(b.AvailableBuffer()); ok {
					b.Write(out)
					continue
				}
			}
			if !put(e) {
				return []byte("null")
			}
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.Bytes()
}

// appendScalar writes the values a request's members mostly are as
// encoding/json writes them (ok false for any other), without its
// reflection: on a request's cold caches that cost more than the copy.
func appendScalar(dst []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case string:
		return AppendString(dst, v), true
	case bool:
		return strconv.AppendBool(dst, v), true
	case int:
		return strconv.AppendInt(dst, int64(v), 10), true
	case int64:
		return strconv.AppendInt(dst, v, 10), true
	case *int64:
		if v == nil {
			return append(dst, "null"...), true
		}
		return strconv.AppendInt(dst, *v, 10), true
	case json.RawMessage:
		// An empty one fails the whole object: left to encoding/json.
		if len(v) == 0 {
			return dst, false
		}
		return AppendCompact(dst, v)
	}
	return dst, false
}

// AppendCompact appends raw as encoding/json writes a json.RawMessage:
// compacted, HTML left as it is. ok is false, and dst as it was, when raw
// is not JSON (encoding/json then fails the whole value).
func AppendCompact(dst []byte, raw []byte) ([]byte, bool) {
	buf := bytes.NewBuffer(dst)
	if json.Compact(buf, raw) != nil {
		return dst, false
	}
	return buf.Bytes(), true
}

// SizeHint is about the size of r written in any protocol: its texts,
// arguments, data and schemas, and a little for each part's framing.
func (r *Request) SizeHint() int {
	n := 512
	var parts func(ps []Part)
	parts = func(ps []Part) {
		for i := range ps {
			p := &ps[i]
			n += 48 + len(p.Text) + len(p.Args) + len(p.Data) + len(p.URL) + len(p.Signature) +
				len(p.Redacted) + len(p.Encrypted) + len(p.GeminiSignature)
			parts(p.Content)
		}
	}
	parts(r.System)
	for _, m := range r.Messages {
		n += 32
		parts(m.Parts)
	}
	for _, t := range r.Tools {
		n += 64 + len(t.Name) + len(t.Description) + len(t.Schema)
	}
	for _, v := range r.Extra {
		n += len(v)
	}
	return n + n/16 // escapes
}
