package anthropic

import (
	"encoding/json"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// wireBlock is a content block as read from a request, a response or a
// stream's content_block_start: the members of every type it carries.
type wireBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	Source       *wireSource     `json:"source"`
	Title        string          `json:"title"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"`
	IsError      bool            `json:"is_error"`
	Thinking     string          `json:"thinking"`
	Signature    string          `json:"signature"`
	Data         string          `json:"data"`
	CacheControl json.RawMessage `json:"cache_control"`
}

// wireSource is an image's or a document's source.
type wireSource struct {
	Type      string          `json:"type"`
	MediaType string          `json:"media_type"`
	Data      string          `json:"data"`
	URL       string          `json:"url"`
	Content   json.RawMessage `json:"content"` // a "content" document: a string or text blocks
}

// wireUsage is a usage object; members are pointers because a stream's
// message_delta reports only some of them.
type wireUsage struct {
	Input      *int64 `json:"input_tokens"`
	Output     *int64 `json:"output_tokens"`
	CacheRead  *int64 `json:"cache_read_input_tokens"`
	CacheWrite *int64 `json:"cache_creation_input_tokens"`
}

// ReadUsage reads a usage object (conv.UsageReader): a null member sets
// it to nil, as json.Unmarshal does.
func (w *wireUsage) ReadUsage(rd *conv.Reader) error {
	return rd.Fields(func(key string) (bool, error) {
		switch key {
		case "input_tokens":
			return true, rd.Int64(&w.Input)
		case "output_tokens":
			return true, rd.Int64(&w.Output)
		case "cache_read_input_tokens":
			return true, rd.Int64(&w.CacheRead)
		case "cache_creation_input_tokens":
			return true, rd.Int64(&w.CacheWrite)
		}
		return false, nil
	})
}

// all returns u with every member present taken from w.
func (w *wireUsage) all(u conv.Usage) conv.Usage {
	if w == nil {
		return u
	}
	set(&u.Input, w.Input, false)
	set(&u.Output, w.Output, false)
	set(&u.CacheRead, w.CacheRead, false)
	set(&u.CacheWrite, w.CacheWrite, false)
	return u
}

// final returns u updated by a message_delta's usage: output tokens when
// present, input and cache counts only when present and non-zero (some
// compatible upstreams send zeros there and the real counts at the start).
func (w *wireUsage) final(u conv.Usage) conv.Usage {
	if w == nil {
		return u
	}
	set(&u.Input, w.Input, true)
	set(&u.Output, w.Output, false)
	set(&u.CacheRead, w.CacheRead, true)
	set(&u.CacheWrite, w.CacheWrite, true)
	return u
}

func set(dst *int64, v *int64, nonZero bool) {
	if v != nil && (!nonZero || *v != 0) {
		*dst = *v
	}
}

// outBlock is a content block as written to an upstream request, a
// client's response or a stream's content_block_start. Text, Thinking and
// Signature are pointers so that an empty one is still written where the
// block type requires the member.
type outBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text,omitempty"`
	Source       *outSource      `json:"source,omitempty"`
	Title        string          `json:"title,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      []outBlock      `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	Thinking     *string         `json:"thinking,omitempty"`
	Signature    *string         `json:"signature,omitempty"`
	Data         string          `json:"data,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// outSource is an image's or a document's source.
type outSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// outUsage is a usage object as a client reads it.
type outUsage struct {
	Input      int64 `json:"input_tokens"`
	CacheWrite int64 `json:"cache_creation_input_tokens"`
	CacheRead  int64 `json:"cache_read_input_tokens"`
	Output     int64 `json:"output_tokens"`
}

func usageOut(u conv.Usage) outUsage {
	return outUsage{Input: u.Input, CacheWrite: u.CacheWrite, CacheRead: u.CacheRead, Output: u.Output}
}

// outMessage is a whole message as a client reads it: a non-streamed
// response, or the message of a stream's message_start.
type outMessage struct {
	ID           string     `json:"id"`
	Type         string     `json:"type"`
	Role         string     `json:"role"`
	Model        string     `json:"model"`
	Content      []outBlock `json:"content"`
	StopReason   *string    `json:"stop_reason"`
	StopSequence *string    `json:"stop_sequence"`
	Usage        outUsage   `json:"usage"`
}

func ptr[T any](v T) *T { return &v }

// nullable is s, or nil (JSON null) when s is empty.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// stopIn reads a stop reason; model_context_window_exceeded is the model
// running out of room, max_tokens in the neutral words.
func stopIn(s string) conv.StopReason {
	if s == "model_context_window_exceeded" {
		return conv.StopMaxTokens
	}
	return conv.StopReason(s)
}

// stopOut is the stop_reason a client gets: end_turn when none is known,
// tool_use whenever the answer calls a tool (some upstreams say "stop"
// even then, and SDK agents loop on tool_use).
func stopOut(s conv.StopReason, calledTool bool) string {
	if calledTool && (s == "" || s == conv.StopEnd) {
		return string(conv.StopToolUse)
	}
	if s == "" {
		return string(conv.StopEnd)
	}
	return string(s)
}
