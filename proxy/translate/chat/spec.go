package chat

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Protocol is OpenAI Chat Completions, as endpoints and the log name it.
const Protocol conv.Protocol = "openai-chat"

func init() { conv.Declare(Spec) }

// Spec is Chat Completions in the protocol table (package translate).
var Spec = &conv.Spec{
	Protocol:      Protocol,
	Codec:         Codec,
	Family:        "openai",
	Profile:       "openai",
	Inbound:       []string{"/v1/chat/completions"},
	Version:       "/v1",
	EventKind:     eventKind,
	BodyUsage:     func(b []byte) (conv.Usage, bool) { return usageIn(b, false) },
	EventUsage:    func(b []byte) (conv.Usage, bool) { return usageIn(b, true) },
	UsageAsked:    func(body []byte) bool { return bytes.Contains(body, includeUsageKey) },
	StreamText:    deltaText,
	ErrorBody:     conv.OpenAIErrorBody,
	StreamError:   conv.OpenAIStreamError,
	ErrorStatuses: conv.OpenAIErrorStatuses,
	ProbeModel:    "gpt-4o-mini",
	Probe: func(model string) (string, []byte) {
		mj, _ := json.Marshal(model)
		return "/v1/chat/completions", fmt.Appendf(nil, `{"model":%s,"max_tokens":1,"messages":[{"role":"user","content":"ping"}]}`, mj)
	},
	ModelsAfter:  "after",
	ModelsAnswer: conv.OpenAIModels,
}

var (
	includeUsageKey = []byte(`"include_usage"`)
	errorKey        = []byte(`"error":`)
)

// usageIn reads a body's or an event's usage, as the decoders read it.
func usageIn(b []byte, event bool) (conv.Usage, bool) {
	u, ok := conv.UsageMember[wireUsage](b, event)
	if !ok {
		return conv.Usage{}, false
	}
	return u.neutral(), true
}

// eventKind: once the hold is released only errors and the end matter,
// so chunks skip the JSON decode then.
func eventKind(_ string, data []byte, holding bool) conv.EventKind {
	if !holding && !bytes.Contains(data, errorKey) {
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			return conv.EventTerminal
		}
		return conv.EventContent
	}
	if len(data) == 0 {
		return conv.EventPrelude
	}
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		return conv.EventTerminal
	}
	var chunk struct {
		Error   json.RawMessage `json:"error"`
		Choices []struct {
			Delta        map[string]json.RawMessage `json:"delta"`
			FinishReason *string                    `json:"finish_reason"`
		} `json:"choices"`
	}
	if bytes.Contains(data, errorKey) {
		if json.Unmarshal(data, &chunk) == nil && len(chunk.Error) > 0 && string(chunk.Error) != "null" {
			return conv.EventError
		}
	}
	if json.Unmarshal(data, &chunk) != nil {
		return conv.EventContent
	}
	for _, c := range chunk.Choices {
		if c.FinishReason != nil {
			return conv.EventContent
		}
		for k, v := range c.Delta {
			switch string(v) {
			case "null", `""`, "[]":
				continue
			}
			if k != "role" {
				return conv.EventContent
			}
		}
	}
	return conv.EventPrelude
}

// deltaText is the text a chunk adds, for the output estimate.
func deltaText(data []byte) string {
	var chunk struct {
		Choices []struct {
			Delta struct {
				Content          string `json:"content"`
				ReasoningContent string `json:"reasoning_content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &chunk) != nil || len(chunk.Choices) == 0 {
		return ""
	}
	d := chunk.Choices[0].Delta
	return d.ReasoningContent + d.Content
}
