package chat

import (
	"encoding/json"
	"fmt"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// requestDecoder reads a Chat request body once. Its members match
// wireRequest's without regard to case, as encoding/json matched them;
// a member not spelled as modeled also travels in Extra, as it did.
type requestDecoder struct {
	rd    *conv.Reader
	w     wireRequest // Messages unused: msgs holds them
	msgs  []*reqMessage
	extra map[string]json.RawMessage
	// typeErr is the first member of the wrong type, in the body's
	// order; encoding/json reported the first one once the body was read.
	typeErr error
}

// reqMessage is a message as read, its content already read into parts.
type reqMessage struct {
	wireMessage
	content chatContent
}

// chatContent is a message's content as read.
type chatContent struct{ conv.Content[wirePart] }

func (d *requestDecoder) read() error {
	if err := d.rd.Body(d.member, "body is not a JSON object"); err != nil {
		return err
	}
	return d.typeErr
}

// member reads one top-level member.
func (d *requestDecoder) member(key []byte) error {
	name := string(key)
	if modeled[name] {
		return d.checked(d.rd, name)
	}
	raw, err := d.rd.Raw()
	if err != nil {
		return err
	}
	if d.extra == nil {
		d.extra = map[string]json.RawMessage{}
	}
	d.extra[name] = raw
	if f, ok := conv.FoldKey(key); ok && modeled[string(f)] {
		return d.checked(conv.NewReader(raw), string(f))
	}
	return nil
}

// checked reads modeled member name from rd; one of the wrong type is
// skipped (and so checked to be JSON) and its error kept.
func (d *requestDecoder) checked(rd *conv.Reader, name string) error {
	refused, err := rd.Try(func() error { return d.field(rd, name) })
	if refused != nil && err == nil && d.typeErr == nil {
		d.typeErr = fmt.Errorf("%s: %w", name, refused)
	}
	return err
}

func (d *requestDecoder) field(rd *conv.Reader, name string) (err error) {
	w := &d.w
	switch name {
	case "model":
		return rd.String(&w.Model)
	case "messages":
		d.msgs = nil
		return rd.Array(func(int) error {
			m := &reqMessage{}
			d.msgs = append(d.msgs, m)
			return readMessage(rd, m)
		})
	case "tools":
		w.Tools = nil
		return rd.Array(func(int) error {
			w.Tools = append(w.Tools, wireTool{})
			return readTool(rd, &w.Tools[len(w.Tools)-1])
		})
	case "tool_choice":
		w.ToolChoice, err = rd.Raw()
	case "parallel_tool_calls":
		err = rd.BoolPtr(&w.ParallelToolCalls)
	case "max_completion_tokens":
		err = rd.Int64(&w.MaxCompletionTokens)
	case "max_tokens":
		err = rd.Int64(&w.MaxTokens)
	case "temperature":
		err = rd.Float64(&w.Temperature)
	case "top_p":
		err = rd.Float64(&w.TopP)
	case "stop":
		w.Stop, err = rd.Raw()
	case "reasoning_effort":
		err = rd.String(&w.ReasoningEffort)
	case "user":
		err = rd.String(&w.User)
	case "prompt_cache_key":
		err = rd.String(&w.PromptCacheKey)
	case "stream":
		err = rd.Bool(&w.Stream)
	case "stream_options":
		err = d.streamOptions(rd)
	}
	return err
}

func (d *requestDecoder) streamOptions(rd *conv.Reader) error {
	return conv.ObjectInto(rd, &d.w.StreamOptions, func(key string) (bool, error) {
		if key == "include_usage" {
			return true, rd.Bool(&d.w.StreamOptions.IncludeUsage)
		}
		return false, nil
	})
}

func readMessage(rd *conv.Reader, m *reqMessage) error {
	return readMessageOf(rd, &m.wireMessage, func() error { return m.content.read(rd) })
}

// readMessageOf reads a message's members into m, its content with
// content: a request's into parts at once, an answer's raw.
func readMessageOf(rd *conv.Reader, m *wireMessage, content func() error) error {
	return rd.Fields(func(key string) (ok bool, err error) {
		switch key {
		case "role":
			return true, rd.String(&m.Role)
		case "content":
			return true, content()
		case "reasoning_content":
			return true, rd.StringPtr(&m.ReasoningContent)
		case "reasoning":
			m.Reasoning, err = rd.Raw()
			return true, err
		case "refusal":
			return true, rd.StringPtr(&m.Refusal)
		case "tool_calls":
			return true, readSlice(rd, &m.ToolCalls, func(c *wireToolCall) error { return readToolCall(rd, c) })
		case "tool_call_id":
			return true, rd.String(&m.ToolCallID)
		}
		return false, nil
	})
}

func readToolCall(rd *conv.Reader, c *wireToolCall) error {
	return rd.Fields(func(key string) (ok bool, err error) {
		switch key {
		case "index":
			var n *int64
			if err = rd.Int64(&n); err == nil && n != nil && int64(int(*n)) == *n {
				i := int(*n)
				c.Index = &i
			} else if err == nil {
				c.Index = nil
			}
			return true, err
		case "id":
			return true, rd.String(&c.ID)
		case "type":
			return true, rd.String(&c.Type)
		case "function":
			return true, rd.Fields(func(key string) (ok bool, err error) {
				switch key {
				case "name":
					return true, rd.String(&c.Function.Name)
				case "arguments":
					c.Function.Arguments, err = rd.Raw()
					return true, err
				}
				return false, nil
			})
		case "custom":
			return true, conv.ObjectInto(rd, &c.Custom, func(key string) (bool, error) {
				switch key {
				case "name":
					return true, rd.String(&c.Custom.Name)
				case "input":
					return true, rd.String(&c.Custom.Input)
				}
				return false, nil
			})
		}
		return false, nil
	})
}

func readTool(rd *conv.Reader, t *wireTool) error {
	return rd.Fields(func(key string) (ok bool, err error) {
		switch key {
		case "type":
			return true, rd.String(&t.Type)
		case "function":
			return true, conv.ObjectInto(rd, &t.Function, func(key string) (ok bool, err error) {
				f := t.Function
				switch key {
				case "name":
					return true, rd.String(&f.Name)
				case "description":
					return true, rd.String(&f.Description)
				case "parameters":
					f.Parameters, err = rd.Raw()
					return true, err
				case "strict":
					return true, rd.BoolPtr(&f.Strict)
				}
				return false, nil
			})
		case "custom":
			return true, conv.ObjectInto(rd, &t.Custom, func(key string) (bool, error) {
				if key == "name" {
					return true, rd.String(&t.Custom.Name)
				}
				return false, nil
			})
		}
		return false, nil
	})
}

// read reads a message's content. One that is neither a string nor an
// array of parts is the message's error when it is translated; here it
// is skipped.
func (c *chatContent) read(rd *conv.Reader) error {
	return c.Read(rd, readPart, "content")
}

func readPart(rd *conv.Reader, p *wirePart) error {
	return rd.Fields(func(key string) (ok bool, err error) {
		switch key {
		case "type":
			return true, rd.String(&p.Type)
		case "text":
			return true, rd.String(&p.Text)
		case "refusal":
			return true, rd.String(&p.Refusal)
		case "image_url":
			p.ImageURL, err = rd.Raw()
			return true, err
		case "file":
			return true, conv.ObjectInto(rd, &p.File, func(key string) (bool, error) {
				f := p.File
				switch key {
				case "file_data":
					return true, rd.String(&f.FileData)
				case "file_id":
					return true, rd.String(&f.FileID)
				case "filename":
					return true, rd.String(&f.Filename)
				}
				return false, nil
			})
		}
		return false, nil
	})
}

// readResponse reads a non-streamed answer into w in one pass, with the
// values json.Unmarshal would give (TestReadResponseIsUnmarshal): the
// answer was decoded by encoding/json, which checks the whole body before
// it decodes, then its content again.
func readResponse(body []byte, w *wireResponse) error {
	return readDoc(body, func(rd *conv.Reader, key string) (bool, error) {
		switch key {
		case "id":
			return true, rd.String(&w.ID)
		case "model":
			return true, rd.String(&w.Model)
		case "choices":
			return true, readSlice(rd, &w.Choices, func(c *wireChoice) error { return readChoice(rd, c) })
		case "usage":
			return true, conv.ObjectInto(rd, &w.Usage, func(key string) (bool, error) { return readUsage(rd, w.Usage, key) })
		case "error":
			return true, readError(rd, &w.Error)
		}
		return false, nil
	})
}

// readChunk reads a stream chunk into c in one pass, with the values
// json.Unmarshal would give (TestReadChunkIsUnmarshal): a translated
// stream reads one chunk per event, and encoding/json's reflection was
// the largest part of that (bench/NOTES.md, The last misses).
func readChunk(data []byte, c *wireChunk) error {
	return readDoc(data, func(rd *conv.Reader, key string) (bool, error) {
		switch key {
		case "id":
			return true, rd.String(&c.ID)
		case "model":
			return true, rd.String(&c.Model)
		case "choices":
			return true, readSlice(rd, &c.Choices, func(ch *wireChunkChoice) error { return readChunkChoice(rd, ch) })
		case "usage":
			return true, conv.ObjectInto(rd, &c.Usage, func(key string) (bool, error) { return readUsage(rd, c.Usage, key) })
		case "error":
			return true, readError(rd, &c.Error)
		}
		return false, nil
	})
}

// readDoc reads a whole document's members with member, as json.Unmarshal
// reads it into a struct: a null leaves the struct as it is, anything
// after the value is an error.
func readDoc(data []byte, member func(rd *conv.Reader, key string) (bool, error)) error {
	rd := conv.NewReader(data)
	if err := rd.Fields(func(key string) (bool, error) { return member(rd, key) }); err != nil {
		return err
	}
	return rd.End()
}

func readChunkChoice(rd *conv.Reader, ch *wireChunkChoice) error {
	return rd.Fields(func(key string) (ok bool, err error) {
		switch key {
		case "index":
			n := int64(ch.Index)
			err = readInt(rd, &n)
			ch.Index = int(n)
			return true, err
		case "delta":
			return true, readDelta(rd, &ch.Delta)
		case "finish_reason":
			return true, rd.StringPtr(&ch.FinishReason)
		case "usage":
			return true, conv.ObjectInto(rd, &ch.Usage, func(key string) (bool, error) { return readUsage(rd, ch.Usage, key) })
		}
		return false, nil
	})
}

// readDelta reads what a chunk adds to the message.
func readDelta(rd *conv.Reader, d *wireDelta) error {
	return rd.Fields(func(key string) (ok bool, err error) {
		switch key {
		case "content":
			return true, rd.StringPtr(&d.Content)
		case "reasoning_content":
			return true, rd.StringPtr(&d.ReasoningContent)
		case "reasoning":
			d.Reasoning, err = rd.Raw()
			return true, err
		case "tool_calls":
			return true, readSlice(rd, &d.ToolCalls, func(c *wireToolCall) error { return readToolCall(rd, c) })
		}
		return false, nil
	})
}

// readError reads an error object into *e (nil for null).
func readError(rd *conv.Reader, e **wireError) error {
	return conv.ObjectInto(rd, e, func(key string) (ok bool, err error) {
		switch key {
		case "message":
			return true, rd.String(&(*e).Message)
		case "type":
			return true, rd.String(&(*e).Type)
		case "code":
			(*e).Code, err = rd.Raw()
			return true, err
		}
		return false, nil
	})
}

// readSlice reads an array into *s as json.Unmarshal does: a null makes
// it nil; otherwise element i is read over what *s held at i (within its
// capacity: a repeated member reads over the earlier one's elements), and
// *s ends as long as the array.
func readSlice[T any](rd *conv.Reader, s *[]T, read func(*T) error) error {
	if null, err := rd.Null(); null || err != nil {
		*s = nil
		return err
	}
	if *s == nil {
		*s = []T{} // an empty array is an empty slice, not nil
	}
	*s = (*s)[:0]
	return rd.Array(func(i int) error {
		if i < cap(*s) {
			*s = (*s)[:i+1]
		} else {
			var zero T
			*s = append(*s, zero)
		}
		return read(&(*s)[i])
	})
}

func readChoice(rd *conv.Reader, c *wireChoice) error {
	return rd.Fields(func(key string) (ok bool, err error) {
		switch key {
		case "message":
			return true, readAnswerMessage(rd, &c.Message)
		case "finish_reason":
			return true, rd.String(&c.FinishReason)
		}
		return false, nil
	})
}

// readAnswerMessage reads an answer's message; its content stays raw for
// contentParts.
func readAnswerMessage(rd *conv.Reader, m *wireMessage) error {
	return readMessageOf(rd, m, func() (err error) {
		m.Content, err = rd.Raw()
		return err
	})
}

// ReadUsage reads a usage object (conv.UsageReader).
func (u *wireUsage) ReadUsage(rd *conv.Reader) error {
	return rd.Fields(func(key string) (bool, error) { return readUsage(rd, u, key) })
}

// readUsage reads member key of a usage object.
func readUsage(rd *conv.Reader, u *wireUsage, key string) (bool, error) {
	switch key {
	case "prompt_tokens":
		return true, readInt(rd, &u.PromptTokens)
	case "completion_tokens":
		return true, readInt(rd, &u.CompletionTokens)
	case "prompt_tokens_details":
		return true, conv.ObjectInto(rd, &u.PromptTokensDetails, func(key string) (bool, error) {
			switch key {
			case "cached_tokens":
				return true, readInt(rd, &u.PromptTokensDetails.CachedTokens)
			case "cache_write_tokens":
				return true, readInt(rd, &u.PromptTokensDetails.CacheWriteTokens)
			}
			return false, nil
		})
	case "completion_tokens_details":
		return true, conv.ObjectInto(rd, &u.CompletionTokensDetails, func(key string) (bool, error) {
			if key == "reasoning_tokens" {
				return true, readInt(rd, &u.CompletionTokensDetails.ReasoningTokens)
			}
			return false, nil
		})
	case "prompt_cache_hit_tokens":
		return true, readInt(rd, &u.PromptCacheHitTokens)
	case "cached_tokens":
		return true, readInt(rd, &u.CachedTokens)
	}
	return false, nil
}

// readInt reads an integer into *dst; a null leaves it as it was.
func readInt(rd *conv.Reader, dst *int64) error {
	var p *int64
	if err := rd.Int64(&p); err != nil || p == nil {
		return err
	}
	*dst = *p
	return nil
}
