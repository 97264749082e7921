package proxy

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
	"github.com/ccmesh/ccmesh/proxy/translate/gemini"
)

// TestClassificationTable drives every row of docs/BEHAVIOUR.md#attempt-loop's table through the
// real server, non-streamed and streamed: endpoint a answers the row's
// fault, endpoint b is healthy.
func TestClassificationTable(t *testing.T) {
	type row struct {
		name      string
		fault     proxytest.Response
		keyless   bool // endpoint a has no key: the client's auth passes through
		refused   bool // endpoint a's port is closed
		wantCode  int  // status the client gets
		wantTried string
		errType   ErrorType
		counted   bool
	}
	quota := proxytest.AnthropicError(400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.")
	rows := []row{
		{name: "2xx", fault: okClaude(), wantCode: 200, wantTried: "a", counted: true},
		{name: "400 credit balance too low (quota)", fault: quota, wantCode: 200, wantTried: "a,b", errType: ErrQuota, counted: true},
		{name: "402 without quota text", fault: proxytest.AnthropicError(402, "billing_error", "payment required"), wantCode: 200, wantTried: "a,b", errType: ErrQuota, counted: true},
		{name: "401 keyless passes through", fault: proxytest.AnthropicError(401, "authentication_error", "invalid x-api-key"), keyless: true, wantCode: 401, wantTried: "a", errType: ErrStatus},
		{name: "401 injected key", fault: proxytest.AnthropicError(401, "authentication_error", "invalid x-api-key"), wantCode: 200, wantTried: "a,b", errType: ErrStatus, counted: true},
		{name: "403", fault: proxytest.AnthropicError(403, "permission_error", "forbidden"), wantCode: 200, wantTried: "a,b", errType: ErrStatus, counted: true},
		{name: "404 on known path", fault: proxytest.AnthropicError(404, "not_found_error", "no route"), wantCode: 200, wantTried: "a,b", errType: ErrStatus, counted: true},
		{name: "418 other 4xx", fault: proxytest.Response{Status: 418, Body: "teapot"}, wantCode: 200, wantTried: "a,b", errType: ErrStatus, counted: true},
		{name: "429 without retry time", fault: proxytest.AnthropicError(429, "rate_limit_error", "slow down"), wantCode: 200, wantTried: "a,b", errType: ErrRateLimit, counted: true},
		{name: "429 with retry-after", fault: proxytest.AnthropicError(429, "rate_limit_error", "slow down").WithHeader("Retry-After", "30"), wantCode: 200, wantTried: "a,b", errType: ErrRateLimit, counted: true},
		{name: "302 is a failure, never followed", fault: proxytest.Response{Status: 302}.WithHeader("Location", "http://127.0.0.1:9/elsewhere"), wantCode: 200, wantTried: "a,b", errType: ErrStatus, counted: true},
		{name: "connection refused", refused: true, wantCode: 200, wantTried: "a,a,b", errType: ErrTransport, counted: true},
	}
	for _, code := range []int{400, 405, 406, 413, 414, 415, 422, 431} {
		rows = append(rows, row{name: fmt.Sprintf("%d neutral", code), fault: proxytest.AnthropicError(code, "invalid_request_error", "bad"), wantCode: code, wantTried: "a", errType: ErrStatus})
	}
	for _, code := range []int{500, 502, 503, 529, 408} {
		rows = append(rows, row{name: fmt.Sprintf("%d retried once", code), fault: proxytest.AnthropicError(code, "api_error", "boom"), wantCode: 200, wantTried: "a,a,b", errType: ErrStatus, counted: true})
	}
	for _, stream := range []bool{false, true} {
		for _, tc := range rows {
			t.Run(fmt.Sprintf("stream=%v/%s", stream, tc.name), func(t *testing.T) {
				okResp, body := okClaude(), claudeBody
				if stream {
					okResp, body = okClaudeStream(), claudeStreamBody
					if tc.fault.Status == 0 {
						tc.fault = okClaudeStream()
					}
				}
				a := upstream(t, tc.fault)
				b := upstream(t, okResp)
				ea, eb := ep(1, "a", a.URL), ep(2, "b", b.URL)
				if tc.refused {
					ea.BaseURL = proxytest.ClosedURL(t)
				}
				if tc.keyless {
					ea.APIKey = ""
				}
				h := newHarness(t, Config{Endpoints: []Endpoint{ea, eb}})
				got := h.post("/v1/messages?beta=true", body, "x-api-key", "client-key")
				rec := h.record()
				if got.status != tc.wantCode {
					t.Fatalf("status = %d, want %d; body %s", got.status, tc.wantCode, got.body)
				}
				if tried := attemptsOn(rec); tried != tc.wantTried {
					t.Errorf("attempts = %q, want %q", tried, tc.wantTried)
				}
				if got.header.Get("X-Ccmesh-Attempts") != fmt.Sprint(len(rec.Attempts)) {
					t.Errorf("x-ccmesh-attempts = %q, want %d", got.header.Get("X-Ccmesh-Attempts"), len(rec.Attempts))
				}
				first := rec.Attempts[0]
				if first.ErrorType != tc.errType {
					t.Errorf("first attempt error_type = %q, want %q", first.ErrorType, tc.errType)
				}
				if first.BreakerCounted != tc.counted {
					t.Errorf("first attempt breaker_counted = %v, want %v", first.BreakerCounted, tc.counted)
				}
				if tc.wantCode == 200 && stream && !strings.Contains(got.body, "message_stop") {
					t.Errorf("stream body lacks message_stop: %q", got.body)
				}
				if tc.wantCode != 200 && got.body != tc.fault.Body {
					t.Errorf("client got %q, want the upstream's own body %q", got.body, tc.fault.Body)
				}
				if !tc.refused && tc.wantTried != "a" && b.Count() != 1 {
					t.Errorf("endpoint b got %d requests, want 1", b.Count())
				}
			})
		}
	}
}

// TestNotFoundPath: unknown paths are answered by ccmesh in the client's
// shape and never reach an upstream.
func TestNotFoundPath(t *testing.T) {
	a := upstream(t, okClaude())
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL)}})
	tests := []struct {
		name, hdrVersion, want string
	}{
		{"claude shape", "2023-06-01", `"type":"not_found_error"`},
		{"openai shape", "", `"code":"invalid_request"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := h.post("/v1/complete", claudeBody, "anthropic-version", tc.hdrVersion)
			if got.status != http.StatusNotFound || !strings.Contains(got.body, tc.want) {
				t.Errorf("got %d %s, want 404 containing %s", got.status, got.body, tc.want)
			}
			if got.header.Get("X-Ccmesh-Attempts") != "0" || got.header.Get("X-Fallback-Triggered") != "false" {
				t.Errorf("ccmesh headers missing on 404: %v", got.header)
			}
			h.record()
		})
	}
	if a.Count() != 0 {
		t.Errorf("upstream got %d requests, want 0", a.Count())
	}
}

// TestBudgetExhausted: every endpoint fails, the client gets the last
// upstream error in its shape with the whole history.
func TestBudgetExhausted(t *testing.T) {
	a := upstream(t, proxytest.AnthropicError(500, "api_error", "a is down"))
	b := upstream(t, proxytest.AnthropicError(403, "permission_error", "b forbids"))
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL), ep(2, "b", b.URL)}})
	got := h.post("/v1/messages", claudeBody)
	rec := h.record()
	if got.status != 403 {
		t.Fatalf("status = %d, want the last upstream status 403", got.status)
	}
	for _, want := range []string{`"type":"permission_error"`, "a: HTTP 500 api_error: a is down (×2)", "b: HTTP 403 permission_error: b forbids"} {
		if !strings.Contains(got.body, want) {
			t.Errorf("body %s lacks %q", got.body, want)
		}
	}
	if got.header.Get("X-Fallback-Triggered") != "true" || got.header.Get("X-Ccmesh-Endpoint") != "b" {
		t.Errorf("headers = %v, want fallback true on endpoint b", got.header)
	}
	if tried := attemptsOn(rec); tried != "a,a,b" {
		t.Errorf("attempts = %q, want a,a,b", tried)
	}
}

// TestAllRateLimited429: every attempt a 429 → 429 with Retry-After.
func TestAllRateLimited429(t *testing.T) {
	a := upstream(t, proxytest.AnthropicError(429, "rate_limit_error", "slow").WithHeader("Retry-After", "7"))
	b := upstream(t, proxytest.AnthropicError(429, "rate_limit_error", "slow").WithHeader("Retry-After", "3"))
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL), ep(2, "b", b.URL)}})
	got := h.post("/v1/messages", claudeBody)
	h.record()
	if got.status != 429 {
		t.Fatalf("status = %d, want 429", got.status)
	}
	// b is free again first: its Retry-After (3 s), rounded up.
	if ra := got.header.Get("Retry-After"); ra != "3" {
		t.Errorf("Retry-After = %q, want 3", ra)
	}
	if !strings.Contains(got.body, `"rate_limit_error"`) {
		t.Errorf("body = %s, want a rate_limit_error", got.body)
	}
}

// TestVerdicts pins the outcome table of docs/BEHAVIOUR.md#attempt-loop at
// the classifier: every status row for a plain answer, and the same rows
// reached through an error event at the start of a 2xx stream, which is
// never handed over as a neutral answer.
func TestVerdicts(t *testing.T) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	broken := failure(breaker.Broken)
	quota := failure(breaker.QuotaExhausted)
	rate := func(d time.Duration) breaker.Outcome {
		return breaker.Outcome{Kind: breaker.Failure, Reason: breaker.RateLimited, RetryAfter: d}
	}
	credit := `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low"}}`
	type row struct {
		name    string
		status  int
		header  http.Header
		body    string
		keyless bool
		want    verdict
	}
	rows := []row{
		{name: "400 spent credit", status: 400, body: credit, want: verdict{act: actNext, outcome: quota, errType: ErrQuota}},
		{name: "403 spent quota", status: 403, body: `{"error":{"message":"quota exceeded"}}`, want: verdict{act: actNext, outcome: quota, errType: ErrQuota}},
		{name: "429 insufficient_quota", status: 429, body: `{"error":{"code":"insufficient_quota"}}`, want: verdict{act: actNext, outcome: quota, errType: ErrQuota}},
		{name: "401 keyless", status: 401, keyless: true, want: verdict{act: actDone, outcome: neutral, errType: ErrStatus}},
		{name: "401 injected key", status: 401, want: verdict{act: actNext, outcome: broken, errType: ErrStatus}},
		{name: "429 with Retry-After", status: 429, header: http.Header{"Retry-After": {"7"}}, want: verdict{act: actNext, outcome: rate(7 * time.Second), errType: ErrRateLimit, retryAfter: 7 * time.Second}},
		{name: "429 without retry time", status: 429, want: verdict{act: actNext, outcome: rate(0), errType: ErrRateLimit}},
		{name: "402 plain", status: 402, want: verdict{act: actNext, outcome: quota, errType: ErrQuota}},
		{name: "403 plain", status: 403, want: verdict{act: actNext, outcome: broken, errType: ErrStatus}},
		{name: "404", status: 404, want: verdict{act: actNext, outcome: broken, errType: ErrStatus}},
		{name: "418", status: 418, want: verdict{act: actNext, outcome: broken, errType: ErrStatus}},
		{name: "408", status: 408, want: verdict{act: actRetry, outcome: broken, errType: ErrStatus}},
		{name: "302 is never followed nor handed over", status: 302, want: verdict{act: actNext, outcome: broken, errType: ErrStatus}},
		{name: "304", status: 304, want: verdict{act: actNext, outcome: broken, errType: ErrStatus}},
	}
	for _, code := range []int{400, 405, 406, 413, 414, 415, 422, 431} {
		rows = append(rows, row{name: fmt.Sprintf("%d neutral", code), status: code, want: verdict{act: actDone, outcome: neutral, errType: ErrStatus}})
	}
	for _, code := range []int{500, 502, 503, 504, 529} {
		rows = append(rows, row{name: fmt.Sprintf("%d", code), status: code, want: verdict{act: actRetry, outcome: broken, errType: ErrStatus}})
	}
	for _, tc := range rows {
		t.Run("plain/"+tc.name, func(t *testing.T) {
			if got := classifyStatus(tc.status, tc.header, []byte(tc.body), !tc.keyless, now); got != tc.want {
				t.Errorf("classifyStatus(%d) = %+v, want %+v", tc.status, got, tc.want)
			}
		})
	}

	for _, tc := range []struct {
		name  string
		event string
		want  verdict
	}{
		{"anthropic overloaded", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			verdict{act: actRetry, outcome: broken, errType: ErrStreamErr}},
		{"anthropic rate limit", `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`,
			verdict{act: actNext, outcome: rate(0), errType: ErrStreamErr}},
		{"openai rate limit code", `{"error":{"message":"x","type":"requests","code":"rate_limit_exceeded"}}`,
			verdict{act: actNext, outcome: rate(0), errType: ErrStreamErr}},
		{"responses failed, numeric code", `{"type":"response.failed","response":{"error":{"code":500,"message":"boom"}}}`,
			verdict{act: actRetry, outcome: broken, errType: ErrStreamErr}},
		{"relay words it freely", `{"error":{"message":"upstream overloaded, try later"}}`,
			verdict{act: actRetry, outcome: broken, errType: ErrStreamErr}},
		{"spent credit in a stream", credit,
			verdict{act: actRetry, outcome: broken, errType: ErrStreamErr}},
		{"invalid request in a stream is not handed over", `{"type":"error","error":{"type":"invalid_request_error"}}`,
			verdict{act: actRetry, outcome: broken, errType: ErrStreamErr}},
		{"unreadable", `not json`, verdict{act: actRetry, outcome: broken, errType: ErrStreamErr}},
		{"gemini resource exhausted", `{"error":{"code":429,"message":"slow","status":"RESOURCE_EXHAUSTED"}}`,
			verdict{act: actNext, outcome: rate(0), errType: ErrStreamErr}},
		{"gemini unavailable", `{"error":{"code":503,"message":"busy","status":"UNAVAILABLE"}}`,
			verdict{act: actRetry, outcome: broken, errType: ErrStreamErr}},
	} {
		t.Run("stream/"+tc.name, func(t *testing.T) {
			if got := classifyStreamError([]byte(tc.event), now); got != tc.want {
				t.Errorf("classifyStreamError(%s) = %+v, want %+v", tc.event, got, tc.want)
			}
		})
	}
}

// TestVerdictsProtocolError pins what a protocol's own error body adds to
// the status rows (conv.Spec.ReadError): Gemini's RetryInfo wait, a spent
// quota, a refused key whatever the status, and nothing it does not say.
func TestVerdictsProtocolError(t *testing.T) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	rate := func(d time.Duration) breaker.Outcome {
		return breaker.Outcome{Kind: breaker.Failure, Reason: breaker.RateLimited, RetryAfter: d}
	}
	for _, tc := range []struct {
		name    string
		resp    proxytest.Response
		keyless bool
		want    verdict
		decided bool
	}{
		{"429 RetryInfo", proxytest.GeminiRateLimited("30s"), false,
			verdict{act: actNext, outcome: rate(30 * time.Second), errType: ErrRateLimit, retryAfter: 30 * time.Second}, true},
		{"429 per-day quota", proxytest.GeminiQuotaExhausted("gemini-2.5-flash"), false,
			verdict{act: actNext, outcome: failure(breaker.QuotaExhausted), errType: ErrQuota}, true},
		{"400 API_KEY_INVALID", proxytest.GeminiKeyInvalid(), false,
			verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrStatus, keyRefused: true}, true},
		{"403 PERMISSION_DENIED", proxytest.GeminiPermissionDenied(), false,
			verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrStatus, keyRefused: true}, true},
		{"401 UNAUTHENTICATED", proxytest.GeminiUnauthenticated(), false,
			verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrStatus, keyRefused: true}, true},
		{"refused key the client sent", proxytest.GeminiKeyInvalid(), true, verdict{}, false},
		{"404 model", proxytest.GeminiModelNotFound("nope"), false, verdict{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ue, ok := gemini.Spec.ReadError(tc.resp.Status, []byte(tc.resp.Body))
			if !ok {
				t.Fatalf("not read as a Gemini error: %s", tc.resp.Body)
			}
			got, decided := classifyProtocolError(ue, http.Header{}, !tc.keyless, now)
			if decided != tc.decided || got != tc.want {
				t.Errorf("got %+v (decided %v), want %+v (decided %v)", got, decided, tc.want, tc.decided)
			}
		})
	}
}
