package conv

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// This file holds what several protocols' Specs share: reading an SSE
// event's type, finding a usage object, and the OpenAI error shape.

// SSEType is an event's name, or when it has none the type its data
// names; empty reports an event without name or data (a comment or a
// keep-alive). Unreadable data names no type.
func SSEType(name string, data []byte) (typ string, empty bool) {
	if name != "" {
		return name, false
	}
	if len(data) == 0 {
		return "", true
	}
	var t struct{ Type string }
	_ = json.Unmarshal(data, &t) // an unreadable event counts as content
	return t.Type, false
}

var usageKey = []byte(`"usage"`)

// UsageMember decodes, into a protocol's own usage type W, the usage
// object of a body (its top-level usage) or, for an event, of an SSE data
// payload: its usage, message.usage (Anthropic's message_start) or
// response.usage (Responses' response.completed), the first there is.
// One pass over b (Lookup), whatever its shape; only the usage objects
// are decoded.
func UsageMember[W any](b []byte, event bool) (*W, bool) {
	paths := bodyUsage
	if event {
		if !bytes.Contains(b, usageKey) {
			return nil, false
		}
		paths = eventUsage
	}
	vals, ok := Lookup(b, paths...)
	if !ok {
		return nil, false
	}
	for _, occurrences := range vals {
		var w *W
		for _, v := range occurrences {
			if string(v) == "null" {
				w = nil
				continue
			}
			if w == nil {
				w = new(W)
			}
			if decodeUsage(v, w) != nil {
				return nil, false // as a decode of the whole document would fail
			}
		}
		if w != nil {
			return w, true
		}
	}
	return nil, false
}

// UsageReader is a protocol's usage type that reads one usage object's
// members itself (with Fields), as json.Unmarshal would set them: every
// answer's and many events' usage is read so, and encoding/json's
// reflection cost several times the read on a request's cold caches
// (bench/NOTES.md, The last misses). Each codec's tests hold its reader
// to json.Unmarshal.
type UsageReader interface {
	ReadUsage(r *Reader) error
}

// decodeUsage decodes the usage object v into w, with w's own reader
// when it has one.
func decodeUsage(v []byte, w any) error {
	ur, ok := w.(UsageReader)
	if !ok {
		return json.Unmarshal(v, w)
	}
	r := NewReader(v)
	if err := ur.ReadUsage(r); err != nil {
		return err
	}
	return r.End()
}

var (
	bodyUsage  = [][]string{{"usage"}}
	eventUsage = [][]string{{"usage"}, {"message", "usage"}, {"response", "usage"}}
)

// OpenAIErrorBody is an error as the OpenAI APIs answer one, with ccmesh's
// code for the status.
func OpenAIErrorBody(status int, msg string) []byte {
	typ, code := openAIErrorType(status)
	b, _ := json.Marshal(openAIError{Error: openAIErrorInfo{Message: msg, Type: typ, Code: code}})
	return b
}

// OpenAIStreamError ends a started Chat Completions stream: an error chunk
// without an event name.
func OpenAIStreamError(msg string) []byte {
	b, _ := json.Marshal(openAIError{Error: openAIErrorInfo{Message: msg, Type: "server_error", Code: "upstream_error"}})
	return append(append([]byte("data: "), b...), "\n\n"...)
}

type openAIError struct {
	Error openAIErrorInfo `json:"error"`
}

type openAIErrorInfo struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

// openAIErrorType maps a status to OpenAI's type and a ccmesh code.
func openAIErrorType(status int) (typ, code string) {
	switch status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge:
		return "invalid_request_error", "invalid_request"
	case http.StatusUnauthorized:
		return "invalid_request_error", "invalid_api_key"
	case http.StatusForbidden:
		return "invalid_request_error", "forbidden"
	case http.StatusTooManyRequests:
		return "rate_limit_exceeded", "rate_limit_exceeded"
	case http.StatusPaymentRequired:
		return "insufficient_quota", "insufficient_quota"
	}
	return "server_error", "upstream_unavailable"
}

// OpenAIErrorStatuses are the error types OpenAI's upstreams put in
// stream error events, and the status each stands for.
var OpenAIErrorStatuses = map[string]int{"rate_limit_exceeded": http.StatusTooManyRequests}

// OpenAIModels is ccmesh's own GET /v1/models answer in OpenAI's shape.
func OpenAIModels(ids []string) any {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: make([]model, 0, len(ids))}
	for _, id := range ids {
		list.Data = append(list.Data, model{ID: id, Object: "model", OwnedBy: "ccmesh"})
	}
	return list
}

// ReadModelList reads a model list page of Anthropic's shape
// ({"data","has_more","last_id"}) or OpenAI's ({"data"}; paged lists of
// its shape add has_more): the cursor of the next page is last_id, else
// the page's last id.
func ReadModelList(b []byte) (ModelPage, error) {
	var p struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		HasMore bool   `json:"has_more"`
		LastID  string `json:"last_id"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return ModelPage{}, err
	}
	out := ModelPage{IDs: make([]string, 0, len(p.Data)), More: p.HasMore, Cursor: p.LastID}
	for _, m := range p.Data {
		out.IDs = append(out.IDs, m.ID)
	}
	if out.Cursor == "" && len(p.Data) > 0 {
		out.Cursor = p.Data[len(p.Data)-1].ID
	}
	return out, nil
}
