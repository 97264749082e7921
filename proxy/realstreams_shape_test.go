package proxy

import (
	"encoding/json"
	"fmt"
)

// errorShape reports what is wrong with an error body for a client of
// protocol client: "" when it is the client's own error object.
func errorShape(client Protocol, body []byte) string {
	var v struct {
		Type  string `json:"type"`
		Error *struct {
			Type    string          `json:"type"`
			Message string          `json:"message"`
			Code    json.RawMessage `json:"code"` // Gemini's a number, OpenAI's a word
			Status  string          `json:"status"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Sprintf("the error body is not JSON: %v: %.200s", err, body)
	}
	switch {
	case v.Error == nil || v.Error.Message == "":
		return fmt.Sprintf("no error object with a message: %.300s", body)
	case client == ProtocolAnthropic && (v.Type != "error" || v.Error.Type == ""):
		return fmt.Sprintf("not an Anthropic error object: %.300s", body)
	case client == ProtocolGemini && (!validGeminiCode(v.Error.Code) || v.Error.Status == ""):
		return fmt.Sprintf("not a Gemini error object (code, message, status): %.300s", body)
	}
	return ""
}

// validGeminiCode: a Gemini error's code is its HTTP status, a number.
func validGeminiCode(raw json.RawMessage) bool {
	var code int
	return json.Unmarshal(raw, &code) == nil && code >= 400
}

// streamCheck checks the order of a client's stream events as its
// protocol defines it; event returns a problem, end the last one.
type streamCheck struct {
	proto Protocol
	n     int    // events so far
	last  string // the last event's name (Chat: "[DONE]", "error" or "chunk")
	ended bool   // a terminal event came
	// Anthropic: blocks started and the open one (-1 when none).
	blocks, open int
	// Responses: the items announced, by id.
	items map[string]bool
}

func newStreamCheck(p Protocol) *streamCheck {
	return &streamCheck{proto: p, open: -1, items: map[string]bool{}}
}

func (s *streamCheck) event(name string, data []byte) string {
	s.n++
	if s.ended {
		return fmt.Sprintf("event %d (%s) after the stream's end", s.n, name)
	}
	switch s.proto {
	case ProtocolAnthropic:
		return s.anthropic(name, data)
	case ProtocolOpenAIChat:
		return s.chat(data)
	case ProtocolGemini:
		return s.gemini(name, data)
	}
	return s.responses(name, data)
}

func (s *streamCheck) anthropic(name string, data []byte) string {
	var ev struct {
		Type  string `json:"type"`
		Index *int   `json:"index"`
	}
	if err := json.Unmarshal(data, &ev); err != nil || ev.Type != name {
		return fmt.Sprintf("event %d %q: data %.200s", s.n, name, data)
	}
	s.last = name
	if (s.n == 1) != (name == "message_start") {
		return fmt.Sprintf("event %d is %s: message_start comes first, once", s.n, name)
	}
	idx := -2
	if ev.Index != nil {
		idx = *ev.Index
	}
	switch name {
	case "content_block_start":
		if s.open >= 0 || idx != s.blocks {
			return fmt.Sprintf("content_block_start %d with block %d open after %d blocks", idx, s.open, s.blocks)
		}
		s.open = idx
		s.blocks++
	case "content_block_delta":
		if idx != s.open {
			return fmt.Sprintf("content_block_delta for block %d, open %d", idx, s.open)
		}
	case "content_block_stop":
		if idx != s.open {
			return fmt.Sprintf("content_block_stop for block %d, open %d", idx, s.open)
		}
		s.open = -1
	case "message_delta":
		if s.open >= 0 {
			return fmt.Sprintf("message_delta with block %d open", s.open)
		}
	case "message_stop", "error":
		s.ended = true
	}
	return ""
}

func (s *streamCheck) chat(data []byte) string {
	if string(data) == "[DONE]" {
		s.last, s.ended = "[DONE]", true
		return ""
	}
	var c struct {
		Object string          `json:"object"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Sprintf("chunk %d is not JSON: %.200s", s.n, data)
	}
	if len(c.Error) > 0 {
		s.last, s.ended = "error", true
		return ""
	}
	s.last = "chunk"
	if c.Object != "chat.completion.chunk" {
		return fmt.Sprintf("chunk %d of object %q", s.n, c.Object)
	}
	return ""
}

func (s *streamCheck) responses(name string, data []byte) string {
	var ev struct {
		Type   string `json:"type"`
		Seq    *int   `json:"sequence_number"`
		ItemID string `json:"item_id"`
		Item   *struct {
			ID string `json:"id"`
		} `json:"item"`
	}
	if err := json.Unmarshal(data, &ev); err != nil || ev.Type != name {
		return fmt.Sprintf("event %d %q: data %.200s", s.n, name, data)
	}
	s.last = name
	if ev.Seq == nil || *ev.Seq != s.n-1 {
		return fmt.Sprintf("event %d (%s) has sequence_number %v", s.n, name, ev.Seq)
	}
	if (s.n == 1) != (name == "response.created") {
		return fmt.Sprintf("event %d is %s: response.created comes first, once", s.n, name)
	}
	switch {
	case name == "response.output_item.added" && ev.Item != nil:
		s.items[ev.Item.ID] = true
	case ev.ItemID != "" && !s.items[ev.ItemID]:
		return fmt.Sprintf("%s for item %s before its output_item.added", name, ev.ItemID)
	case name == "response.completed", name == "response.failed", name == "error":
		s.ended = true
	}
	return ""
}

// gemini checks one chunk of streamGenerateContent?alt=sse: unnamed, a
// GenerateContentResponse or an error object; the chunk with a
// finishReason, or the error, is the last.
func (s *streamCheck) gemini(name string, data []byte) string {
	var c struct {
		Candidates []struct {
			FinishReason string `json:"finishReason"`
		} `json:"candidates"`
		PromptFeedback json.RawMessage `json:"promptFeedback"`
		UsageMetadata  json.RawMessage `json:"usageMetadata"`
		Error          json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &c); err != nil || name != "" {
		return fmt.Sprintf("chunk %d (event %q) is not an unnamed JSON object: %.200s", s.n, name, data)
	}
	s.last = "chunk"
	switch {
	case len(c.Error) > 0:
		s.last, s.ended = "error", true
	case len(c.Candidates) == 0 && len(c.PromptFeedback) == 0 && len(c.UsageMetadata) == 0:
		return fmt.Sprintf("chunk %d has none of candidates, promptFeedback, usageMetadata: %.200s", s.n, data)
	case len(c.Candidates) > 0 && c.Candidates[0].FinishReason != "":
		s.ended = true
	}
	return ""
}

// end reports a stream that stopped without its protocol's last event.
func (s *streamCheck) end() string {
	if !s.ended {
		return fmt.Sprintf("the stream ended after %s without its terminal event", s.last)
	}
	return ""
}
