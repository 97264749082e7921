package responses

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// wireEvent is one Responses stream event, with the members of every event
// type the decoder reads.
type wireEvent struct {
	Type         string          `json:"type"`
	ItemID       string          `json:"item_id"`
	OutputIndex  int             `json:"output_index"`
	SummaryIndex int             `json:"summary_index"`
	ContentIndex int             `json:"content_index"`
	Delta        string          `json:"delta"`
	Arguments    string          `json:"arguments"`
	Input        string          `json:"input"`
	Item         *wireItem       `json:"item"`
	Response     *wireResponse   `json:"response"`
	Code         json.RawMessage `json:"code"`
	Message      string          `json:"message"`
	Error        *wireError      `json:"error"`
}

// handled reports whether the decoder reads events of type typ.
func handled(typ string) bool {
	switch typ {
	case "response.created", "response.in_progress", "response.output_item.added",
		"response.output_text.delta", "response.refusal.delta",
		"response.reasoning_summary_text.delta", "response.reasoning_text.delta",
		"response.function_call_arguments.delta", "response.custom_tool_call_input.delta",
		"response.function_call_arguments.done", "response.custom_tool_call_input.done",
		"response.output_item.done", "response.completed", "response.incomplete",
		"response.failed", "error":
		return true
	}
	return false
}

// StreamDecoder reads a Responses upstream's event stream.
func (codec) StreamDecoder() conv.StreamDecoder { return &streamDecoder{} }

type blockKind uint8

const (
	kindNone blockKind = iota
	kindText
	kindReasoning
)

// Where a reasoning block's text comes from; the first to deliver text
// claims the block (a summary and the raw reasoning are never mixed).
const (
	srcNone uint8 = iota
	srcSummary
	srcRaw
)

// openBlock is the text or reasoning block being streamed.
type openBlock struct {
	kind    blockKind
	index   int
	key     string // the item's key (itemKey)
	source  uint8  // reasoning: srcSummary or srcRaw once text came
	part    int    // reasoning: the summary / content index of the last text
	hasText bool
}

// pendingCall is a tool call whose arguments are being buffered until its
// item is done.
type pendingCall struct {
	key         string
	outputIndex int
	id, callID  string
	name        string
	namespace   string
	custom      bool
	args        strings.Builder // the fragments
	final       string          // the arguments (input) of a done event or item
	hasFinal    bool
}

// fill takes what an item says about the call.
func (c *pendingCall) fill(it *wireItem) {
	c.custom = it.Type == "custom_tool_call"
	if it.ID != "" {
		c.id = it.ID
	}
	if it.CallID != "" {
		c.callID = it.CallID
	}
	if it.Name != "" {
		c.name, c.namespace = flatName(it.Namespace, it.Name), it.Namespace
	}
	full := it.arguments()
	if c.custom {
		full = it.Input
	}
	if full != "" {
		c.final, c.hasFinal = full, true
	}
}

// part is the call as a neutral tool-call part with its complete
// arguments (cut arguments become "{}").
func (c *pendingCall) part() conv.Part {
	args := c.args.String()
	if c.hasFinal {
		args = c.final
	}
	p := conv.Part{Kind: conv.PartToolCall, CallID: c.callID, Name: c.name, Namespace: c.namespace, Custom: c.custom}
	if p.CallID == "" {
		p.CallID = c.id
	}
	if c.custom {
		p.Args = conv.CustomArgs(args)
	} else {
		p.Args = conv.CanonicalArgs(args)
	}
	return p
}

// streamDecoder is the state of one upstream stream: at most one text or
// reasoning block open, tool calls buffered until their item is done.
type streamDecoder struct {
	started, finished, failed bool
	next                      int // the index of the next block
	open                      openBlock
	calls                     []*pendingCall
	sawToolCall               bool
	blocks                    map[string]bool // items that had a block
}

// itemKey identifies an item within a stream: its id, or its output index
// for an upstream that gives no ids.
func itemKey(id string, outputIndex int) string {
	if id != "" {
		return id
	}
	return "#" + strconv.Itoa(outputIndex)
}

