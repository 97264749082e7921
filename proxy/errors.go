package proxy

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// errShape is the error format of the inbound protocol (docs/BEHAVIOUR.md#inbound-api).
type errShape uint8

const (
	shapeClaude errShape = iota
	shapeOpenAI
)

// shapeOfRequest is used before the route is known (404, guards).
func shapeOfRequest(r *http.Request) errShape {
	if r.Header.Get("anthropic-version") != "" {
		return shapeClaude
	}
	return shapeOpenAI
}

// claudeErrorType maps a status to Anthropic's error type names.
func claudeErrorType(status int) string {
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

type claudeError struct {
	Type  string          `json:"type"`
	Error claudeErrorBody `json:"error"`
}

type claudeErrorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type openAIError struct {
	Error openAIErrorBody `json:"error"`
}

type openAIErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

// errorBody renders msg in shape for status.
func errorBody(shape errShape, status int, msg string) []byte {
	var v any
	if shape == shapeClaude {
		v = claudeError{Type: "error", Error: claudeErrorBody{Type: claudeErrorType(status), Message: msg}}
	} else {
		typ, code := openAIErrorType(status)
		v = openAIError{Error: openAIErrorBody{Message: msg, Type: typ, Code: code}}
	}
	b, _ := json.Marshal(v) // plain structs of strings always marshal
	return b
}

// writeError answers with an error ccmesh produced itself.
func writeError(w http.ResponseWriter, shape errShape, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	b := errorBody(shape, status, msg)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b) // a client that left cannot be told anything
}

// setCCMeshHeaders sets the headers every proxy response carries: which
// endpoint answered after how many attempts (docs/BEHAVIOUR.md#attempt-loop),
// and, because the proxy shares its origin with the admin UI, the two that
// keep an upstream's body from ever running as a page there
// (docs/BEHAVIOUR.md#safety).
func setCCMeshHeaders(h http.Header, endpoint string, attempts int) {
	h.Set("X-Ccmesh-Endpoint", endpoint)
	h.Set("X-Ccmesh-Attempts", strconv.Itoa(attempts))
	h.Set("X-Fallback-Triggered", strconv.FormatBool(attempts > 1))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox")
}

// exhaustedAdvice is the last words of the answer when no attempt
// succeeded: "retry shortly" only when some failure may pass by itself (a
// transport error, a timeout, a 5xx, a rate limit, a broken stream). When
// every attempt failed in a way a retry repeats — a request the
// endpoints' protocols cannot carry, a key refused (401, 403), a path
// that does not exist (404) — it says what to change instead
// (docs/BEHAVIOUR.md#attempt-loop).
func exhaustedAdvice(atts []Attempt) string {
	var translation, key, path bool
	for _, a := range atts {
		switch {
		case a.ErrorType == ErrTranslation:
			translation = true
		case a.ErrorType == ErrStatus && (a.Status == http.StatusUnauthorized || a.Status == http.StatusForbidden):
			key = true
		case a.ErrorType == ErrStatus && a.Status == http.StatusNotFound:
			path = true
		default:
			return "retry shortly; ccmesh skips failing endpoints on its own"
		}
	}
	var fixes []string
	if translation {
		fixes = append(fixes, "send it to an endpoint that speaks the client's protocol, or change what the request asks for")
	}
	if key {
		fixes = append(fixes, "check the endpoint's API key and its permissions")
	}
	if path {
		fixes = append(fixes, "check the endpoint's base URL")
	}
	if len(fixes) == 0 {
		return "retry shortly; ccmesh skips failing endpoints on its own"
	}
	return "retrying will not help: " + strings.Join(fixes, "; ")
}
