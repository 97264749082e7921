package responses

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// wireResponse is a response object: a non-streamed body, or the response
// member of a stream's response.* events.
type wireResponse struct {
	ID                string `json:"id"`
	Model             string `json:"model"`
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Output []wireItem `json:"output"`
	Usage  *wireUsage `json:"usage"`
	Error  *wireError `json:"error"`
}

type wireUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// wireError is an error object; code may be a string, a number or null.
type wireError struct {
	Code    json.RawMessage `json:"code"`
	Type    string          `json:"type"`
	Message string          `json:"message"`
}

// streamError is the neutral form of an error object (type: its code, or
// its type when it has no code).
func (e *wireError) streamError() *conv.StreamError {
	se := &conv.StreamError{Type: e.Type, Message: e.Message}
	if code := rawString(e.Code); code != "" {
		se.Type = code
	}
	return se
}

// rawString is a raw member as text: a string's value, a number as written.
func rawString(raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// usage is the neutral usage of a Responses usage object: cached input
// tokens are CacheRead, and Input the rest.
func (u *wireUsage) usage() conv.Usage {
	if u == nil {
		return conv.Usage{}
	}
	cached := u.InputTokensDetails.CachedTokens
	return conv.Usage{
		Input:     max(u.InputTokens-cached, 0),
		CacheRead: cached,
		Output:    u.OutputTokens,
		Reasoning: u.OutputTokensDetails.ReasoningTokens,
	}
}

// stopReason is why a response ended, from its status and its output.
func stopReason(resp *wireResponse, sawToolCall bool) conv.StopReason {
	if resp != nil && resp.Status == "incomplete" {
		reason := ""
		if resp.IncompleteDetails != nil {
			reason = resp.IncompleteDetails.Reason
		}
		if reason == "content_filter" {
			return conv.StopRefusal
		}
		return conv.StopMaxTokens
	}
	if sawToolCall {
		return conv.StopToolUse
	}
	return conv.StopEnd
}

// outputParts translates a response's output items; sawToolCall reports
// whether one was a tool call. Items other than messages, reasoning and
// tool calls (hosted tool calls) are left out.
func outputParts(items []wireItem) (parts []conv.Part, sawToolCall bool) {
	for i := range items {
		it := &items[i]
		switch it.Type {
		case "message":
			if t := messageText(it); t != "" {
				parts = append(parts, conv.Part{Kind: conv.PartText, Text: t})
			}
		case "reasoning":
			if p := reasoningPart(it, false); !isEmptyReasoning(p) {
				parts = append(parts, p)
			}
		case "function_call", "custom_tool_call":
			p := callPart(it)
			p.Namespace, p.Custom = it.Namespace, it.Type == "custom_tool_call"
			parts = append(parts, p)
			sawToolCall = true
		}
	}
	return parts, sawToolCall
}

// DecodeResponse reads a non-streamed Responses body.
func (codec) DecodeResponse(body []byte) (*conv.Response, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("responses response: %w", err)
	}
	if w.Status == "failed" {
		msg := "the response failed"
		if w.Error != nil {
			se := w.Error.streamError()
			msg = se.Type + ": " + se.Message
		}
		return nil, fmt.Errorf("responses response: %s", msg)
	}
	if w.Output == nil {
		// A response always has output, [] when the model said nothing; a
		// 200 without it (null, {}) is no answer, as a Chat body without
		// choices is none.
		return nil, errors.New("responses response: no output")
	}
	parts, sawTool := outputParts(w.Output)
	return &conv.Response{
		ID:    w.ID,
		Model: w.Model,
		Parts: parts,
		Stop:  stopReason(&w, sawTool),
		Usage: w.Usage.usage(),
	}, nil
}

// Output items and the response object as a client is given them.
type (
	outResponse struct {
		ID                string             `json:"id"`
		Object            string             `json:"object"`
		CreatedAt         int64              `json:"created_at"`
		Status            string             `json:"status"`
		IncompleteDetails *incompleteDetails `json:"incomplete_details,omitempty"`
		Error             *outError          `json:"error,omitempty"`
		Model             string             `json:"model"`
		Output            []any              `json:"output"`
		Usage             *outUsage          `json:"usage,omitempty"`
	}
	incompleteDetails struct {
		Reason string `json:"reason"`
	}
	outError struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	outUsage struct {
		InputTokens         int64         `json:"input_tokens"`
		InputTokensDetails  cachedTokens  `json:"input_tokens_details"`
		OutputTokens        int64         `json:"output_tokens"`
		OutputTokensDetails reasoningToks `json:"output_tokens_details"`
		TotalTokens         int64         `json:"total_tokens"`
	}
	cachedTokens struct {
		CachedTokens int64 `json:"cached_tokens"`
	}
	reasoningToks struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	}
	outMessage struct {
		ID      string    `json:"id"`
		Type    string    `json:"type"`
		Status  string    `json:"status"`
		Role    string    `json:"role"`
		Content []outText `json:"content"`
	}
	outText struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Annotations []any  `json:"annotations"`
	}
	outReasoning struct {
		ID               string        `json:"id"`
		Type             string        `json:"type"`
		Summary          []summaryText `json:"summary"`
		EncryptedContent string        `json:"encrypted_content,omitempty"`
	}
	outFunctionCall struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		Status    string `json:"status"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Namespace string `json:"namespace,omitempty"`
		Arguments string `json:"arguments"`
	}
	outCustomCall struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		Status    string `json:"status"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Namespace string `json:"namespace,omitempty"`
		Input     string `json:"input"`
	}
)

