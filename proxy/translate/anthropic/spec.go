package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Protocol is the Anthropic Messages API, as endpoints and the log name it.
const Protocol conv.Protocol = "anthropic"

func init() { conv.Declare(Spec) }

// Spec is the Messages API in the protocol table (package translate).
var Spec = &conv.Spec{
	Protocol:     Protocol,
	Codec:        Codec,
	Family:       "claude",
	Profile:      "claude",
	Inbound:      []string{"/v1/messages", "/v1/messages/count_tokens"},
	CountPath:    "/v1/messages/count_tokens",
	Version:      "/v1",
	KeyHeader:    "X-Api-Key",
	HeaderPrefix: "Anthropic-",
	Headers:      map[string]string{"Anthropic-Version": "2023-06-01"},
	MarkerHeader: "Anthropic-Version",
	EventKind:    eventKind,
	BodyUsage:    bodyUsage,
	EventUsage:   eventUsage,
	ErrorBody:    errorBody,
	StreamError:  streamError,
	ErrorStatuses: map[string]int{
		"overloaded_error": 529,
		"rate_limit_error": http.StatusTooManyRequests,
	},
	SignedThinking:    true,
	RequiredMaxTokens: 8192,
	ProbeModel:        "claude-haiku-4-5",
	Probe: func(model string) (string, []byte) {
		mj, _ := json.Marshal(model)
		return "/v1/messages", fmt.Appendf(nil, `{"model":%s,"max_tokens":1,"messages":[{"role":"user","content":"ping"}]}`, mj)
	},
	ModelsLimit:  [2]string{"limit", "1000"}, // the largest page Anthropic's list serves
	ModelsAfter:  "after_id",
	ModelsAnswer: modelsAnswer,
	DecodeCount:  func(b []byte) (*conv.Request, error) { return Codec.DecodeRequest(b) },
	CountAnswer:  func(n int64) []byte { return fmt.Appendf(nil, `{"input_tokens":%d}`, n) },
	ReadCount:    readCount,
}

// readCount is the input_tokens of a count_tokens answer.
func readCount(body []byte) int64 {
	var doc struct {
		InputTokens int64 `json:"input_tokens"`
	}
	_ = json.Unmarshal(body, &doc) // an unreadable answer counted nothing
	return doc.InputTokens
}

// eventKind: message_start and ping open a stream, error and message_stop
// end it; an event without a name is named by its data's type.
func eventKind(name string, data []byte, _ bool) conv.EventKind {
	name, empty := conv.SSEType(name, data)
	if empty {
		return conv.EventPrelude // a comment or keep-alive
	}
	switch name {
	case "message_start", "ping":
		return conv.EventPrelude
	case "error":
		return conv.EventError
	case "message_stop":
		return conv.EventTerminal
	}
	return conv.EventContent
}

// bodyUsage is a message's usage, read as the response decoder reads it.
func bodyUsage(b []byte) (conv.Usage, bool) {
	u, ok := conv.UsageMember[wireUsage](b, false)
	return u.all(conv.Usage{}), ok
}

// eventUsage reads message_start's message.usage and message_delta's
// usage; a member a report leaves out is 0 (the proxy keeps the earlier
// report's count then).
func eventUsage(data []byte) (conv.Usage, bool) {
	u, ok := conv.UsageMember[wireUsage](data, true)
	return u.all(conv.Usage{}), ok
}

type errorDoc struct {
	Type  string    `json:"type"`
	Error errorInfo `json:"error"`
}

type errorInfo struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func errorBody(status int, msg string) []byte {
	b, _ := json.Marshal(errorDoc{Type: "error", Error: errorInfo{Type: statusErrorType(status), Message: msg}})
	return b
}

// streamError ends a started stream as Anthropic's own overload does.
func streamError(msg string) []byte {
	b, _ := json.Marshal(errorDoc{Type: "error", Error: errorInfo{Type: "overloaded_error", Message: msg}})
	return fmt.Appendf(nil, "event: error\ndata: %s\n\n", b)
}

// statusErrorType maps a status to Anthropic's error type names.
func statusErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "billing_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable, 529:
		return "overloaded_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	}
	return "api_error"
}

type model struct {
	Type        string    `json:"type"`
	ID          string    `json:"id"`
	DisplayName string    `json:"display_name"`
	CreatedAt   time.Time `json:"created_at"`
}

type modelList struct {
	Data    []model `json:"data"`
	HasMore bool    `json:"has_more"`
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
}

func modelsAnswer(ids []string) any {
	list := modelList{Data: make([]model, 0, len(ids))}
	for _, id := range ids {
		list.Data = append(list.Data, model{Type: "model", ID: id, DisplayName: id})
	}
	if len(ids) > 0 {
		list.FirstID, list.LastID = &ids[0], &ids[len(ids)-1]
	}
	return list
}
