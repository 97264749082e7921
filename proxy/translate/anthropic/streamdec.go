package anthropic

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// wireEvent is one stream event: the members of every type it carries.
type wireEvent struct {
	Type    string `json:"type"`
	Message *struct {
		ID    string     `json:"id"`
		Model string     `json:"model"`
		Usage *wireUsage `json:"usage"`
		// Content and a stop reason already in message_start: some
		// upstreams open a stream with blocks that are complete.
		Content      []wireBlock `json:"content"`
		StopReason   string      `json:"stop_reason"`
		StopSequence *string     `json:"stop_sequence"`
	} `json:"message"`
	ContentBlock *wireBlock `json:"content_block"`
	Delta        *struct {
		Type         string  `json:"type"`
		Text         string  `json:"text"`
		Thinking     string  `json:"thinking"`
		Signature    string  `json:"signature"`
		PartialJSON  string  `json:"partial_json"`
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage *wireUsage `json:"usage"`
	Error *wireError `json:"error"`
}

// streamDecoder reads an Anthropic event stream. It numbers blocks itself
// (an upstream's indexes are not trusted), buffers a tool call's
// input_json_delta fragments until its content_block_stop, and skips
// blocks of server tools whole.
type streamDecoder struct {
	started  bool // EvStart emitted
	finished bool // message_stop seen
	next     int  // the index the next block gets
	open     bool // block next-1 is open
	skip     bool // the upstream's current block is one that is not carried
	// part is the open block: kind, a tool call's id and name, a thinking
	// block's signature and a redacted block's data.
	part    conv.Part
	args    []byte          // the open tool call's input_json_delta fragments
	input   json.RawMessage // its input as content_block_start gave it
	usage   conv.Usage
	stop    conv.StopReason
	stopSeq string
}

// Decode reads one event.
func (d *streamDecoder) Decode(name string, data []byte, emit func(conv.Event)) error {
	if d.finished || name == "ping" {
		return nil
	}
	var ev wireEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Errorf("anthropic stream: %s event: %w", name, err)
	}
	if ev.Type == "" {
		ev.Type = name
	}
	switch ev.Type {
	case "message_start":
		d.messageStart(&ev, emit)
	case "content_block_start":
		d.blockStart(ev.ContentBlock, emit)
	case "content_block_delta":
		d.blockDelta(&ev, emit)
	case "content_block_stop":
		if d.skip {
			d.skip = false
		} else {
			d.closeBlock(emit)
		}
	case "message_delta":
		if ev.Delta != nil {
			if ev.Delta.StopReason != "" {
				d.stop = stopIn(ev.Delta.StopReason)
			}
			if ev.Delta.StopSequence != nil {
				d.stopSeq = *ev.Delta.StopSequence
			}
		}
		d.usage = ev.Usage.final(d.usage)
	case "message_stop":
		d.start(emit)
		d.closeBlock(emit)
		d.finished = true
		emit(conv.Event{Type: conv.EvFinish, Stop: d.stop, StopSequence: d.stopSeq, Usage: d.usage})
	case "error":
		se := &conv.StreamError{Type: "api_error"}
		if ev.Error != nil {
			se.Type, se.Message = cmp.Or(ev.Error.Type, se.Type), ev.Error.Message
		}
		emit(conv.Event{Type: conv.EvError, Err: se})
	}
	return nil
}

func (d *streamDecoder) messageStart(ev *wireEvent, emit func(conv.Event)) {
	if d.started || ev.Message == nil {
		return
	}
	d.started = true
	m := ev.Message
	d.usage = m.Usage.all(d.usage)
	emit(conv.Event{Type: conv.EvStart, ID: m.ID, Model: m.Model, Usage: d.usage})
	// Blocks inside message_start are whole: each is opened and closed
	// here as if it had streamed (server tool results are skipped as in
	// a stream).
	for i := range m.Content {
		d.blockStart(&m.Content[i], emit)
		if d.skip {
			d.skip = false
			continue
		}
		d.closeBlock(emit)
	}
	if m.StopReason != "" {
		d.stop = stopIn(m.StopReason)
	}
	if m.StopSequence != nil {
		d.stopSeq = *m.StopSequence
	}
}