// outUsageOf is the client's usage object: input_tokens counts every
// prompt token, cached or not.
func outUsageOf(u conv.Usage) *outUsage {
	return &outUsage{
		InputTokens:         u.PromptTotal(),
		InputTokensDetails:  cachedTokens{CachedTokens: u.CacheRead},
		OutputTokens:        u.Output,
		OutputTokensDetails: reasoningToks{ReasoningTokens: u.Reasoning},
		TotalTokens:         u.PromptTotal() + u.Output,
	}
}

// messageItem is an assistant message holding text.
func messageItem(id, status, text string) outMessage {
	content := []outText{}
	if status == "completed" {
		content = []outText{{Type: "output_text", Text: text, Annotations: []any{}}}
	}
	return outMessage{ID: id, Type: "message", Status: status, Role: "assistant", Content: content}
}

// clientEncrypted is the encrypted_content a client is given for a
// reasoning part: the upstream's own, or an Anthropic signature (or
// redacted thinking) marked so that it can come back.
func clientEncrypted(p conv.Part) string {
	switch {
	case p.Encrypted != "":
		return p.Encrypted
	case p.Signature != "":
		return conv.SignaturePrefix + p.Signature
	case p.Redacted != "":
		return conv.RedactedPrefix + p.Redacted
	}
	return ""
}

// callItem is a tool call as the client declared the tool: a custom tool's
// call is a custom_tool_call, a namespaced function's carries its
// namespace. A partial item (status in_progress) has no arguments yet.
func callItem(p conv.Part, id, status string, tools map[string]toolInfo) any {
	info := tools[p.Name]
	ns, name := info.callName(p.Name)
	if info.custom {
		input := ""
		if status == "completed" {
			input = conv.CustomInput(p.Args)
		}
		return outCustomCall{ID: id, Type: "custom_tool_call", Status: status, CallID: p.CallID, Name: name, Namespace: ns, Input: input}
	}
	args := ""
	if status == "completed" {
		args = conv.CanonicalArgs(p.Args)
	}
	return outFunctionCall{ID: id, Type: "function_call", Status: status, CallID: p.CallID, Name: name, Namespace: ns, Arguments: args}
}

// callPrefix is the id prefix of a call item: ctc for a custom tool's call,
// fc for a function's.
func callPrefix(tools map[string]toolInfo, name string) string {
	if tools[name].custom {
		return "ctc"
	}
	return "fc"
}

// responseHead is the response object without output and usage.
func responseHead(id, model string, created int64, status string) outResponse {
	return outResponse{ID: id, Object: "response", CreatedAt: created, Status: status, Model: model, Output: []any{}}
}

// finishStatus is the status of a response that ended for stop, with its
// incomplete_details.
func finishStatus(stop conv.StopReason) (string, *incompleteDetails) {
	if stop == conv.StopMaxTokens {
		return "incomplete", &incompleteDetails{Reason: "max_output_tokens"}
	}
	return "completed", nil
}

// EncodeResponse writes resp as a Responses body for a client that sent req.
func (codec) EncodeResponse(resp *conv.Response, req *conv.Request) ([]byte, error) {
	if resp == nil {
		return nil, fmt.Errorf("responses: no response to encode")
	}
	resp = req.ClientResponse(resp)
	var tools map[string]toolInfo
	model := resp.Model
	if req != nil {
		tools, model = toolIndex(req.Tools), req.Model
	}
	tok := newToken()
	id := resp.ID
	if id == "" {
		id = "resp_" + tok
	}
	status, incomplete := finishStatus(resp.Stop)
	out := responseHead(id, model, now().Unix(), status)
	out.IncompleteDetails = incomplete
	for i, p := range resp.Parts {
		switch p.Kind {
		case conv.PartText:
			out.Output = append(out.Output, messageItem(itemID("msg", tok, i), "completed", p.Text))
		case conv.PartReasoning:
			rid := p.ItemID
			if rid == "" {
				rid = itemID("rs", tok, i)
			}
			out.Output = append(out.Output, outReasoning{ID: rid, Type: "reasoning", Summary: summaryOf(p.Text), EncryptedContent: clientEncrypted(p)})
		case conv.PartToolCall:
			if p.CallID == "" {
				p.CallID = itemID("call", tok, i)
			}
			out.Output = append(out.Output, callItem(p, itemID(callPrefix(tools, p.Name), tok, i), "completed", tools))
		}
	}
	out.Usage = outUsageOf(resp.Usage)
	return conv.Marshal(out), nil
}