// Decode reads one event.
func (d *streamDecoder) Decode(name string, data []byte, emit func(conv.Event)) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "[DONE]" || d.finished || d.failed {
		return nil
	}
	var ev wireEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		if name != "" && !handled(name) {
			return nil // an event type this codec does not read
		}
		return fmt.Errorf("responses stream: %s event: %w", cmp.Or(name, "unnamed"), err)
	}
	typ := cmp.Or(ev.Type, name)
	if !handled(typ) {
		return nil
	}
	if typ != "error" && typ != "response.failed" {
		d.start(ev.Response, emit)
	}
	key := itemKey(ev.ItemID, ev.OutputIndex)
	switch typ {
	case "response.output_item.added":
		if ev.Item != nil {
			d.itemAdded(ev.Item, ev.OutputIndex, emit)
		}
	case "response.output_text.delta", "response.refusal.delta":
		d.text(key, ev.Delta, emit)
	case "response.reasoning_summary_text.delta":
		d.reasoning(key, ev.ItemID, ev.Delta, srcSummary, ev.SummaryIndex, emit)
	case "response.reasoning_text.delta":
		d.reasoning(key, ev.ItemID, ev.Delta, srcRaw, ev.ContentIndex, emit)
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		d.call(key, ev.OutputIndex).args.WriteString(ev.Delta)
	case "response.function_call_arguments.done":
		c := d.call(key, ev.OutputIndex)
		c.final, c.hasFinal = ev.Arguments, true
	case "response.custom_tool_call_input.done":
		c := d.call(key, ev.OutputIndex)
		c.final, c.hasFinal = ev.Input, true
	case "response.output_item.done":
		if ev.Item != nil {
			d.itemDone(ev.Item, ev.OutputIndex, emit)
		}
	case "response.completed", "response.incomplete":
		d.finish(ev.Response, emit)
	case "response.failed":
		se := &conv.StreamError{Type: "upstream_error", Message: "the upstream response failed"}
		if ev.Response != nil && ev.Response.Error != nil {
			se = ev.Response.Error.streamError()
		}
		d.fail(se, emit)
	case "error":
		se := &conv.StreamError{Type: rawString(ev.Code), Message: ev.Message}
		if ev.Error != nil {
			se = ev.Error.streamError()
		}
		d.fail(se, emit)
	}
	return nil
}

// start emits EvStart once, before anything else.
func (d *streamDecoder) start(resp *wireResponse, emit func(conv.Event)) {
	if d.started {
		return
	}
	d.started = true
	ev := conv.Event{Type: conv.EvStart}
	if resp != nil {
		ev.ID, ev.Model = resp.ID, resp.Model
	}
	emit(ev)
}

// fail emits an upstream's error; the stream is over.
func (d *streamDecoder) fail(se *conv.StreamError, emit func(conv.Event)) {
	if se.Type == "" {
		se.Type = "upstream_error"
	}
	d.failed = true
	emit(conv.Event{Type: conv.EvError, Err: se})
}

// openNew starts a text or reasoning block for item key.
func (d *streamDecoder) openNew(kind blockKind, key, itemID string, emit func(conv.Event)) {
	d.closeOpen(emit)
	p := conv.Part{Kind: conv.PartText}
	if kind == kindReasoning {
		p = conv.Part{Kind: conv.PartReasoning, ItemID: itemID}
	}
	d.open = openBlock{kind: kind, index: d.next, key: key}
	d.next++
	if d.blocks == nil {
		d.blocks = make(map[string]bool)
	}
	d.blocks[key] = true
	emit(conv.Event{Type: conv.EvBlockStart, Index: d.open.index, Part: p})
}

// closeOpen stops the open text or reasoning block, if any.
func (d *streamDecoder) closeOpen(emit func(conv.Event)) {
	d.closeWith(conv.Part{}, emit)
}

// closeWith stops the open block; p carries a reasoning block's final
// Encrypted and ItemID.
func (d *streamDecoder) closeWith(p conv.Part, emit func(conv.Event)) {
	switch d.open.kind {
	case kindNone:
		return
	case kindText:
		p = conv.Part{Kind: conv.PartText}
	case kindReasoning:
		p.Kind = conv.PartReasoning
	}
	emit(conv.Event{Type: conv.EvBlockStop, Index: d.open.index, Part: p})
	d.open = openBlock{}
}

// text adds a text delta of message item key.
func (d *streamDecoder) text(key, delta string, emit func(conv.Event)) {
	if d.open.kind != kindText || d.open.key != key {
		d.openNew(kindText, key, "", emit)
	}
	if delta != "" {
		emit(conv.Event{Type: conv.EvDelta, Index: d.open.index, Text: delta})
	}
}

// reasoning adds a reasoning delta of item key: summary text or raw
// reasoning text (src), part its summary or content index. A new part
// is set off by a blank line, as reasoningText joins them.
func (d *streamDecoder) reasoning(key, itemID, delta string, src uint8, part int, emit func(conv.Event)) {
	if d.open.kind != kindReasoning || d.open.key != key {
		d.openNew(kindReasoning, key, itemID, emit)
	}
	o := &d.open
	if delta == "" || (o.source != srcNone && o.source != src) {
		return
	}
	if o.hasText && part != o.part {
		delta = "\n\n" + delta
	}
	o.source, o.part, o.hasText = src, part, true
	emit(conv.Event{Type: conv.EvDelta, Index: o.index, Text: delta})
}

// call is the pending call of item key, created when its first event
// arrives (arguments may come before the item is announced).
func (d *streamDecoder) call(key string, outputIndex int) *pendingCall {
	for _, c := range d.calls {
		if c.key == key {
			return c
		}
	}
	c := &pendingCall{key: key, outputIndex: outputIndex}
	d.calls = append(d.calls, c)
	return c
}

