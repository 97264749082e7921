package proxy

import (
	"github.com/ccmesh/ccmesh/breaker"

	"net/http"
	"testing"
	"time"
)

func FuzzParseRetryAfter(f *testing.F) {
	for _, seed := range [][3]string{
		{"", "30", ""},
		{"1500", "", ""},
		{"12.5", "Wed, 21 Oct 2026 07:28:00 GMT", "6m0s"},
		{"", "Sun, 06 Nov 1994 08:49:37 GMT", "1s"},
		{"NaN", "-1", "-20ms"},
		{"Inf", "1e309", "9999999999h"},
		{"", "99999999999999999999999999", ""},
		{".", "..", "0"},
		{"", "", "2026-11-30T08:00:30Z"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, ms, retryAfter, reset string) {
		h := http.Header{}
		h.Set("Retry-After-Ms", ms)
		h.Set("Retry-After", retryAfter)
		h.Set("X-Ratelimit-Reset-Tokens", reset)
		h.Set("X-Ratelimit-Reset", reset)
		h.Set("Anthropic-Ratelimit-Requests-Reset", reset)
		d, ok := parseRetryAfter(h, now)
		if ok != (d > 0) {
			t.Fatalf("parseRetryAfter = %v, %v: ok must mean a positive duration", d, ok)
		}
		if d2, ok2 := parseRetryAfter(h, now); d2 != d || ok2 != ok {
			t.Fatalf("not deterministic: %v,%v then %v,%v", d, ok, d2, ok2)
		}
	})
}

func FuzzClassify(f *testing.F) {
	for _, seed := range []struct {
		status     int
		retryAfter string
		body       string
	}{
		{400, "", anthropicCredit},
		{400, "", `{"error":{"message":"messages: field required"}}`},
		{429, "", openAIQuota},
		{429, "", geminiQuota},
		{429, "12", anthropicRate},
		{429, "", openAIRate},
		{402, "", `{}`},
		{403, "", newAPIQuota},
		{429, "", `try again in 99999999999999999999h`},
		{429, "", `"retryDelay":"`},
		{429, "", `retry after 1.5.5 seconds`},
		{500, "", escapedBalance},
	} {
		f.Add(seed.status, seed.retryAfter, []byte(seed.body))
	}
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, status int, retryAfter string, body []byte) {
		h := http.Header{}
		h.Set("Retry-After", retryAfter)
		c := classifyLimit(status, h, body, now)
		switch c.Reason {
		case breaker.ReasonNone, breaker.QuotaExhausted, breaker.RateLimited:
		default:
			t.Fatalf("reason %v: classifyLimit only says none, quota or rate limited", c.Reason)
		}
		if c.RetryAfter < 0 || (c.RetryAfter > 0 && c.Reason != breaker.RateLimited) {
			t.Fatalf("%+v: a retry time must be positive and only come with a rate limit", c)
		}
		switch status {
		case 400, 402, 403:
			if c.Reason == breaker.RateLimited {
				t.Fatalf("status %d classified as a rate limit", status)
			}
		case 429:
			if c.Reason == breaker.ReasonNone {
				t.Fatal("a 429 is a rate limit or spent quota, never nothing")
			}
		default:
			if c != (limitClass{}) {
				t.Fatalf("status %d: %+v, want nothing", status, c)
			}
		}
	})
}
