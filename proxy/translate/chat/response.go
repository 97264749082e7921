package chat

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// wireError is an error object inside a 2xx body or a stream chunk.
type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"` // a string or a number
}

// errorType is the error's type, else its code.
func (e *wireError) errorType() string {
	if e.Type != "" {
		return e.Type
	}
	return rawText(e.Code)
}

// wireResponse is a non-streamed Chat answer.
type wireResponse struct {
	ID      string       `json:"id"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	Error   *wireError   `json:"error"`
}

// wireChoice is one choice of an answer.
type wireChoice struct {
	Message      wireMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

// DecodeResponse reads an upstream's non-streamed answer (its first
// choice), in one pass (readResponse).
func (codec) DecodeResponse(body []byte) (*conv.Response, error) {
	var w wireResponse
	if err := readResponse(body, &w); err != nil {
		return nil, fmt.Errorf("chat response: %w", err)
	}
	if w.Error != nil {
		return nil, fmt.Errorf("chat response: upstream error %s: %s", w.Error.errorType(), w.Error.Message)
	}
	if len(w.Choices) == 0 {
		return nil, errors.New("chat response: no choices")
	}
	ch := &w.Choices[0]
	parts, err := responseParts(&ch.Message)
	if err != nil {
		return nil, err
	}
	resp := &conv.Response{ID: w.ID, Model: w.Model, Parts: parts}
	resp.Stop = stopReason(ch.FinishReason, len(ch.Message.ToolCalls) > 0)
	if w.Usage != nil {
		resp.Usage = w.Usage.neutral()
	}
	return resp, nil
}

// responseParts reads an answer's message: reasoning (from its own member
// or inlined as <think>…</think>), text, refusal, tool calls.
func responseParts(m *wireMessage) ([]conv.Part, error) {
	var parts []conv.Part
	if r := m.reasoningText(); r != "" {
		parts = append(parts, conv.Part{Kind: conv.PartReasoning, Text: r})
	}
	content, err := contentParts(m.Content, false)
	if err != nil {
		return nil, fmt.Errorf("chat response: %w", err)
	}
	var text string
	for _, p := range content {
		text += p.Text // the pieces of one answer
	}
	if think, rest, ok := splitThink(text); ok {
		if think != "" {
			parts = append(parts, conv.Part{Kind: conv.PartReasoning, Text: think})
		}
		text = rest
	}
	if text != "" {
		parts = append(parts, conv.Part{Kind: conv.PartText, Text: text})
	}
	if m.Refusal != nil && *m.Refusal != "" {
		parts = append(parts, conv.Part{Kind: conv.PartText, Text: *m.Refusal})
	}
	for i := range m.ToolCalls {
		c := &m.ToolCalls[i]
		id := c.ID
		if id == "" {
			id = newID("call_")
		}
		parts = append(parts, conv.Part{Kind: conv.PartToolCall, CallID: id, Name: c.name(), Args: conv.CanonicalArgs(c.args())})
	}
	return parts, nil
}

// outResponse is a non-streamed answer to a Chat client.
type outResponse struct {
	ID      string      `json:"id"`
	Object  string      `json:"object"`
	Created int64       `json:"created"`
	Model   string      `json:"model"`
	Choices []outChoice `json:"choices"`
	Usage   *outUsage   `json:"usage"`
}

type outChoice struct {
	Index        int       `json:"index"`
	Message      outAnswer `json:"message"`
	FinishReason string    `json:"finish_reason"`
}

// outAnswer is the assistant message of an answer: content is null, not
// absent, when there is no text.
type outAnswer struct {
	Role             string        `json:"role"`
	Content          *string       `json:"content"`
	ReasoningContent string        `json:"reasoning_content,omitempty"`
	ToolCalls        []outToolCall `json:"tool_calls,omitempty"`
}

// EncodeResponse writes resp for a Chat client that sent req.
func (codec) EncodeResponse(resp *conv.Response, req *conv.Request) ([]byte, error) {
	resp = req.ClientResponse(resp)
	id := resp.ID
	if id == "" {
		id = newID("chatcmpl-")
	}
	msg := outAnswer{Role: "assistant", ReasoningContent: joinKind(resp.Parts, conv.PartReasoning)}
	if text := joinText(resp.Parts); text != "" {
		msg.Content = &text
	}
	for i := range resp.Parts {
		if p := &resp.Parts[i]; p.Kind == conv.PartToolCall {
			msg.ToolCalls = append(msg.ToolCalls, toolCallOut(p))
		}
	}
	out := outResponse{
		ID: id, Object: "chat.completion", Created: now().Unix(),
		Model:   clientModel(req, resp.Model),
		Choices: []outChoice{{Message: msg, FinishReason: finishReason(resp.Stop)}},
		Usage:   usageOut(resp.Usage),
	}
	return conv.Marshal(out), nil
}

// clientModel is the model the client asked for, else fallback.
func clientModel(req *conv.Request, fallback string) string {
	if req != nil && req.Model != "" {
		return req.Model
	}
	return fallback
}