// itemAdded handles output_item.added: a reasoning item opens its block,
// a tool call starts buffering (and ends the text before it).
func (d *streamDecoder) itemAdded(it *wireItem, outputIndex int, emit func(conv.Event)) {
	key := itemKey(it.ID, outputIndex)
	switch it.Type {
	case "reasoning":
		d.openNew(kindReasoning, key, it.ID, emit)
	case "function_call", "custom_tool_call":
		d.closeOpen(emit)
		d.call(key, outputIndex).fill(it)
	}
}

// itemDone handles output_item.done: it stops the item's block, giving the
// item's content when no delta carried it, or emits a complete tool call.
func (d *streamDecoder) itemDone(it *wireItem, outputIndex int, emit func(conv.Event)) {
	key := itemKey(it.ID, outputIndex)
	switch it.Type {
	case "message":
		if d.open.kind == kindText && d.open.key == key {
			d.closeOpen(emit)
			return
		}
		if t := messageText(it); t != "" && !d.blocks[key] {
			d.text(key, t, emit)
			d.closeOpen(emit)
		}
	case "reasoning":
		if d.open.kind != kindReasoning || d.open.key != key {
			if d.blocks[key] {
				return // its block was cut short by another item
			}
			d.openNew(kindReasoning, key, it.ID, emit)
		}
		p := reasoningPart(it, false)
		if !d.open.hasText && p.Text != "" {
			emit(conv.Event{Type: conv.EvDelta, Index: d.open.index, Text: p.Text})
		}
		d.closeWith(conv.Part{Encrypted: p.Encrypted, ItemID: p.ItemID}, emit)
	case "function_call", "custom_tool_call":
		c := d.call(key, outputIndex)
		c.fill(it)
		d.emitCall(c, emit)
	}
}

// emitCall emits a complete tool-call block and forgets the pending call.
func (d *streamDecoder) emitCall(c *pendingCall, emit func(conv.Event)) {
	d.calls = slices.DeleteFunc(d.calls, func(x *pendingCall) bool { return x == c })
	d.emitPart(c.part(), emit)
}

// emitPart emits one complete block holding p.
func (d *streamDecoder) emitPart(p conv.Part, emit func(conv.Event)) {
	d.closeOpen(emit)
	i := d.next
	d.next++
	head := conv.Part{Kind: p.Kind, CallID: p.CallID, Name: p.Name, Namespace: p.Namespace, Custom: p.Custom, ItemID: p.ItemID}
	emit(conv.Event{Type: conv.EvBlockStart, Index: i, Part: head})
	switch {
	case p.Kind == conv.PartToolCall:
		d.sawToolCall = true
		emit(conv.Event{Type: conv.EvDelta, Index: i, Text: p.Args})
	case p.Text != "":
		emit(conv.Event{Type: conv.EvDelta, Index: i, Text: p.Text})
	}
	stop := conv.Part{Kind: p.Kind}
	if p.Kind == conv.PartReasoning {
		stop.Encrypted, stop.ItemID = p.Encrypted, p.ItemID
	}
	emit(conv.Event{Type: conv.EvBlockStop, Index: i, Part: stop})
}

// flushCalls emits the calls still pending, in output order, completed
// from resp's output when it has them.
func (d *streamDecoder) flushCalls(resp *wireResponse, emit func(conv.Event)) {
	slices.SortStableFunc(d.calls, func(a, b *pendingCall) int { return cmp.Compare(a.outputIndex, b.outputIndex) })
	for len(d.calls) > 0 {
		c := d.calls[0]
		if resp != nil {
			for i := range resp.Output {
				it := &resp.Output[i]
				if itemKey(it.ID, i) == c.key {
					c.fill(it)
				}
			}
		}
		d.emitCall(c, emit)
	}
}

// finish handles response.completed / response.incomplete: what is open
// is closed, pending calls emitted, then EvFinish with the final usage. An
// upstream that streamed no item gets its output replayed from resp.
func (d *streamDecoder) finish(resp *wireResponse, emit func(conv.Event)) {
	d.closeOpen(emit)
	if d.next == 0 && len(d.calls) == 0 && resp != nil {
		parts, _ := outputParts(resp.Output)
		for _, p := range parts {
			d.emitPart(p, emit)
		}
	}
	d.flushCalls(resp, emit)
	ev := conv.Event{Type: conv.EvFinish, Stop: stopReason(resp, d.sawToolCall)}
	if resp != nil {
		ev.Usage = resp.Usage.usage()
	}
	d.finished = true
	emit(ev)
}

// End closes a stream. One that ended without response.completed (or
// .incomplete) gets its open block closed and its pending calls emitted,
// and is reported incomplete; after an error nothing more is emitted.
func (d *streamDecoder) End(emit func(conv.Event)) bool {
	if d.finished {
		return true
	}
	if d.failed {
		return false
	}
	d.closeOpen(emit)
	d.flushCalls(nil, emit)
	return false
}
