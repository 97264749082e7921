package chat

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// wireChunk is one chat.completion.chunk, or an error in the stream.
type wireChunk struct {
	ID      string            `json:"id"`
	Model   string            `json:"model"`
	Choices []wireChunkChoice `json:"choices"`
	Usage   *wireUsage        `json:"usage"`
	Error   *wireError        `json:"error"`
}

// wireChunkChoice is one choice of a chunk.
type wireChunkChoice struct {
	Index        int        `json:"index"`
	Delta        wireDelta  `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
	Usage        *wireUsage `json:"usage"` // Moonshot reports it here
}

// wireDelta is what a chunk adds to the message.
type wireDelta struct {
	Content          *string         `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	ToolCalls        []wireToolCall  `json:"tool_calls"`
}

// Where the content is with respect to inlined <think> reasoning.
const (
	thinkMaybe  uint8 = iota // no content yet: it may open with <think>
	thinkInside              // inside <think>…</think>
	thinkOff                 // plain text
)

// pendingCall is a tool call being assembled from its fragments.
type pendingCall struct {
	index    int
	id, name string
	args     strings.Builder
	emitted  bool
}

// streamDecoder turns a Chat upstream's chunks into neutral events. Text
// and reasoning stream through as they come; tool calls are buffered and
// emitted whole when the finish_reason arrives (or at the end); EvFinish
// waits for [DONE] so that a usage chunk after the finish is in it.
type streamDecoder struct {
	started bool
	next    int           // index of the next block
	open    int           // index of the open block, -1 when none
	kind    conv.PartKind // kind of the open block
	think   uint8         // thinkMaybe, thinkInside or thinkOff
	held    string        // content held back: maybe the start of a tag
	trim    bool          // drop the blank space that follows a tag
	calls   []*pendingCall
	finish  string // the first finish_reason
	seen    bool   // a finish_reason arrived
	usage   conv.Usage
	done    bool // EvFinish or EvError emitted: the rest is ignored
	failed  bool // the upstream reported an error
}

func newStreamDecoder() *streamDecoder { return &streamDecoder{open: -1} }

// Decode reads one data line: a chunk, an error, or [DONE].
func (d *streamDecoder) Decode(_ string, data []byte, emit func(conv.Event)) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || d.done {
		return nil
	}
	if string(data) == "[DONE]" {
		d.finishStream(emit)
		return nil
	}
	var c wireChunk
	if err := readChunk(data, &c); err != nil {
		return fmt.Errorf("chat stream: %w", err)
	}
	if c.Error != nil {
		d.done, d.failed = true, true
		emit(conv.Event{Type: conv.EvError, Err: &conv.StreamError{Type: c.Error.errorType(), Message: c.Error.Message}})
		return nil
	}
	if !d.started {
		d.started = true
		emit(conv.Event{Type: conv.EvStart, ID: c.ID, Model: c.Model})
	}
	for i := range c.Choices {
		if ch := &c.Choices[i]; ch.Index == 0 {
			d.delta(&ch.Delta, emit)
			if ch.FinishReason != nil && *ch.FinishReason != "" && !d.seen {
				d.seen, d.finish = true, *ch.FinishReason
				d.flush(emit)
			}
			if ch.Usage != nil {
				d.usage = ch.Usage.neutral()
			}
		}
	}
	if c.Usage != nil {
		d.usage = c.Usage.neutral()
	}
	return nil
}

// delta takes what one chunk adds: reasoning, content, tool-call fragments.
func (d *streamDecoder) delta(dl *wireDelta, emit func(conv.Event)) {
	m := wireMessage{ReasoningContent: dl.ReasoningContent, Reasoning: dl.Reasoning}
	if r := m.reasoningText(); r != "" {
		d.text(conv.PartReasoning, r, emit)
	}
	if dl.Content != nil && *dl.Content != "" {
		d.content(*dl.Content, emit)
	}
	for i := range dl.ToolCalls {
		d.addCall(&dl.ToolCalls[i])
	}
}

// content streams content, splitting off reasoning inlined as <think>…
// </think> at its start. Only bytes that may be the start of a tag are
// held back, until the next content shows whether they are.
func (d *streamDecoder) content(s string, emit func(conv.Event)) {
	for s != "" {
		switch d.think {
		case thinkOff:
			d.trimmed(conv.PartText, s, emit)
			return
		case thinkMaybe:
			s = d.held + s
			d.held = ""
			if rest, ok := strings.CutPrefix(s, openThink); ok {
				d.think, d.trim, s = thinkInside, true, rest
				continue
			}
			if strings.HasPrefix(openThink, s) {
				d.held = s
				return
			}
			d.think = thinkOff
		case thinkInside:
			s = d.held + s
			d.held = ""
			if i := strings.Index(s, closeThink); i >= 0 {
				d.trimmed(conv.PartReasoning, s[:i], emit)
				d.think, d.trim, s = thinkOff, true, s[i+len(closeThink):]
				continue
			}
			k := tagPrefixAtEnd(s, closeThink)
			d.trimmed(conv.PartReasoning, s[:len(s)-k], emit)
			d.held = s[len(s)-k:]
			return
		}
	}
}

