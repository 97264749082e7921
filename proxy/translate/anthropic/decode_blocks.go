package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// content reads a message's content: a string or an array of blocks.
// Empty text is left out.
func (d *requestDecoder) content() ([]conv.Part, error) {
	rd := d.rd
	switch rd.Kind() {
	case 'n':
		return nil, rd.Skip()
	case '"':
		var s string
		if err := rd.String(&s); err != nil || s == "" {
			return nil, err
		}
		return []conv.Part{{Kind: conv.PartText, Text: s}}, nil
	case '[':
	default:
		if err := rd.Skip(); err != nil {
			return nil, err
		}
		return nil, errors.New("content is neither a string nor an array of blocks")
	}
	parts := []conv.Part{}
	err := rd.Array(func(int) error {
		p, ok, err := d.block()
		if ok {
			parts = append(parts, p)
		}
		return err
	})
	return parts, err
}

// reqBlock is a content block of a request as read: a wireBlock, with a
// tool result's content already read when its type came first (else it
// is read from Content at the end).
type reqBlock struct {
	wireBlock
	result     []conv.Part
	resultRead bool
}

// block reads one content block and turns it into a part; ok is false for
// a block left out (empty text, or a type no other protocol has, named in
// Dropped).
func (d *requestDecoder) block() (p conv.Part, ok bool, err error) {
	var b reqBlock
	if err := d.readBlock(&b); err != nil {
		return p, false, err
	}
	p, ok, err = d.blockPart(&b)
	if err != nil {
		return p, false, fmt.Errorf("%s block: %w", b.Type, err)
	}
	return p, ok, nil
}

func (d *requestDecoder) readBlock(b *reqBlock) error {
	rd := d.rd
	var field func(key []byte) error
	field = func(key []byte) (err error) {
		switch string(key) {
		case "type":
			return rd.String(&b.Type)
		case "text":
			return rd.String(&b.Text)
		case "source":
			b.Source, err = d.readSource()
			return err
		case "title":
			return rd.String(&b.Title)
		case "id":
			return rd.String(&b.ID)
		case "name":
			return rd.String(&b.Name)
		case "input":
			b.Input, err = rd.Raw()
			return err
		case "tool_use_id":
			return rd.String(&b.ToolUseID)
		case "content":
			return d.blockContent(b)
		case "is_error":
			return rd.Bool(&b.IsError)
		case "thinking":
			return rd.String(&b.Thinking)
		case "signature":
			return rd.String(&b.Signature)
		case "data":
			return rd.String(&b.Data)
		case "cache_control":
			b.CacheControl, err = rd.Raw()
			return err
		}
		if f, ok := conv.FoldKey(key); ok {
			return field(f)
		}
		return rd.Skip()
	}
	return d.rd.Object(field)
}

// blockContent reads a block's content: a tool result's straight into
// parts when the type came first (as every client sends it), else raw.
func (d *requestDecoder) blockContent(b *reqBlock) (err error) {
	if b.Type != "tool_result" {
		b.resultRead = false
		b.Content, err = d.rd.Raw()
		return err
	}
	b.Content = nil
	b.result, err = d.resultContent()
	b.resultRead = err == nil
	if err != nil {
		return fmt.Errorf("tool_result block: %w", err)
	}
	return nil
}

func (d *requestDecoder) readSource() (*wireSource, error) {
	rd := d.rd
	if null, err := rd.Null(); null || err != nil {
		return nil, err
	}
	s := &wireSource{}
	var field func(key []byte) error
	field = func(key []byte) (err error) {
		switch string(key) {
		case "type":
			return rd.String(&s.Type)
		case "media_type":
			return rd.String(&s.MediaType)
		case "data":
			return rd.String(&s.Data)
		case "url":
			return rd.String(&s.URL)
		case "content":
			s.Content, err = rd.Raw()
			return err
		}
		if f, ok := conv.FoldKey(key); ok {
			return field(f)
		}
		return rd.Skip()
	}
	return s, rd.Object(field)
}

func (d *requestDecoder) blockPart(b *reqBlock) (p conv.Part, ok bool, err error) {
	p.CacheControl = cacheControl(b.CacheControl)
	switch b.Type {
	case "text":
		p.Kind, p.Text = conv.PartText, b.Text
		return p, b.Text != "", nil
	case "image":
		p.Kind = conv.PartImage
		return p, d.source(&p, &b.wireBlock, "image"), nil
	case "document":
		p.Kind, p.Filename = conv.PartDocument, b.Title
		return p, d.source(&p, &b.wireBlock, "document"), nil
	case "tool_use":
		p.Kind, p.CallID, p.Name, p.Args = conv.PartToolCall, b.ID, b.Name, conv.CanonicalArgs(string(b.Input))
		return p, true, nil
	case "tool_result":
		p.Kind, p.CallID, p.IsError = conv.PartToolResult, b.ToolUseID, b.IsError
		p.Content = b.result
		if !b.resultRead {
			p.Content, err = d.sub(b.Content, d.resultContent)
		}
		return p, err == nil, err
	case "thinking":
		p.Kind, p.Text, p.Signature = conv.PartReasoning, b.Thinking, b.Signature
		return p, true, nil
	case "redacted_thinking":
		p.Kind, p.Redacted = conv.PartReasoning, b.Data
		return p, b.Data != "", nil
	}
	d.drop(b.Type + " block")
	return p, false, nil
}

