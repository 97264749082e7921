package responses

import (
	"slices"
	"strconv"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// AppendJSON writes the response as conv.Marshal would (conv.Appender): a
// translated answer without encoding/json's reflection (bench/NOTES.md,
// The last misses). It declines an output item or annotation it does not
// know, which is then marshalled as usual.
func (r outResponse) AppendJSON(dst []byte) ([]byte, bool) {
	start := len(dst)
	dst = slices.Grow(dst, r.sizeHint())
	dst = append(dst, `{"id":`...)
	dst = conv.AppendString(dst, r.ID)
	dst = append(dst, `,"object":`...)
	dst = conv.AppendString(dst, r.Object)
	dst = append(dst, `,"created_at":`...)
	dst = strconv.AppendInt(dst, r.CreatedAt, 10)
	dst = append(dst, `,"status":`...)
	dst = conv.AppendString(dst, r.Status)
	if r.IncompleteDetails != nil {
		dst = append(dst, `,"incomplete_details":{"reason":`...)
		dst = append(conv.AppendString(dst, r.IncompleteDetails.Reason), '}')
	}
	if r.Error != nil {
		dst = append(dst, `,"error":{"code":`...)
		dst = conv.AppendString(dst, r.Error.Code)
		dst = append(dst, `,"message":`...)
		dst = append(conv.AppendString(dst, r.Error.Message), '}')
	}
	dst = append(dst, `,"model":`...)
	dst = conv.AppendString(dst, r.Model)
	dst, ok := conv.AppendArray(append(dst, `,"output":`...), r.Output, appendItem)
	if !ok {
		return dst[:start], false
	}
	if u := r.Usage; u != nil {
		dst = append(dst, `,"usage":{"input_tokens":`...)
		dst = strconv.AppendInt(dst, u.InputTokens, 10)
		dst = append(dst, `,"input_tokens_details":{"cached_tokens":`...)
		dst = strconv.AppendInt(dst, u.InputTokensDetails.CachedTokens, 10)
		dst = append(dst, `},"output_tokens":`...)
		dst = strconv.AppendInt(dst, u.OutputTokens, 10)
		dst = append(dst, `,"output_tokens_details":{"reasoning_tokens":`...)
		dst = strconv.AppendInt(dst, u.OutputTokensDetails.ReasoningTokens, 10)
		dst = append(dst, `},"total_tokens":`...)
		dst = append(strconv.AppendInt(dst, u.TotalTokens, 10), '}')
	}
	return append(dst, '}'), true
}

// sizeHint is about the length of the response's JSON, so that it is
// written into one allocation: the members' names and the usage, and what
// the items carry.
func (r outResponse) sizeHint() int {
	n := 320 + len(r.ID) + len(r.Model)
	for _, item := range r.Output {
		n += 96
		switch it := item.(type) {
		case outMessage:
			for _, c := range it.Content {
				n += 48 + len(c.Text)
			}
		case outReasoning:
			n += len(it.EncryptedContent)
			for _, s := range it.Summary {
				n += 32 + len(s.Text)
			}
		case outFunctionCall:
			n += len(it.CallID) + len(it.Name) + len(it.Namespace) + len(it.Arguments)
		case outCustomCall:
			n += len(it.CallID) + len(it.Name) + len(it.Namespace) + len(it.Input)
		}
	}
	return n + n/8
}

// appendItem writes one output item of an answer (a message, reasoning, a
// function or custom tool call) as encoding/json would; ok is false for
// any other value.
func appendItem(item *any, dst []byte) ([]byte, bool) {
	switch it := (*item).(type) {
	case outMessage:
		dst = appendHead(dst, it.ID, it.Type)
		dst = append(dst, `,"status":`...)
		dst = conv.AppendString(dst, it.Status)
		dst = append(dst, `,"role":`...)
		dst = conv.AppendString(dst, it.Role)
		dst, ok := conv.AppendArray(append(dst, `,"content":`...), it.Content, appendText)
		return append(dst, '}'), ok
	case outReasoning:
		dst = appendHead(dst, it.ID, it.Type)
		dst, _ = conv.AppendArray(append(dst, `,"summary":`...), it.Summary, appendSummary)
		if it.EncryptedContent != "" {
			dst = append(dst, `,"encrypted_content":`...)
			dst = conv.AppendString(dst, it.EncryptedContent)
		}
		return append(dst, '}'), true
	case outFunctionCall:
		dst = appendCall(dst, it.ID, it.Type, it.Status, it.CallID, it.Name, it.Namespace)
		dst = append(dst, `,"arguments":`...)
		return append(conv.AppendString(dst, it.Arguments), '}'), true
	case outCustomCall:
		dst = appendCall(dst, it.ID, it.Type, it.Status, it.CallID, it.Name, it.Namespace)
		dst = append(dst, `,"input":`...)
		return append(conv.AppendString(dst, it.Input), '}'), true
	}
	return dst, false
}

// appendText writes a message's text, declining one with annotations.
func appendText(c *outText, dst []byte) ([]byte, bool) {
	if len(c.Annotations) > 0 {
		return dst, false
	}
	dst = append(dst, `{"type":`...)
	dst = conv.AppendString(dst, c.Type)
	dst = append(dst, `,"text":`...)
	dst = conv.AppendString(dst, c.Text)
	if c.Annotations == nil {
		return append(dst, `,"annotations":null}`...), true
	}
	return append(dst, `,"annotations":[]}`...), true
}

// appendSummary writes a reasoning item's summary text.
func appendSummary(s *summaryText, dst []byte) ([]byte, bool) {
	dst = append(dst, `{"type":`...)
	dst = conv.AppendString(dst, s.Type)
	dst = append(dst, `,"text":`...)
	return append(conv.AppendString(dst, s.Text), '}'), true
}

// appendHead opens an item with its id and type.
func appendHead(dst []byte, id, typ string) []byte {
	dst = append(dst, `{"id":`...)
	dst = conv.AppendString(dst, id)
	dst = append(dst, `,"type":`...)
	return conv.AppendString(dst, typ)
}

// appendCall writes the members a function call and a custom tool call
// share, the namespace only when there is one.
func appendCall(dst []byte, id, typ, status, callID, name, namespace string) []byte {
	dst = appendHead(dst, id, typ)
	dst = append(dst, `,"status":`...)
	dst = conv.AppendString(dst, status)
	dst = append(dst, `,"call_id":`...)
	dst = conv.AppendString(dst, callID)
	dst = append(dst, `,"name":`...)
	dst = conv.AppendString(dst, name)
	if namespace != "" {
		dst = append(dst, `,"namespace":`...)
		dst = conv.AppendString(dst, namespace)
	}
	return dst
}
