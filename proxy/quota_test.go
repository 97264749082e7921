package proxy

import (
	"github.com/ccmesh/ccmesh/breaker"

	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	anthropicCredit  = `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`
	anthropicUsage   = `{"type":"error","error":{"type":"invalid_request_error","message":"You have reached your specified API usage limits. You will regain access on 2026-12-01 at 00:00 UTC."}}`
	anthropicRate    = `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 50 requests per minute."}}`
	openAIQuota      = `{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
	openAIRate       = `{"error":{"message":"Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2.5s. Visit https://platform.openai.com/account/rate-limits to learn more. You can increase your rate limit by adding a payment method to your account at https://platform.openai.com/account/billing.","type":"tokens","code":"rate_limit_exceeded"}}`
	openAIRateNoHint = `{"error":{"message":"Rate limit reached for requests. You can increase your rate limit by adding a payment method to your account at https://platform.openai.com/account/billing.","type":"requests","code":"rate_limit_exceeded"}}`
	geminiQuota      = `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay": "30s"}]}}`
	newAPIQuota      = `{"error":{"message":"用户额度不足, 剩余额度: ＄0.01","type":"new_api_error","code":"insufficient_user_quota"}}`
	escapedBalance   = `{"error":{"message":"\u4F59\u989D\u4E0D\u8DB3","code":500}}`
)

func TestClassify(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	none := limitClass{}
	quota := limitClass{Reason: breaker.QuotaExhausted}
	limited := func(d time.Duration) limitClass { return limitClass{Reason: breaker.RateLimited, RetryAfter: d} }
	for _, tc := range []struct {
		name   string
		status int
		h      http.Header
		body   string
		want   limitClass
	}{
		// 400: only spent credit is special.
		{"anthropic credit balance 400", 400, nil, anthropicCredit, quota},
		{"anthropic usage limits 400", 400, nil, anthropicUsage, quota},
		{"messages field required", 400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: field required"}}`, none},
		{"max_tokens too large", 400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens"}}`, none},
		{"prompt is too long", 400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`, none},
		{"empty 400", 400, nil, ``, none},
		{"upper case", 400, nil, `INSUFFICIENT CREDITS ON THIS KEY`, quota},
		{"欠费", 400, nil, `{"error":"账户已欠费"}`, quota},
		{"json-escaped 余额不足", 400, nil, escapedBalance, quota},
		// 402 and 403.
		{"plain 402", 402, nil, `{"error":"nope"}`, none},
		{"402 payment required", 402, nil, `Payment Required`, quota},
		{"402 余额不足", 402, nil, `{"message":"余额不足，请充值"}`, quota},
		{"403 new-api quota", 403, nil, newAPIQuota, quota},
		{"403 billing", 403, nil, `{"error":{"message":"Billing is not active for this account"}}`, quota},
		{"403 forbidden", 403, nil, `{"error":{"message":"Request not allowed"}}`, none},
		{"403 quota exceeded", 403, nil, `Quota exceeded for this API key`, quota},
		{"quota in an error header", 403, header("X-Error-Code", "insufficient_quota"), ``, quota},
		{"quota word in another header", 403, header("X-Request-Id", "billing-123"), ``, none},
		// 429: rate limit unless quota text without a short explicit window.
		{"openai insufficient_quota", 429, nil, openAIQuota, quota},
		{"openai insufficient_quota with reset headers", 429, header("X-Ratelimit-Reset-Requests", "8s"), openAIQuota, quota},
		{"gemini per-minute quota with retryDelay", 429, nil, geminiQuota, limited(30 * time.Second)},
		{"quota text with retry-after under an hour", 429, header("Retry-After", "3599"), `quota exceeded`, limited(3599 * time.Second)},
		{"quota text with retry-after of an hour", 429, header("Retry-After", "3600"), `quota exceeded`, quota},
		{"daily limit until tomorrow", 429, header("Retry-After", "86400"), `{"error":"daily limit reached"}`, quota},
		{"anthropic rate limit", 429, header("Retry-After", "12"), anthropicRate, limited(12 * time.Second)},
		{"retry-after-ms", 429, header("Retry-After-Ms", "800"), anthropicRate, limited(800 * time.Millisecond)},
		{"openai try again in", 429, nil, openAIRate, limited(2500 * time.Millisecond)},
		{"billing URL is not quota", 429, nil, openAIRateNoHint, limited(0)},
		{"billing URL with reset header", 429, header("X-Ratelimit-Reset-Requests", "6m0s"), openAIRateNoHint, limited(6 * time.Minute)},
		{"prose seconds", 429, nil, `Too many requests, retry after 20 seconds.`, limited(20 * time.Second)},
		{"prose minutes", 429, nil, `please retry in 2 minutes`, limited(2 * time.Minute)},
		{"prose garbage", 429, nil, `try again in a while`, limited(0)},
		{"retryDelay garbage", 429, nil, `{"retryDelay": "soon"}`, limited(0)},
		{"plain 429", 429, nil, ``, limited(0)},
		{"header beats body", 429, header("Retry-After", "5"), geminiQuota, limited(5 * time.Second)},
		// Other statuses are not classifyLimit's business.
		{"500 with quota text", 500, nil, openAIQuota, none},
		{"401", 401, nil, anthropicCredit, none},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classifyLimit(tc.status, tc.h, []byte(tc.body), now); got != tc.want {
				t.Errorf("classifyLimit(%d, %v, %q) = %+v, want %+v", tc.status, tc.h, tc.body, got, tc.want)
			}
		})
	}
}

func TestQuotaMarkersAreLowerCase(t *testing.T) {
	for _, m := range quotaMarkers {
		if m != strings.ToLower(m) || m == "" {
			t.Errorf("marker %q must be non-empty lower case: indexFold folds only the haystack", m)
		}
	}
	if !hasQuotaMarker(`\u989d\u5ea6`) { // 额度
		t.Error("JSON-escaped 额度 not recognised")
	}
}

func TestClassifyDoesNotAllocate(t *testing.T) {
	now := time.Now()
	h := header("Retry-After", "12", "Content-Type", "application/json")
	for _, tc := range []struct {
		status int
		body   string
	}{
		{400, anthropicCredit},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: field required"}}`},
		{429, anthropicRate},
		{429, openAIQuota},
	} {
		body := []byte(tc.body)
		if n := testing.AllocsPerRun(100, func() { classifyLimit(tc.status, h, body, now) }); n != 0 {
			t.Errorf("classifyLimit(%d, %.20q…) allocates %v times per call, want 0", tc.status, tc.body, n)
		}
	}
}