// sub runs read over raw, a value read ahead of what says how to read it.
func (d *requestDecoder) sub(raw json.RawMessage, read func() ([]conv.Part, error)) ([]conv.Part, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	outer := d.rd
	d.rd = conv.NewReader(raw)
	defer func() { d.rd = outer }()
	return read()
}

// source fills an image's or a document's data from its source; false
// when the source is one no other protocol can take (a Files API id).
func (d *requestDecoder) source(p *conv.Part, b *wireBlock, what string) bool {
	s := b.Source
	if s == nil {
		d.drop(what + " without a source")
		return false
	}
	switch s.Type {
	case "base64":
		p.MediaType, p.Data = s.MediaType, s.Data
		return s.Data != ""
	case "url":
		p.URL = s.URL
		return s.URL != ""
	case "text":
		if what == "document" {
			p.MediaType, p.Text = "text/plain", s.Data
			return s.Data != ""
		}
	case "content":
		if what == "document" {
			p.MediaType, p.Text = "text/plain", d.joinedText(s.Content)
			return p.Text != ""
		}
	}
	d.drop(what + " source " + s.Type)
	return false
}

// joinedText is the text of a content document's content: a string or
// text blocks, joined by blank lines.
func (d *requestDecoder) joinedText(raw json.RawMessage) string {
	parts, err := d.sub(raw, d.content)
	if err != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if p.Kind == conv.PartText {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// resultContent reads a tool result's content: a string or text and image
// blocks (documents too, which the neutral model can carry).
func (d *requestDecoder) resultContent() ([]conv.Part, error) {
	parts, err := d.content()
	if err != nil {
		return nil, err
	}
	out := parts[:0]
	for _, p := range parts {
		switch p.Kind {
		case conv.PartText, conv.PartImage, conv.PartDocument:
			out = append(out, p)
		default:
			d.drop("tool_result " + p.Kind.String())
		}
	}
	return out, nil
}

// split reads object member name (thinking or output_config): its modeled
// members into the decoder, and the others into Extra under the same name
// (or nothing, when none are left), for an Anthropic upstream.
func (d *requestDecoder) split(name string) error {
	rd := d.rd
	delete(d.r.Extra, name)
	thinking := name == "thinking"
	if thinking {
		d.thinking.Type, d.thinking.BudgetTokens = "", 0
	} else {
		d.effort = ""
	}
	if null, err := rd.Null(); null || err != nil {
		return err
	}
	// read reads a modeled member k; false, without reading, when k is
	// not one.
	read := func(k string) (bool, error) {
		switch {
		case thinking && k == "type":
			return true, rd.String(&d.thinking.Type)
		case thinking && k == "budget_tokens":
			var n *int64
			err := rd.Int64(&n)
			if n != nil {
				d.thinking.BudgetTokens = *n
			}
			return true, err
		case !thinking && k == "effort":
			return true, rd.String(&d.effort)
		}
		return false, nil
	}
	var rest map[string]json.RawMessage
	err := rd.Object(func(key []byte) error {
		start := rd.Offset()
		modeled, err := read(string(key))
		exact := modeled
		if f, ok := conv.FoldKey(key); !modeled && ok {
			// encoding/json's match without regard to case; the member
			// still travels in Extra under its own name.
			modeled, err = read(string(f))
		}
		if !modeled {
			err = rd.Skip()
		}
		if err == nil && !exact {
			if rest == nil {
				rest = make(map[string]json.RawMessage)
			}
			rest[string(key)] = rd.RawSince(start)
		}
		return err
	})
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		d.setExtra(name, conv.Marshal(rest))
	}
	return nil
}

// metadata reads metadata.user_id as User; metadata itself stays in Extra.
func (d *requestDecoder) metadata() error {
	rd := d.rd
	start := rd.Offset()
	d.r.User = ""
	var field func(key []byte) error
	field = func(key []byte) error {
		if string(key) == "user_id" {
			return rd.String(&d.r.User)
		}
		if f, ok := conv.FoldKey(key); ok {
			return field(f)
		}
		return rd.Skip()
	}
	if err := rd.Object(field); err != nil {
		return err
	}
	d.setExtra("metadata", rd.RawSince(start))
	return nil
}