// start emits EvStart for an upstream that sent no message_start.
func (d *streamDecoder) start(emit func(conv.Event)) {
	if !d.started {
		d.started = true
		emit(conv.Event{Type: conv.EvStart, Usage: d.usage})
	}
}

// blockStart opens a block, closing one the upstream left open.
func (d *streamDecoder) blockStart(b *wireBlock, emit func(conv.Event)) {
	if b == nil {
		return
	}
	d.start(emit)
	d.closeBlock(emit)
	d.skip = false
	switch b.Type {
	case "text":
		d.openBlock(conv.Part{Kind: conv.PartText}, emit)
		d.text(b.Text, emit)
	case "thinking":
		d.openBlock(conv.Part{Kind: conv.PartReasoning}, emit)
		d.part.Signature = b.Signature
		d.text(b.Thinking, emit)
	case "redacted_thinking":
		d.openBlock(conv.Part{Kind: conv.PartReasoning}, emit)
		d.part.Redacted = b.Data
	case "tool_use":
		id := b.ID
		if id == "" {
			id = newID("toolu_")
		}
		d.openBlock(conv.Part{Kind: conv.PartToolCall, CallID: id, Name: b.Name}, emit)
		d.input = append(d.input[:0], b.Input...)
	default:
		d.skip = true
	}
}

func (d *streamDecoder) openBlock(p conv.Part, emit func(conv.Event)) {
	d.part, d.open = p, true
	emit(conv.Event{Type: conv.EvBlockStart, Index: d.next, Part: p})
	d.next++
}

// text emits s as a delta of the open block.
func (d *streamDecoder) text(s string, emit func(conv.Event)) {
	if s != "" {
		emit(conv.Event{Type: conv.EvDelta, Index: d.next - 1, Text: s})
	}
}

// ensure makes the open block one of kind, for an upstream that sends a
// delta without (or of another type than) its block's start.
func (d *streamDecoder) ensure(kind conv.PartKind, emit func(conv.Event)) {
	if d.open && d.part.Kind == kind {
		return
	}
	d.start(emit)
	d.closeBlock(emit)
	d.openBlock(conv.Part{Kind: kind}, emit)
}

func (d *streamDecoder) blockDelta(ev *wireEvent, emit func(conv.Event)) {
	if d.skip || ev.Delta == nil {
		return
	}
	switch dl := ev.Delta; dl.Type {
	case "text_delta":
		if dl.Text != "" {
			d.ensure(conv.PartText, emit)
			d.text(dl.Text, emit)
		}
	case "thinking_delta":
		if dl.Thinking != "" {
			d.ensure(conv.PartReasoning, emit)
			d.text(dl.Thinking, emit)
		}
	case "signature_delta":
		if d.open && d.part.Kind == conv.PartReasoning {
			d.part.Signature += dl.Signature
		}
	case "input_json_delta":
		if d.open && d.part.Kind == conv.PartToolCall {
			d.args = append(d.args, dl.PartialJSON...)
		}
	}
}

// closeBlock stops the open block: a tool call gets its whole arguments
// first, a reasoning block's stop carries its signature or redacted data.
func (d *streamDecoder) closeBlock(emit func(conv.Event)) {
	if !d.open {
		return
	}
	d.open = false
	i := d.next - 1
	if d.part.Kind == conv.PartToolCall {
		args := d.args
		if len(args) == 0 {
			args = d.input
		}
		emit(conv.Event{Type: conv.EvDelta, Index: i, Text: conv.CanonicalArgs(string(args))})
		d.args, d.input = d.args[:0], d.input[:0]
	}
	emit(conv.Event{Type: conv.EvBlockStop, Index: i, Part: d.part})
}

// End closes what the upstream left open; the stream was complete when
// message_stop came.
func (d *streamDecoder) End(emit func(conv.Event)) bool {
	if !d.finished {
		d.closeBlock(emit)
	}
	return d.finished
}
