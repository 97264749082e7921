package chat

import (
	"encoding/json"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// wireMessage is one message as Chat clients send it and upstreams answer
// it (choices[].message), or a stream's delta.
type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	// ReasoningContent is DeepSeek's, Kimi's, GLM's and Qwen's reasoning
	// text; Reasoning is OpenRouter's.
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	Refusal          *string         `json:"refusal"`
	ToolCalls        []wireToolCall  `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
}

// reasoningText is the message's reasoning, whichever member carries it.
func (m *wireMessage) reasoningText() string {
	if m.ReasoningContent != nil && *m.ReasoningContent != "" {
		return *m.ReasoningContent
	}
	if len(m.Reasoning) > 0 && m.Reasoning[0] == '"' {
		var s string
		if json.Unmarshal(m.Reasoning, &s) == nil {
			return s
		}
	}
	return ""
}

// wireToolCall is one tool call of a message, or a fragment of one in a
// stream (where Index says which call it belongs to).
type wireToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a JSON string; a few providers send the object.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
	// Custom is a call of an OpenAI custom tool: free-form input.
	Custom *struct {
		Name  string `json:"name"`
		Input string `json:"input"`
	} `json:"custom"`
}

// name is the called tool's name.
func (c *wireToolCall) name() string {
	if c.Custom != nil {
		return c.Custom.Name
	}
	return c.Function.Name
}

// args is the call's argument text (a fragment of it in a stream).
func (c *wireToolCall) args() string {
	if c.Custom != nil {
		return conv.CustomArgs(c.Custom.Input)
	}
	return rawText(c.Function.Arguments)
}

// rawText is a JSON string's value, or any other JSON value's own text
// (null is "").
func rawText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// wireUsage is a Chat usage object with the members providers add.
type wireUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens     int64 `json:"cached_tokens"`
		CacheWriteTokens int64 `json:"cache_write_tokens"` // OpenRouter
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"` // DeepSeek
	CachedTokens         int64 `json:"cached_tokens"`           // Moonshot
}

// neutral is u with Anthropic semantics: Input excludes the cached tokens
// counted in prompt_tokens, so they are never counted twice.
func (u *wireUsage) neutral() conv.Usage {
	var out conv.Usage
	if d := u.PromptTokensDetails; d != nil {
		out.CacheRead, out.CacheWrite = d.CachedTokens, d.CacheWriteTokens
	}
	if out.CacheRead == 0 {
		out.CacheRead = max(u.PromptCacheHitTokens, u.CachedTokens)
	}
	out.Input = max(u.PromptTokens-out.CacheRead-out.CacheWrite, 0)
	out.Output = u.CompletionTokens
	if d := u.CompletionTokensDetails; d != nil {
		out.Reasoning = d.ReasoningTokens
	}
	return out
}

// outUsage is the usage object written to a Chat client.
type outUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// usageOut is u as a Chat client reads it: prompt_tokens counts every
// input token, cached or not.
func usageOut(u conv.Usage) *outUsage {
	o := &outUsage{PromptTokens: u.PromptTotal(), CompletionTokens: u.Output}
	o.TotalTokens = o.PromptTokens + o.CompletionTokens
	o.PromptTokensDetails.CachedTokens = u.CacheRead
	o.CompletionTokensDetails.ReasoningTokens = u.Reasoning
	return o
}

// stopReason maps a finish_reason; a response with tool calls stopped to
// use them unless it ran out of tokens.
func stopReason(finish string, hasCalls bool) conv.StopReason {
	switch finish {
	case "length":
		return conv.StopMaxTokens
	case "content_filter":
		return conv.StopRefusal
	case "tool_calls", "function_call":
		return conv.StopToolUse
	}
	if hasCalls {
		return conv.StopToolUse
	}
	return conv.StopEnd
}

// finishReason is the finish_reason a Chat client reads for s.
func finishReason(s conv.StopReason) string {
	switch s {
	case conv.StopMaxTokens:
		return "length"
	case conv.StopToolUse:
		return "tool_calls"
	case conv.StopRefusal:
		return "content_filter"
	}
	return "stop" // end_turn, stop_sequence, pause_turn
}

// Reasoning some providers inline at the start of the content.
const (
	openThink  = "<think>"
	closeThink = "</think>"
)

// splitThink splits content that opens with <think> into its reasoning
// and the text after </think>, each without the blank space that follows
// a tag. Without a closing tag all of it is reasoning (the answer was cut
// while thinking). ok is false when content does not open with <think>.
func splitThink(content string) (reasoning, text string, ok bool) {
	rest, ok := strings.CutPrefix(content, openThink)
	if !ok {
		return "", content, false
	}
	reasoning, text, _ = strings.Cut(rest, closeThink)
	return trimLead(reasoning), trimLead(text), true
}

// trimLead drops the blank space at the start of s.
func trimLead(s string) string { return strings.TrimLeft(s, " \t\r\n") }

// parseDataURI splits "data:<media type>;base64,<data>". ok is false for
// anything else, a URL included.
func parseDataURI(s string) (mediaType, data string, ok bool) {
	rest, ok := strings.CutPrefix(s, "data:")
	if !ok {
		return "", "", false
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", "", false
	}
	meta, ok = strings.CutSuffix(meta, ";base64")
	if !ok {
		return "", "", false
	}
	mediaType, _, _ = strings.Cut(meta, ";") // parameters such as charset
	return mediaType, data, true
}

// dataURI is base64 data as a data: URI.
func dataURI(mediaType, data string) string {
	return "data:" + mediaType + ";base64," + data
}
