package responses

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// memberOrder is the order the modeled members are translated and their
// errors reported in, whatever the body's order.
var memberOrder = []string{
	"model", "stream", "parallel_tool_calls", "max_output_tokens", "temperature", "top_p", "user",
	"prompt_cache_key", "previous_response_id", "reasoning", "tools", "tool_choice", "instructions", "input",
}

// requestDecoder reads a request body once into what DecodeRequest
// translates.
type requestDecoder struct {
	rd        *conv.Reader
	r         *conv.Request
	reasoning struct {
		Effort  *string
		Summary string
	}
	tools        []wireTool
	choice       *wireToolChoice
	instructions *itemsOrText
	input        *itemsOrText
	extra        map[string]json.RawMessage
	// errs holds, by member, why its last occurrence was refused; a
	// later duplicate replaces it as it replaces the value.
	errs conv.Refusals
}

// itemsOrText is input or instructions as read: a string or items.
type itemsOrText struct {
	isText bool
	text   string
	items  []*reqItem // each on its own: an item is large, and a growing slice of them would be copied
}

// reqItem is an input item as read, its content and output already
// read into parts.
type reqItem struct {
	wireItem
	content, output readContent
	args            string
}

// readContent is a content or output member as read.
type readContent struct{ conv.Content[wirePart] }

func (d *requestDecoder) read() error {
	return d.rd.Body(d.checked, "the body is not a JSON object")
}

// checked reads one top-level member; a member it refuses is skipped (and
// so checked to be JSON) and its error kept for translate.
func (d *requestDecoder) checked(key []byte) error {
	name := string(key)
	return d.errs.Read(d.rd, name, func() error { return d.member(name) })
}

