package anthropic

import (
	"strconv"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// AppendJSON writes the message as conv.Marshal would (conv.Appender): a
// translated answer and a stream's message_start without encoding/json,
// whose reflection on a request's cold caches cost several times the
// copy (bench/NOTES.md, The last misses). It declines when a block holds
// what only a request carries (a source, a tool result, cache_control).
func (m outMessage) AppendJSON(dst []byte) ([]byte, bool) {
	start := len(dst)
	dst = append(dst, `{"id":`...)
	dst = conv.AppendString(dst, m.ID)
	dst = append(dst, `,"type":`...)
	dst = conv.AppendString(dst, m.Type)
	dst = append(dst, `,"role":`...)
	dst = conv.AppendString(dst, m.Role)
	dst = append(dst, `,"model":`...)
	dst = conv.AppendString(dst, m.Model)
	dst, ok := conv.AppendArray(append(dst, `,"content":`...), m.Content, (*outBlock).appendJSON)
	if !ok {
		return dst[:start], false
	}
	dst = append(dst, `,"stop_reason":`...)
	dst = appendNullable(dst, m.StopReason)
	dst = append(dst, `,"stop_sequence":`...)
	dst = appendNullable(dst, m.StopSequence)
	dst = append(dst, `,"usage":{"input_tokens":`...)
	dst = strconv.AppendInt(dst, m.Usage.Input, 10)
	dst = append(dst, `,"cache_creation_input_tokens":`...)
	dst = strconv.AppendInt(dst, m.Usage.CacheWrite, 10)
	dst = append(dst, `,"cache_read_input_tokens":`...)
	dst = strconv.AppendInt(dst, m.Usage.CacheRead, 10)
	dst = append(dst, `,"output_tokens":`...)
	dst = strconv.AppendInt(dst, m.Usage.Output, 10)
	return append(dst, "}}"...), true
}

// appendJSON writes an answer's block (text, thinking, redacted thinking,
// a tool call) as encoding/json would, its omitempty members left out; ok
// is false for a block with members only requests carry.
func (b *outBlock) appendJSON(dst []byte) ([]byte, bool) {
	if b.Source != nil || b.Title != "" || b.ToolUseID != "" || len(b.Content) > 0 || b.IsError || len(b.CacheControl) > 0 {
		return dst, false
	}
	dst = append(dst, `{"type":`...)
	dst = conv.AppendString(dst, b.Type)
	if b.Text != nil {
		dst = append(dst, `,"text":`...)
		dst = conv.AppendString(dst, *b.Text)
	}
	if b.ID != "" {
		dst = append(dst, `,"id":`...)
		dst = conv.AppendString(dst, b.ID)
	}
	if b.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = conv.AppendString(dst, b.Name)
	}
	if len(b.Input) > 0 {
		var ok bool
		if dst, ok = conv.AppendCompact(append(dst, `,"input":`...), b.Input); !ok {
			return dst, false
		}
	}
	if b.Thinking != nil {
		dst = append(dst, `,"thinking":`...)
		dst = conv.AppendString(dst, *b.Thinking)
	}
	if b.Signature != nil {
		dst = append(dst, `,"signature":`...)
		dst = conv.AppendString(dst, *b.Signature)
	}
	if b.Data != "" {
		dst = append(dst, `,"data":`...)
		dst = conv.AppendString(dst, b.Data)
	}
	return append(dst, '}'), true
}

// appendNullable writes s, or null when it is nil.
func appendNullable(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return conv.AppendString(dst, *s)
}
