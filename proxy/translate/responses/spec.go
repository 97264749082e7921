package responses

import (
	"encoding/json"
	"fmt"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Protocol is the OpenAI Responses API, as endpoints and the log name it.
const Protocol conv.Protocol = "openai-responses"

func init() { conv.Declare(Spec) }

// Spec is the Responses API in the protocol table (package translate).
var Spec = &conv.Spec{
	Protocol:      Protocol,
	Codec:         Codec,
	Family:        "openai",
	Profile:       "openai",
	Inbound:       []string{"/v1/responses"},
	Version:       "/v1",
	EventKind:     eventKind,
	BodyUsage:     func(b []byte) (conv.Usage, bool) { return usageIn(b, false) },
	EventUsage:    func(b []byte) (conv.Usage, bool) { return usageIn(b, true) },
	ErrorBody:     conv.OpenAIErrorBody,
	StreamError:   streamError,
	ErrorStatuses: conv.OpenAIErrorStatuses,
	ProbeModel:    "gpt-4o-mini",
	Probe: func(model string) (string, []byte) {
		mj, _ := json.Marshal(model)
		return "/v1/responses", fmt.Appendf(nil, `{"model":%s,"max_output_tokens":16,"input":"ping"}`, mj)
	},
	ModelsAfter:  "after",
	ModelsAnswer: conv.OpenAIModels,
}

// eventKind: response.created and response.in_progress open a stream,
// error and response.failed report a failure, response.completed and
// response.incomplete end it.
func eventKind(name string, data []byte, _ bool) conv.EventKind {
	name, empty := conv.SSEType(name, data)
	if empty {
		return conv.EventPrelude // a comment or keep-alive
	}
	switch name {
	case "response.created", "response.in_progress":
		return conv.EventPrelude
	case "error", "response.failed":
		return conv.EventError
	case "response.completed", "response.incomplete":
		return conv.EventTerminal
	}
	return conv.EventContent
}

// usageIn reads a body's or an event's usage, as the decoders read it.
func usageIn(b []byte, event bool) (conv.Usage, bool) {
	u, ok := conv.UsageMember[wireUsage](b, event)
	if !ok {
		return conv.Usage{}, false
	}
	return u.usage(), true
}

// streamError ends a started stream with an error event.
func streamError(msg string) []byte {
	b, _ := json.Marshal(struct {
		Type    string  `json:"type"`
		Code    string  `json:"code"`
		Message string  `json:"message"`
		Param   *string `json:"param"`
	}{Type: "error", Code: "upstream_error", Message: msg})
	return fmt.Appendf(nil, "event: error\ndata: %s\n\n", b)
}
