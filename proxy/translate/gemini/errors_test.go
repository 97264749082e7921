package gemini

import (
	"testing"
	"time"
)

func TestParseError(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Error
	}{{
		name: "per-minute limit: a rate limit with its delay, though the words say quota",
		body: `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED",
			"details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
			{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},
			{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"31s"}]}}`,
		want: Error{Code: 429, Status: "RESOURCE_EXHAUSTED", Message: "You exceeded your current quota, please check your plan and billing details.",
			RetryDelay: 31 * time.Second, RateLimited: true},
	}, {
		name: "per-day quota: spent",
		body: `{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED",
			"details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},
			{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}`,
		want: Error{Code: 429, Status: "RESOURCE_EXHAUSTED", Message: "You exceeded your current quota.", RetryDelay: 1500 * time.Millisecond, RateLimited: true, Quota: true},
	}, {
		name: "quota words without a delay",
		body: `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`,
		want: Error{Code: 429, Status: "RESOURCE_EXHAUSTED", Message: "Resource has been exhausted (e.g. check quota).", RateLimited: true, Quota: true},
	}, {
		name: "an invalid key comes as INVALID_ARGUMENT",
		body: `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT",
			"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}`,
		want: Error{Code: 400, Status: "INVALID_ARGUMENT", Message: "API key not valid. Please pass a valid API key.", Auth: true},
	}, {
		name: "permission denied",
		body: `{"error":{"code":403,"message":"Method doesn't allow unregistered callers.","status":"PERMISSION_DENIED"}}`,
		want: Error{Code: 403, Status: "PERMISSION_DENIED", Message: "Method doesn't allow unregistered callers.", Auth: true},
	}, {
		name: "billing disabled",
		body: `{"error":{"code":403,"message":"This API method requires billing to be enabled.","status":"PERMISSION_DENIED",
			"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"BILLING_DISABLED"}]}}`,
		want: Error{Code: 403, Status: "PERMISSION_DENIED", Message: "This API method requires billing to be enabled.", Auth: true, Quota: true},
	}, {
		name: "the array form of a stream without alt=sse",
		body: `[{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}]`,
		want: Error{Code: 503, Status: "UNAVAILABLE", Message: "The model is overloaded. Please try again later."},
	}, {
		name: "a bad request",
		body: `{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts.","status":"INVALID_ARGUMENT"}}`,
		want: Error{Code: 400, Status: "INVALID_ARGUMENT", Message: "Function call is missing a thought_signature in functionCall parts."},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseError([]byte(tt.body))
			if !ok {
				t.Fatal("not read as an error")
			}
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
	for _, body := range []string{``, `{}`, `[]`, `{"error":null}`, `{"candidates":[]}`, `<html>`} {
		if e, ok := ParseError([]byte(body)); ok {
			t.Errorf("ParseError(%q) = %+v, want not an error", body, e)
		}
	}
}

func TestErrorBody(t *testing.T) {
	tests := []struct {
		code  int
		retry time.Duration
		want  string
	}{
		{400, 0, `{"error":{"code":400,"message":"m","status":"INVALID_ARGUMENT"}}`},
		{429, 1500 * time.Millisecond, `{"error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s"}]}}`},
		{502, 0, `{"error":{"code":502,"message":"m","status":"INTERNAL"}}`},
		{503, 0, `{"error":{"code":503,"message":"m","status":"UNAVAILABLE"}}`},
	}
	for _, tt := range tests {
		t.Run(statuses[tt.code], func(t *testing.T) {
			b := ErrorBody(tt.code, "m", tt.retry)
			jsonEqual(t, b, tt.want)
			e, ok := ParseError(b)
			if !ok || e.Code != tt.code || e.RetryDelay != tt.retry.Round(time.Second) {
				t.Errorf("read back %+v, %v", e, ok)
			}
		})
	}
}
