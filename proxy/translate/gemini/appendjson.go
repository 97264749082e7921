package gemini

import (
	"slices"
	"strconv"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// AppendJSON writes the GenerateContentResponse as conv.Marshal would
// (conv.Appender): a translated answer and each chunk of a translated
// stream without encoding/json's reflection (bench/NOTES.md, The last
// misses). It declines a part only requests carry (inline or file data, a
// function response) and function call arguments that are not JSON.
func (r outResponse) AppendJSON(dst []byte) ([]byte, bool) {
	start := len(dst)
	dst = slices.Grow(dst, r.sizeHint())
	dst, ok := conv.AppendArray(append(dst, `{"candidates":`...), r.Candidates, (*outCandidate).appendJSON)
	if !ok {
		return dst[:start], false
	}
	if u := r.UsageMetadata; u != nil {
		dst = append(dst, `,"usageMetadata":{"promptTokenCount":`...)
		dst = strconv.AppendInt(dst, u.Prompt, 10)
		dst = append(dst, `,"candidatesTokenCount":`...)
		dst = strconv.AppendInt(dst, u.Candidates, 10)
		if u.Cached != 0 {
			dst = append(dst, `,"cachedContentTokenCount":`...)
			dst = strconv.AppendInt(dst, u.Cached, 10)
		}
		if u.Thoughts != 0 {
			dst = append(dst, `,"thoughtsTokenCount":`...)
			dst = strconv.AppendInt(dst, u.Thoughts, 10)
		}
		dst = append(dst, `,"totalTokenCount":`...)
		dst = append(strconv.AppendInt(dst, u.Total, 10), '}')
	}
	if r.ModelVersion != "" {
		dst = append(dst, `,"modelVersion":`...)
		dst = conv.AppendString(dst, r.ModelVersion)
	}
	if r.ResponseID != "" {
		dst = append(dst, `,"responseId":`...)
		dst = conv.AppendString(dst, r.ResponseID)
	}
	return append(dst, '}'), true
}

// sizeHint is about the length of the response's JSON, so that it is
// written into one allocation.
func (r outResponse) sizeHint() int {
	n := 192 + len(r.ModelVersion) + len(r.ResponseID)
	for i := range r.Candidates {
		n += 64
		for j := range r.Candidates[i].Content.Parts {
			p := &r.Candidates[i].Content.Parts[j]
			n += 48 + len(p.ThoughtSignature)
			if p.Text != nil {
				n += len(*p.Text)
			}
			if p.FunctionCall != nil {
				n += len(p.FunctionCall.ID) + len(p.FunctionCall.Name) + len(p.FunctionCall.Args)
			}
		}
	}
	return n + n/8
}

// appendJSON writes a candidate: its content, finish reason and index.
func (c *outCandidate) appendJSON(dst []byte) ([]byte, bool) {
	dst = append(dst, `{"content":{`...)
	if c.Content.Role != "" {
		dst = append(dst, `"role":`...)
		dst = append(conv.AppendString(dst, c.Content.Role), ',')
	}
	dst, ok := conv.AppendArray(append(dst, `"parts":`...), c.Content.Parts, (*wirePart).appendJSON)
	if !ok {
		return dst, false
	}
	dst = append(dst, '}')
	if c.FinishReason != "" {
		dst = append(dst, `,"finishReason":`...)
		dst = conv.AppendString(dst, c.FinishReason)
	}
	dst = append(dst, `,"index":`...)
	return append(strconv.AppendInt(dst, int64(c.Index), 10), '}'), true
}

// appendJSON writes a part of an answer (text, a thought, a function
// call), its omitempty members left out; ok is false for a part with
// members only requests carry.
func (p *wirePart) appendJSON(dst []byte) ([]byte, bool) {
	if p.InlineData != nil || p.FileData != nil || p.FunctionResponse != nil {
		return dst, false
	}
	dst = append(dst, '{')
	sep := false
	member := func(name string) {
		if sep {
			dst = append(dst, ',')
		}
		sep = true
		dst = append(dst, name...)
	}
	if p.Text != nil {
		member(`"text":`)
		dst = conv.AppendString(dst, *p.Text)
	}
	if p.Thought {
		member(`"thought":true`)
	}
	if p.ThoughtSignature != "" {
		member(`"thoughtSignature":`)
		dst = conv.AppendString(dst, p.ThoughtSignature)
	}
	if f := p.FunctionCall; f != nil {
		member(`"functionCall":{`)
		if f.ID != "" {
			dst = append(dst, `"id":`...)
			dst = append(conv.AppendString(dst, f.ID), ',')
		}
		dst = append(dst, `"name":`...)
		dst = conv.AppendString(dst, f.Name)
		if len(f.Args) > 0 {
			var ok bool
			if dst, ok = conv.AppendCompact(append(dst, `,"args":`...), f.Args); !ok {
				return dst, false
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, '}'), true
}
