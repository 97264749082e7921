package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

type wireResponse struct {
	ID           string      `json:"id"`
	Type         string      `json:"type"`
	Model        string      `json:"model"`
	Content      []wireBlock `json:"content"`
	StopReason   string      `json:"stop_reason"`
	StopSequence string      `json:"stop_sequence"`
	Usage        *wireUsage  `json:"usage"`
	Error        *wireError  `json:"error"`
}

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// DecodeResponse reads a non-streamed Messages API response. Blocks of
// server tools (server_tool_use, web_search_tool_result, …) are left out.
func (codec) DecodeResponse(body []byte) (*conv.Response, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("anthropic response: %w", err)
	}
	if w.Type == "error" || w.Error != nil {
		if w.Error == nil {
			return nil, errors.New("anthropic response: an error without details")
		}
		return nil, fmt.Errorf("anthropic response: %s: %s", w.Error.Type, w.Error.Message)
	}
	if w.Content == nil {
		// A message always has content, [] when the model said nothing; a
		// 200 without it (null, {}) is no answer, as a Chat body without
		// choices is none.
		return nil, errors.New("anthropic response: no content")
	}
	resp := &conv.Response{
		ID: w.ID, Model: w.Model, Stop: stopIn(w.StopReason), StopSequence: w.StopSequence,
		Usage: w.Usage.all(conv.Usage{}), Parts: make([]conv.Part, 0, len(w.Content)),
	}
	for i := range w.Content {
		if p, ok := responsePart(&w.Content[i]); ok {
			resp.Parts = append(resp.Parts, p)
		}
	}
	return resp, nil
}

// responsePart reads one block of an answer: text, thinking or a tool call.
func responsePart(b *wireBlock) (conv.Part, bool) {
	switch b.Type {
	case "text":
		return conv.Part{Kind: conv.PartText, Text: b.Text}, true
	case "thinking":
		return conv.Part{Kind: conv.PartReasoning, Text: b.Thinking, Signature: b.Signature}, true
	case "redacted_thinking":
		return conv.Part{Kind: conv.PartReasoning, Redacted: b.Data}, true
	case "tool_use":
		return conv.Part{Kind: conv.PartToolCall, CallID: b.ID, Name: b.Name, Args: conv.CanonicalArgs(string(b.Input))}, true
	}
	return conv.Part{}, false
}

// EncodeResponse writes resp as a Messages API response for a client that
// sent req. Reasoning without a signature becomes a thinking block with an
// empty signature, so that Claude Code shows it; should the client send
// it back, the request encoder leaves unsigned thinking out.
func (codec) EncodeResponse(resp *conv.Response, req *conv.Request) ([]byte, error) {
	resp = req.ClientResponse(resp)
	model := resp.Model
	if req != nil && req.Model != "" {
		model = req.Model
	}
	out := outMessage{
		ID: resp.ID, Type: "message", Role: "assistant", Model: model,
		Content: make([]outBlock, 0, len(resp.Parts)), StopSequence: nullable(resp.StopSequence),
		Usage: usageOut(resp.Usage),
	}
	if out.ID == "" {
		out.ID = newID("msg_")
	}
	called := false
	for i := range resp.Parts {
		b, ok := answerBlock(&resp.Parts[i])
		if ok {
			out.Content = append(out.Content, b)
			called = called || b.Type == "tool_use"
		}
	}
	out.StopReason = ptr(stopOut(resp.Stop, called))
	if b, ok := out.AppendJSON(make([]byte, 0, answerSize(resp))); ok {
		return b, nil
	}
	return conv.Marshal(out), nil
}

// answerSize is about the size of resp written for the client.
func answerSize(resp *conv.Response) int {
	n := 256 + len(resp.ID) + len(resp.Model)
	for i := range resp.Parts {
		p := &resp.Parts[i]
		n += 64 + len(p.Text) + len(p.Args) + len(p.Signature) + len(p.Redacted) + len(p.CallID) + len(p.Name)
	}
	return n + n/16 // escapes
}

// answerBlock writes one part of an answer for the client.
func answerBlock(p *conv.Part) (outBlock, bool) {
	switch p.Kind {
	case conv.PartText:
		return outBlock{Type: "text", Text: ptr(p.Text)}, p.Text != ""
	case conv.PartReasoning:
		switch {
		case p.Signature != "":
			return outBlock{Type: "thinking", Thinking: ptr(p.Text), Signature: ptr(p.Signature)}, true
		case p.Redacted != "":
			return outBlock{Type: "redacted_thinking", Data: p.Redacted}, true
		}
		return outBlock{Type: "thinking", Thinking: ptr(p.Text), Signature: ptr("")}, p.Text != ""
	case conv.PartToolCall:
		id := p.CallID
		if id == "" {
			id = newID("toolu_")
		}
		return outBlock{Type: "tool_use", ID: id, Name: p.Name, Input: json.RawMessage(conv.CanonicalArgs(p.Args))}, true
	}
	return outBlock{}, false
}