func (d *requestDecoder) member(name string) error {
	rd, r := d.rd, d.r
	var err error
	switch name {
	case "model":
		err = rd.String(&r.Model)
	case "stream":
		err = rd.Bool(&r.Stream)
	case "parallel_tool_calls":
		err = rd.BoolPtr(&r.ParallelToolCalls)
	case "max_output_tokens":
		err = rd.Int64(&r.MaxTokens)
	case "temperature":
		err = rd.Float64(&r.Temperature)
	case "top_p":
		err = rd.Float64(&r.TopP)
	case "user":
		err = rd.String(&r.User)
	case "prompt_cache_key":
		err = rd.String(&r.PromptCacheKey)
	case "previous_response_id":
		err = rd.String(&r.PreviousResponseID)
	case "reasoning":
		err = d.readReasoning()
	case "tools":
		d.tools = nil
		err = rd.Array(func(int) error {
			var t wireTool
			err := readTool(rd, &t)
			d.tools = append(d.tools, t)
			return err
		})
	case "tool_choice":
		d.choice, err = readToolChoice(rd)
	case "instructions":
		if d.instructions, err = readItemsOrText(rd); err != nil {
			return fmt.Errorf("instructions: neither a string nor an array of messages: %w", err)
		}
		return nil
	case "input":
		if d.input, err = readItemsOrText(rd); err != nil {
			return fmt.Errorf("input is neither a string nor an array of items: %w", err)
		}
		return nil
	default:
		raw, err := rd.Raw()
		if err != nil {
			return err
		}
		if d.extra == nil {
			d.extra = make(map[string]json.RawMessage)
		}
		d.extra[name] = raw
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func (d *requestDecoder) readReasoning() error {
	rd := d.rd
	d.reasoning.Effort, d.reasoning.Summary = nil, ""
	return rd.Fields(func(key string) (bool, error) {
		switch key {
		case "effort":
			return true, rd.StringPtr(&d.reasoning.Effort)
		case "summary":
			return true, rd.String(&d.reasoning.Summary)
		}
		return false, nil
	})
}

func readTool(rd *conv.Reader, t *wireTool) error {
	return rd.Fields(func(key string) (ok bool, err error) {
		switch key {
		case "type":
			return true, rd.String(&t.Type)
		case "name":
			return true, rd.String(&t.Name)
		case "description":
			return true, rd.String(&t.Description)
		case "parameters":
			t.Parameters, err = rd.Raw()
			return true, err
		case "strict":
			return true, rd.BoolPtr(&t.Strict)
		case "format":
			t.Format, err = rd.Raw()
			return true, err
		case "tools":
			t.Tools = nil
			return true, rd.Array(func(int) error {
				var inner wireTool
				err := readTool(rd, &inner)
				t.Tools = append(t.Tools, inner)
				return err
			})
		}
		return false, nil
	})
}

func readToolChoice(rd *conv.Reader) (*wireToolChoice, error) {
	c := &wireToolChoice{}
	switch rd.Kind() {
	case 'n':
		return nil, rd.Skip()
	case '"':
		c.isText = true
		return c, rd.String(&c.text)
	}
	return c, rd.Fields(func(key string) (bool, error) {
		switch key {
		case "type":
			return true, rd.String(&c.Type)
		case "name":
			return true, rd.String(&c.Name)
		case "mode":
			return true, rd.String(&c.Mode)
		}
		return false, nil
	})
}

func readItemsOrText(rd *conv.Reader) (*itemsOrText, error) {
	v := &itemsOrText{}
	switch rd.Kind() {
	case 'n':
		return nil, rd.Skip()
	case '"':
		v.isText = true
		return v, rd.String(&v.text)
	}
	return v, rd.Array(func(int) error {
		it := &reqItem{}
		v.items = append(v.items, it)
		return readItem(rd, it)
	})
}

func readItem(rd *conv.Reader, it *reqItem) error {
	return rd.Fields(func(key string) (bool, error) {
		switch key {
		case "type":
			return true, rd.String(&it.Type)
		case "id":
			return true, rd.String(&it.ID)
		case "role":
			return true, rd.String(&it.Role)
		case "content":
			return true, it.content.read(rd)
		case "call_id":
			return true, rd.String(&it.CallID)
		case "name":
			return true, rd.String(&it.Name)
		case "namespace":
			return true, rd.String(&it.Namespace)
		case "arguments":
			return true, readArgs(rd, &it.args)
		case "input":
			return true, rd.String(&it.Input)
		case "output":
			return true, it.output.read(rd)
		case "summary":
			return true, readTexts(rd, &it.Summary)
		case "encrypted_content":
			return true, rd.StringPtr(&it.Encrypted)
		}
		return false, nil
	})
}

// readArgs reads a function_call's arguments: a JSON string as the API
// defines it, or (leniently) an object written inline, kept as its text.
func readArgs(rd *conv.Reader, dst *string) error {
	switch rd.Kind() {
	case '"':
		return rd.String(dst)
	case 'n':
		*dst = ""
		return rd.Skip()
	}
	raw, err := rd.Raw()
	*dst = string(raw)
	return err
}

func readTexts(rd *conv.Reader, dst *[]wireText) error {
	if null, err := rd.Null(); null || err != nil {
		*dst = nil
		return err
	}
	out := []wireText{}
	err := rd.Array(func(int) error {
		var t wireText
		err := rd.Fields(func(key string) (bool, error) {
			switch key {
			case "type":
				return true, rd.String(&t.Type)
			case "text":
				return true, rd.String(&t.Text)
			}
			return false, nil
		})
		out = append(out, t)
		return err
	})
	*dst = out
	return err
}

// read reads a content or output member. One that is neither a string
// nor an array of parts is an error of the item it belongs to, only when
// the item is translated: it is skipped here.
func (c *readContent) read(rd *conv.Reader) error {
	return c.Read(rd, readPart, "content is neither a string nor an array of parts")
}

func readPart(rd *conv.Reader, p *wirePart) error {
	return rd.Fields(func(key string) (bool, error) {
		var dst *string
		switch key {
		case "type":
			dst = &p.Type
		case "text":
			dst = &p.Text
		case "refusal":
			dst = &p.Refusal
		case "image_url":
			dst = &p.ImageURL
		case "file_id":
			dst = &p.FileID
		case "file_data":
			dst = &p.FileData
		case "file_url":
			dst = &p.FileURL
		case "filename":
			dst = &p.Filename
		default:
			return false, nil
		}
		return true, rd.String(dst)
	})
}

// parts is what contentParts makes of the member: a string is one text
// part, empty texts are left out, dropped collects the part types that
// cannot be translated.
func (c *readContent) parts(dropped *[]string) ([]conv.Part, error) {
	return c.Parts(func(wps []wirePart) ([]conv.Part, error) { return partsOf(wps, dropped) })
}

// reasoningText is a reasoning item's text (see reasoningText).
func (ri *reqItem) reasoningText() string {
	var b strings.Builder
	join := func(t string) {
		if t == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(t)
	}
	for _, s := range ri.Summary {
		join(s.Text)
	}
	if b.Len() > 0 || !ri.content.IsArray {
		return b.String()
	}
	for _, p := range ri.content.Wire {
		join(p.Text)
	}
	return b.String()
}
