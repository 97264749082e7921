package gemini

import (
	"encoding/json"
	"fmt"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// streamDecoder reads streamGenerateContent?alt=sse: every event's data is
// a whole GenerateContentResponse carrying the next parts of the first
// candidate. Text and thought parts are deltas of a text or reasoning
// block (a switch between them closes one block and opens the next); a
// function call comes whole and is one tool-call block; a signature on a
// text or thought part goes on its block's stop, one on a function call
// on its block. The finishReason closes the blocks; the EvFinish waits for
// the end of the stream, as the usage of a later chunk is the final one.
type streamDecoder struct {
	c        codec
	started  bool
	finished bool // a finishReason came
	next     int
	open     bool
	part     conv.Part // the open block
	called   bool
	reason   string
	usage    conv.Usage
}

// Decode reads one chunk.
func (d *streamDecoder) Decode(_ string, data []byte, emit func(conv.Event)) error {
	if len(data) == 0 || string(data) == "[DONE]" {
		return nil
	}
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("gemini stream: %w", err)
	}
	if w.Error != nil {
		emit(conv.Event{Type: conv.EvError, Err: &conv.StreamError{Type: errorType(w.Error.Status), Message: w.Error.Message}})
		return nil
	}
	if !d.started {
		d.started = true
		d.usage = usageIn(w.UsageMetadata)
		emit(conv.Event{Type: conv.EvStart, ID: w.ResponseID, Model: w.ModelVersion,
			Usage: conv.Usage{Input: d.usage.Input, CacheRead: d.usage.CacheRead}})
	}
	if w.UsageMetadata != nil {
		d.usage = usageIn(w.UsageMetadata)
	}
	if w.PromptFeedback != nil && w.PromptFeedback.BlockReason != "" && len(w.Candidates) == 0 {
		d.finish("SAFETY", emit)
		return nil
	}
	cand := first(w.Candidates)
	if cand == nil || d.finished {
		return nil
	}
	if cand.Content != nil {
		for i := range cand.Content.Parts {
			d.readPart(&cand.Content.Parts[i], emit)
		}
	}
	if cand.FinishReason != "" {
		d.finish(cand.FinishReason, emit)
	}
	return nil
}

func (d *streamDecoder) readPart(w *wirePart, emit func(conv.Event)) {
	p, ok := partIn(w)
	if !ok {
		return
	}
	switch p.Kind {
	case conv.PartText, conv.PartReasoning:
		if p.Text == "" {
			d.signOpen(p)
			return
		}
		if !d.open || d.part.Kind != p.Kind {
			d.closeBlock(emit)
			d.openBlock(conv.Part{Kind: p.Kind}, emit)
		}
		emit(conv.Event{Type: conv.EvDelta, Index: d.next - 1, Text: p.Text})
		d.signOpen(p)
	case conv.PartToolCall:
		d.closeBlock(emit)
		if p.CallID == "" {
			p.CallID = newCallID()
		}
		d.c.store.Put(d.c.key, p.CallID, p.GeminiSignature)
		args := p.Args
		p.Args = ""
		d.openBlock(p, emit)
		emit(conv.Event{Type: conv.EvDelta, Index: d.next - 1, Text: args})
		d.closeBlock(emit)
		d.called = true
	}
}

// signOpen puts the signatures of p on the open block; a signature on an
// empty part with no block open to take it is dropped (Gemini checks only
// the signatures of function calls).
func (d *streamDecoder) signOpen(p conv.Part) {
	if !d.open || d.part.Kind == conv.PartToolCall {
		return
	}
	d.part.GeminiSignature = cmpOr(p.GeminiSignature, d.part.GeminiSignature)
	d.part.Signature = cmpOr(p.Signature, d.part.Signature)
	d.part.Redacted = cmpOr(p.Redacted, d.part.Redacted)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (d *streamDecoder) openBlock(p conv.Part, emit func(conv.Event)) {
	d.part, d.open = p, true
	emit(conv.Event{Type: conv.EvBlockStart, Index: d.next, Part: p})
	d.next++
}

func (d *streamDecoder) closeBlock(emit func(conv.Event)) {
	if !d.open {
		return
	}
	d.open = false
	emit(conv.Event{Type: conv.EvBlockStop, Index: d.next - 1, Part: d.part})
}

func (d *streamDecoder) finish(reason string, emit func(conv.Event)) {
	d.closeBlock(emit)
	d.finished, d.reason = true, reason
}

// End emits the EvFinish of a stream that gave its finishReason, with the
// last usage reported; a stream cut before it is incomplete.
func (d *streamDecoder) End(emit func(conv.Event)) bool {
	d.closeBlock(emit)
	if !d.finished {
		return false
	}
	emit(conv.Event{Type: conv.EvFinish, Stop: stopIn(d.reason, d.called), Usage: d.usage})
	return true
}