// tagPrefixAtEnd is the length of the longest end of s that begins tag.
func tagPrefixAtEnd(s, tag string) int {
	for k := min(len(tag)-1, len(s)); k > 0; k-- {
		if strings.HasSuffix(s, tag[:k]) {
			return k
		}
	}
	return 0
}

// trimmed streams s into a block of kind, without the blank space that
// follows a <think> tag.
func (d *streamDecoder) trimmed(kind conv.PartKind, s string, emit func(conv.Event)) {
	if d.trim {
		if s = trimLead(s); s == "" {
			return
		}
		d.trim = false
	}
	d.text(kind, s, emit)
}

// text adds s to the open block when it is of kind, else stops that block
// and starts one.
func (d *streamDecoder) text(kind conv.PartKind, s string, emit func(conv.Event)) {
	if s == "" {
		return
	}
	if d.open < 0 || d.kind != kind {
		d.stopBlock(emit)
		d.open, d.kind = d.next, kind
		d.next++
		emit(conv.Event{Type: conv.EvBlockStart, Index: d.open, Part: conv.Part{Kind: kind}})
	}
	emit(conv.Event{Type: conv.EvDelta, Index: d.open, Text: s})
}

func (d *streamDecoder) stopBlock(emit func(conv.Event)) {
	if d.open >= 0 {
		emit(conv.Event{Type: conv.EvBlockStop, Index: d.open, Part: conv.Part{Kind: d.kind}})
		d.open = -1
	}
}

// addCall adds a fragment to its call: the latest one with its index,
// unless that one has another id or name, or was emitted already (some
// upstreams number every call 0).
func (d *streamDecoder) addCall(tc *wireToolCall) {
	idx := 0
	if tc.Index != nil {
		idx = *tc.Index
	}
	var c *pendingCall
	for i := len(d.calls) - 1; i >= 0; i-- {
		if d.calls[i].index == idx {
			c = d.calls[i]
			break
		}
	}
	name := tc.name()
	if c == nil || c.emitted || differs(c.id, tc.ID) || differs(c.name, name) {
		c = &pendingCall{index: idx}
		d.calls = append(d.calls, c)
	}
	if tc.ID != "" {
		c.id = tc.ID
	}
	if name != "" {
		c.name = name
	}
	c.args.WriteString(tc.args())
}

// differs reports whether a fragment's id or name (b) is not the one of
// the call so far (a), both being known.
func differs(a, b string) bool { return a != "" && b != "" && a != b }

// flush emits what is held: held-back content, the open block, and the
// buffered tool calls in index order.
func (d *streamDecoder) flush(emit func(conv.Event)) {
	if d.held != "" {
		kind := conv.PartText
		if d.think == thinkInside {
			kind = conv.PartReasoning
		}
		held := d.held
		d.held = ""
		d.trimmed(kind, held, emit)
	}
	d.stopBlock(emit)
	slices.SortStableFunc(d.calls, func(a, b *pendingCall) int { return cmp.Compare(a.index, b.index) })
	for _, c := range d.calls {
		if c.emitted {
			continue
		}
		c.emitted = true
		if c.id == "" {
			c.id = newID("call_")
		}
		i := d.next
		d.next++
		emit(conv.Event{Type: conv.EvBlockStart, Index: i, Part: conv.Part{Kind: conv.PartToolCall, CallID: c.id, Name: c.name}})
		emit(conv.Event{Type: conv.EvDelta, Index: i, Text: conv.CanonicalArgs(c.args.String())})
		emit(conv.Event{Type: conv.EvBlockStop, Index: i, Part: conv.Part{Kind: conv.PartToolCall, CallID: c.id, Name: c.name}})
	}
}

// finishStream ends the message: what is pending, then EvFinish with the
// last usage reported. [DONE] without a finish_reason still ends it.
func (d *streamDecoder) finishStream(emit func(conv.Event)) {
	if !d.started {
		d.started = true
		emit(conv.Event{Type: conv.EvStart})
	}
	d.flush(emit)
	d.done = true
	emit(conv.Event{Type: conv.EvFinish, Stop: stopReason(d.finish, len(d.calls) > 0), Usage: d.usage})
}

// End finishes a stream whose finish_reason came without [DONE]. A stream
// cut before its finish_reason is incomplete and emits nothing more: the
// proxy fails the client's stream.
func (d *streamDecoder) End(emit func(conv.Event)) bool {
	if d.done {
		return !d.failed
	}
	if !d.seen {
		return false
	}
	d.finishStream(emit)
	return true
}
