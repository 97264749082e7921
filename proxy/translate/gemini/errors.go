package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Error is what classification needs of a Gemini error body,
// {"error":{"code","message","status","details"}}
// (ai.google.dev/gemini-api/docs/troubleshooting lists the statuses; the
// details are google.rpc messages: RetryInfo, QuotaFailure, ErrorInfo).
type Error struct {
	Code    int    // the HTTP status the body names
	Status  string // RESOURCE_EXHAUSTED, INVALID_ARGUMENT, …
	Message string
	// RetryDelay is RetryInfo.retryDelay ("30s"), 0 when not given.
	RetryDelay time.Duration
	// RateLimited: RESOURCE_EXHAUSTED (or a 429), a limit to wait out.
	RateLimited bool
	// Quota: the quota or the money is spent for longer than a retry: a
	// QuotaFailure on a per-day quota, billing not enabled, or quota and
	// billing words without a retry delay under an hour (Gemini's
	// per-minute limit says "exceeded your current quota … billing" and
	// gives 30 s: that is RateLimited only).
	Quota bool
	// Auth: the key is refused — UNAUTHENTICATED, PERMISSION_DENIED, or
	// an ErrorInfo API_KEY_INVALID (which comes as INVALID_ARGUMENT).
	Auth bool
}

type detail struct {
	Type       string `json:"@type"`
	RetryDelay string `json:"retryDelay"`
	Reason     string `json:"reason"`
	Violations []struct {
		QuotaID     string `json:"quotaId"`
		QuotaMetric string `json:"quotaMetric"`
	} `json:"violations"`
}

// ParseError reads a Gemini error body (also the one-element array form
// of a stream without alt=sse); ok is false when body is not one.
func ParseError(body []byte) (e Error, ok bool) {
	var w struct {
		Error *wireError `json:"error"`
	}
	b := bytes.TrimSpace(body)
	if len(b) > 0 && b[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(b, &arr) != nil || len(arr) == 0 {
			return Error{}, false
		}
		b = arr[0]
	}
	if json.Unmarshal(b, &w) != nil || w.Error == nil {
		return Error{}, false
	}
	e = Error{Code: w.Error.Code, Status: w.Error.Status, Message: w.Error.Message}
	e.RateLimited = e.Status == "RESOURCE_EXHAUSTED" || e.Code == 429
	e.Auth = e.Status == "UNAUTHENTICATED" || e.Status == "PERMISSION_DENIED"
	spent := false
	for _, raw := range w.Error.Details {
		var d detail
		if json.Unmarshal(raw, &d) != nil {
			continue
		}
		switch {
		case strings.HasSuffix(d.Type, "google.rpc.RetryInfo"):
			if v, err := time.ParseDuration(d.RetryDelay); err == nil && v > 0 {
				e.RetryDelay = v
			}
		case strings.HasSuffix(d.Type, "google.rpc.ErrorInfo"):
			e.Auth = e.Auth || d.Reason == "API_KEY_INVALID" || d.Reason == "API_KEY_EXPIRED"
			spent = spent || strings.Contains(d.Reason, "BILLING")
		case strings.HasSuffix(d.Type, "google.rpc.QuotaFailure"):
			for _, v := range d.Violations {
				spent = spent || strings.Contains(v.QuotaID, "PerDay")
			}
		}
	}
	msg := strings.ToLower(e.Message)
	words := strings.Contains(msg, "quota") || strings.Contains(msg, "billing") || strings.Contains(msg, "credits")
	shortRetry := e.RetryDelay > 0 && e.RetryDelay < time.Hour
	e.Quota = spent || (words && !shortRetry && (e.RateLimited || e.Code == 400 || e.Code == 403))
	return e, true
}

// statuses are the canonical status names by HTTP status, as Gemini
// pairs them.
var statuses = map[int]string{
	400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL",
	501: "NOT_IMPLEMENTED", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}

func httpStatus(status string) int {
	for code, s := range statuses {
		if s == status {
			return code
		}
	}
	return 500
}

// ErrorBody is Gemini's error shape for a Gemini client: code is the HTTP
// status it is sent with, retry (when positive) a RetryInfo detail.
func ErrorBody(code int, msg string, retry time.Duration) []byte {
	status, ok := statuses[code]
	if !ok {
		status = "UNKNOWN"
		if code >= 500 {
			status = "INTERNAL"
		}
	}
	e := map[string]any{"code": code, "message": msg, "status": status}
	if retry > 0 {
		e["details"] = []map[string]string{{
			"@type":      "type.googleapis.com/google.rpc.RetryInfo",
			"retryDelay": fmt.Sprintf("%ds", int64((retry+time.Second-1)/time.Second)),
		}}
	}
	return conv.Marshal(map[string]any{"error": e})
}

// errorType names a stream error's status in the words the other
// codecs' clients know (Anthropic's error types).
func errorType(status string) string {
	switch status {
	case "RESOURCE_EXHAUSTED":
		return "rate_limit_error"
	case "UNAVAILABLE":
		return "overloaded_error"
	case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE":
		return "invalid_request_error"
	case "UNAUTHENTICATED":
		return "authentication_error"
	case "PERMISSION_DENIED":
		return "permission_error"
	case "NOT_FOUND":
		return "not_found_error"
	}
	return "api_error"
}

// statusFor is the reverse, for a Gemini client's stream.
func statusFor(typ string) string {
	switch typ {
	case "rate_limit_error", "rate_limit_exceeded":
		return "RESOURCE_EXHAUSTED"
	case "overloaded_error":
		return "UNAVAILABLE"
	case "invalid_request_error":
		return "INVALID_ARGUMENT"
	case "authentication_error":
		return "UNAUTHENTICATED"
	case "permission_error":
		return "PERMISSION_DENIED"
	case "not_found_error":
		return "NOT_FOUND"
	}
	return "INTERNAL"
}
