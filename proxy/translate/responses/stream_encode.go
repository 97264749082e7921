package responses

import (
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// evHead starts every event a client is sent: its type and its place in
// the stream.
type evHead struct {
	Type string `json:"type"`
	Seq  int    `json:"sequence_number"`
}

// The events a client is sent, by shape.
type (
	evResponse struct {
		evHead
		Response outResponse `json:"response"`
	}
	evItem struct {
		evHead
		OutputIndex int `json:"output_index"`
		Item        any `json:"item"`
	}
	evContentPart struct {
		evHead
		ItemID       string  `json:"item_id"`
		OutputIndex  int     `json:"output_index"`
		ContentIndex int     `json:"content_index"`
		Part         outText `json:"part"`
	}
	evTextDelta struct {
		evHead
		ItemID       string `json:"item_id"`
		OutputIndex  int    `json:"output_index"`
		ContentIndex int    `json:"content_index"`
		Delta        string `json:"delta"`
	}
	evTextDone struct {
		evHead
		ItemID       string `json:"item_id"`
		OutputIndex  int    `json:"output_index"`
		ContentIndex int    `json:"content_index"`
		Text         string `json:"text"`
	}
	evSummaryPart struct {
		evHead
		ItemID       string      `json:"item_id"`
		OutputIndex  int         `json:"output_index"`
		SummaryIndex int         `json:"summary_index"`
		Part         summaryText `json:"part"`
	}
	evSummaryDelta struct {
		evHead
		ItemID       string `json:"item_id"`
		OutputIndex  int    `json:"output_index"`
		SummaryIndex int    `json:"summary_index"`
		Delta        string `json:"delta"`
	}
	evSummaryDone struct {
		evHead
		ItemID       string `json:"item_id"`
		OutputIndex  int    `json:"output_index"`
		SummaryIndex int    `json:"summary_index"`
		Text         string `json:"text"`
	}
	evArgsDelta struct {
		evHead
		ItemID      string `json:"item_id"`
		OutputIndex int    `json:"output_index"`
		Delta       string `json:"delta"`
	}
	evArgsDone struct {
		evHead
		ItemID      string `json:"item_id"`
		OutputIndex int    `json:"output_index"`
		Arguments   string `json:"arguments"`
	}
	evInputDone struct {
		evHead
		ItemID      string `json:"item_id"`
		OutputIndex int    `json:"output_index"`
		Input       string `json:"input"`
	}
)

// StreamEncoder writes a Responses stream for a client that sent req.
func (codec) StreamEncoder(req *conv.Request) conv.StreamEncoder {
	e := &streamEncoder{tok: newToken()}
	if req != nil {
		e.model, e.tools = req.Model, toolIndex(req.Tools)
	}
	return conv.ClientStream(req, e)
}

// encBlock is the block being written.
type encBlock struct {
	active      bool
	index       int       // its neutral index
	outIdx      int       // its output_index
	itemID      string    // its item's id
	part        conv.Part // what its EvBlockStart said
	buf         strings.Builder
	summaryOpen bool // reasoning: the summary part was announced
}

// streamEncoder is the state of one client stream. Codex needs
// response.created first, each item announced (output_item.added) before
// its deltas, the item's final form in output_item.done, and
// response.completed — carrying the usage and the whole output — at the
// end; a response cut by max tokens is response.completed with status
// "incomplete" (a response.incomplete event fails Codex's turn).
type streamEncoder struct {
	model      string
	tools      map[string]toolInfo
	tok        string // makes this response's ids
	id         string
	created    int64
	seq        int
	started    bool
	done       bool // response.completed or response.failed was sent
	output     []any
	open       encBlock
	startUsage conv.Usage
}

// head is the next event's head.
func (e *streamEncoder) head(typ string) evHead {
	h := evHead{Type: typ, Seq: e.seq}
	e.seq++
	return h
}

// Encode appends the client's events for ev.
func (e *streamEncoder) Encode(dst []byte, ev conv.Event) []byte {
	if e.done {
		return dst
	}
	dst = e.start(dst, ev)
	switch ev.Type {
	case conv.EvBlockStart:
		dst = e.closeOpen(dst)
		dst = e.blockStart(dst, ev)
	case conv.EvDelta:
		dst = e.delta(dst, ev)
	case conv.EvBlockStop:
		if e.open.active && e.open.index == ev.Index {
			dst = e.blockStop(dst, ev.Part)
		}
	case conv.EvFinish:
		dst = e.finish(dst, ev)
	case conv.EvError:
		code, msg := "upstream_error", "the upstream reported an error"
		if ev.Err != nil {
			code, msg = cmpOr(ev.Err.Type, code), cmpOr(ev.Err.Message, msg)
		}
		dst = e.fail(dst, code, msg)
	}
	return dst
}

// Fail ends a broken stream with response.failed, after closing an open
// text or reasoning item (an unfinished tool call is left out).
func (e *streamEncoder) Fail(dst []byte, msg string) []byte {
	if e.done {
		return dst
	}
	dst = e.start(dst, conv.Event{})
	return e.fail(dst, "upstream_error", msg)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// start sends response.created and response.in_progress once, before
// anything else (ev is the EvStart, or whatever came first).
func (e *streamEncoder) start(dst []byte, ev conv.Event) []byte {
	if e.started {
		return dst
	}
	e.started = true
	if ev.Type == conv.EvStart {
		e.id, e.startUsage = ev.ID, ev.Usage
		if e.model == "" {
			e.model = ev.Model
		}
	}
	if e.id == "" {
		e.id = "resp_" + e.tok
	}
	e.created = now().Unix()
	for _, typ := range []string{"response.created", "response.in_progress"} {
		dst = conv.AppendSSEJSON(dst, typ, evResponse{evHead: e.head(typ), Response: responseHead(e.id, e.model, e.created, "in_progress")})
	}
	return dst
}

// blockStart announces the item of a new block.
func (e *streamEncoder) blockStart(dst []byte, ev conv.Event) []byte {
	b := &e.open
	*b = encBlock{active: true, index: ev.Index, outIdx: len(e.output), part: ev.Part}
	var item any
	switch ev.Part.Kind {
	case conv.PartText:
		b.itemID = itemID("msg", e.tok, b.outIdx)
		item = messageItem(b.itemID, "in_progress", "")
	case conv.PartReasoning:
		b.itemID = cmpOr(ev.Part.ItemID, itemID("rs", e.tok, b.outIdx))
		item = outReasoning{ID: b.itemID, Type: "reasoning", Summary: []summaryText{}}
	case conv.PartToolCall:
		b.itemID = itemID(callPrefix(e.tools, ev.Part.Name), e.tok, b.outIdx)
		if b.part.CallID == "" {
			b.part.CallID = itemID("call", e.tok, b.outIdx)
		}
		item = callItem(b.part, b.itemID, "in_progress", e.tools)
	default:
		b.active = false
		return dst
	}
	const added = "response.output_item.added"
	dst = conv.AppendSSEJSON(dst, added, evItem{evHead: e.head(added), OutputIndex: b.outIdx, Item: item})
	if ev.Part.Kind == conv.PartText {
		const typ = "response.content_part.added"
		dst = conv.AppendSSEJSON(dst, typ, evContentPart{evHead: e.head(typ), ItemID: b.itemID, OutputIndex: b.outIdx, Part: outText{Type: "output_text", Annotations: []any{}}})
	}
	return dst
}

// delta streams text and reasoning as it comes; a tool call's arguments
// are kept for its stop.
func (e *streamEncoder) delta(dst []byte, ev conv.Event) []byte {
	b := &e.open
	if !b.active || b.index != ev.Index {
		return dst
	}
	b.buf.WriteString(ev.Text)
	switch b.part.Kind {
	case conv.PartText:
		const typ = "response.output_text.delta"
		dst = conv.AppendSSEJSON(dst, typ, evTextDelta{evHead: e.head(typ), ItemID: b.itemID, OutputIndex: b.outIdx, Delta: ev.Text})
	case conv.PartReasoning:
		if ev.Text == "" {
			return dst
		}
		if !b.summaryOpen {
			b.summaryOpen = true
			const typ = "response.reasoning_summary_part.added"
			dst = conv.AppendSSEJSON(dst, typ, evSummaryPart{evHead: e.head(typ), ItemID: b.itemID, OutputIndex: b.outIdx, Part: summaryText{Type: "summary_text"}})
		}
		const typ = "response.reasoning_summary_text.delta"
		dst = conv.AppendSSEJSON(dst, typ, evSummaryDelta{evHead: e.head(typ), ItemID: b.itemID, OutputIndex: b.outIdx, Delta: ev.Text})
	}
	return dst
}

// closeOpen stops a block left open (a defensive measure: decoders stop
// every block before the next starts).
func (e *streamEncoder) closeOpen(dst []byte) []byte {
	if !e.open.active {
		return dst
	}
	return e.blockStop(dst, conv.Part{})
}

// blockStop completes the open block's item; stop is what EvBlockStop said.
func (e *streamEncoder) blockStop(dst []byte, stop conv.Part) []byte {
	b := &e.open
	b.active = false
	text := b.buf.String()
	var item any
	switch b.part.Kind {
	case conv.PartText:
		dst = e.textDone(dst, text)
		item = messageItem(b.itemID, "completed", text)
	case conv.PartReasoning:
		dst = e.summaryDone(dst, text)
		p := b.part
		p.Signature, p.Redacted, p.Encrypted = cmpOr(stop.Signature, p.Signature), cmpOr(stop.Redacted, p.Redacted), cmpOr(stop.Encrypted, p.Encrypted)
		item = outReasoning{ID: b.itemID, Type: "reasoning", Summary: summaryOf(text), EncryptedContent: clientEncrypted(p)}
	case conv.PartToolCall:
		p := b.part
		p.Args = conv.CanonicalArgs(text)
		dst = e.argsDone(dst, p)
		item = callItem(p, b.itemID, "completed", e.tools)
	}
	const typ = "response.output_item.done"
	dst = conv.AppendSSEJSON(dst, typ, evItem{evHead: e.head(typ), OutputIndex: b.outIdx, Item: item})
	e.output = append(e.output, item)
	return dst
}

// textDone ends a text item's content.
func (e *streamEncoder) textDone(dst []byte, text string) []byte {
	b := &e.open
	const done = "response.output_text.done"
	dst = conv.AppendSSEJSON(dst, done, evTextDone{evHead: e.head(done), ItemID: b.itemID, OutputIndex: b.outIdx, Text: text})
	const partDone = "response.content_part.done"
	return conv.AppendSSEJSON(dst, partDone, evContentPart{evHead: e.head(partDone), ItemID: b.itemID, OutputIndex: b.outIdx, Part: outText{Type: "output_text", Text: text, Annotations: []any{}}})
}

// summaryDone ends a reasoning item's summary, when it had one.
func (e *streamEncoder) summaryDone(dst []byte, text string) []byte {
	b := &e.open
	if !b.summaryOpen {
		return dst
	}
	const done = "response.reasoning_summary_text.done"
	dst = conv.AppendSSEJSON(dst, done, evSummaryDone{evHead: e.head(done), ItemID: b.itemID, OutputIndex: b.outIdx, Text: text})
	const partDone = "response.reasoning_summary_part.done"
	return conv.AppendSSEJSON(dst, partDone, evSummaryPart{evHead: e.head(partDone), ItemID: b.itemID, OutputIndex: b.outIdx, Part: summaryText{Type: "summary_text", Text: text}})
}

// argsDone sends a tool call's arguments (a custom tool's input) whole.
func (e *streamEncoder) argsDone(dst []byte, p conv.Part) []byte {
	b := &e.open
	if e.tools[p.Name].custom {
		input := conv.CustomInput(p.Args)
		if input != "" {
			const typ = "response.custom_tool_call_input.delta"
			dst = conv.AppendSSEJSON(dst, typ, evArgsDelta{evHead: e.head(typ), ItemID: b.itemID, OutputIndex: b.outIdx, Delta: input})
		}
		const done = "response.custom_tool_call_input.done"
		return conv.AppendSSEJSON(dst, done, evInputDone{evHead: e.head(done), ItemID: b.itemID, OutputIndex: b.outIdx, Input: input})
	}
	const typ = "response.function_call_arguments.delta"
	dst = conv.AppendSSEJSON(dst, typ, evArgsDelta{evHead: e.head(typ), ItemID: b.itemID, OutputIndex: b.outIdx, Delta: p.Args})
	const done = "response.function_call_arguments.done"
	return conv.AppendSSEJSON(dst, done, evArgsDone{evHead: e.head(done), ItemID: b.itemID, OutputIndex: b.outIdx, Arguments: p.Args})
}

// finish sends response.completed: status completed, or incomplete when
// the model ran out of tokens, with the whole output and the final usage.
func (e *streamEncoder) finish(dst []byte, ev conv.Event) []byte {
	dst = e.closeOpen(dst)
	status, incomplete := finishStatus(ev.Stop)
	resp := responseHead(e.id, e.model, e.created, status)
	resp.IncompleteDetails = incomplete
	if len(e.output) > 0 {
		resp.Output = e.output
	}
	usage := ev.Usage
	if usage.IsZero() {
		usage = e.startUsage
	}
	resp.Usage = outUsageOf(usage)
	e.done = true
	const typ = "response.completed"
	return conv.AppendSSEJSON(dst, typ, evResponse{evHead: e.head(typ), Response: resp})
}

// fail sends response.failed with the output so far; an open text or
// reasoning item is completed first, an unfinished tool call dropped.
func (e *streamEncoder) fail(dst []byte, code, msg string) []byte {
	if e.open.active {
		if e.open.part.Kind == conv.PartToolCall {
			e.open.active = false
		} else {
			dst = e.blockStop(dst, conv.Part{})
		}
	}
	resp := responseHead(e.id, e.model, e.created, "failed")
	resp.Error = &outError{Code: code, Message: msg}
	if len(e.output) > 0 {
		resp.Output = e.output
	}
	e.done = true
	const typ = "response.failed"
	return conv.AppendSSEJSON(dst, typ, evResponse{evHead: e.head(typ), Response: resp})
}
