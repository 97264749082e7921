package proxy

import (
	"github.com/ccmesh/ccmesh/breaker"

	"fmt"
	"net/http"
	"strings"
	"time"
)

// limitClass is the result of classifyLimit.
type limitClass struct {
	Reason     breaker.Reason // QuotaExhausted, RateLimited, or ReasonNone ("not a quota error")
	RetryAfter time.Duration  // for breaker.RateLimited, when the upstream gave one
}

// quotaHorizon splits docs/BEHAVIOUR.md#spent-quota's 429s: an explicit retry window shorter than
// this is a rate limit even when the text mentions a quota (Gemini's
// per-minute "exceeded your current quota" comes with a 30 s retryDelay).
const quotaHorizon = time.Hour

// classifyLimit applies docs/BEHAVIOUR.md#spent-quota to an upstream error (status among 400, 402,
// 403, 429), its headers and the first bytes of its body.
//
//   - 400, 402, 403: QuotaExhausted when the body, or a header whose name
//     contains "error", says the credit, quota or billing is spent;
//     otherwise ReasonNone — an ordinary bad request, and a plain 402 too:
//     the attempt loop maps a plain 402 to QuotaExhausted itself (docs/BEHAVIOUR.md#attempt-loop).
//   - 429: QuotaExhausted when the text says so and no explicit retry
//     window under an hour is given; otherwise RateLimited, with the
//     retry time of the headers (see parseRetryAfter) or of the body
//     (Gemini RetryInfo "retryDelay": "30s"; "Please try again in 20s").
//     Explicit means Retry-After, retry-after-ms or a body hint: the
//     rate-limit reset headers come on ordinary responses too, so they
//     give the RateLimited retry time but never overrule quota text.
//   - any other status: ReasonNone.
//
// Text is matched case-insensitively, on the raw bytes (Chinese markers also
// in their JSON \u escapes), without allocating.
func classifyLimit(status int, h http.Header, body []byte, now time.Time) limitClass {
	switch status {
	case http.StatusBadRequest, http.StatusPaymentRequired, http.StatusForbidden:
		if quotaSpent(h, body) {
			return limitClass{Reason: breaker.QuotaExhausted}
		}
		return limitClass{}
	case http.StatusTooManyRequests:
		d, ok := explicitRetryAfter(h, now)
		if !ok {
			d, ok = bodyRetryAfter(body)
		}
		if quotaSpent(h, body) && !(ok && d < quotaHorizon) {
			return limitClass{Reason: breaker.QuotaExhausted}
		}
		if !ok {
			d, _ = resetRetryAfter(h, now)
		}
		return limitClass{Reason: breaker.RateLimited, RetryAfter: d}
	}
	return limitClass{}
}

// quotaMarkers are lower-case phrases that mean the account's money or
// quota is spent, as Anthropic, OpenAI and the relays in front of them word
// it. A match right after '/' is a URL path ("…/account/billing" in
// OpenAI's ordinary rate-limit message) and does not count.
var quotaMarkers = withJSONEscapes([]string{
	"credit balance", // Anthropic: "Your credit balance is too low to access the Anthropic API"
	"balance is too low",
	"balance is insufficient",
	"insufficient_quota", // OpenAI's error code on a 429
	"insufficient quota",
	"insufficient_user_quota", // one-api / new-api relays
	"insufficient credit",
	"insufficient_credit",
	"insufficient balance",
	"insufficient_balance",
	"insufficient funds",
	"out of credit",
	"not enough credit",
	"quota exceeded",
	"quota_exceeded",
	"exceeded your current quota",
	"exceeded your quota",
	"quota exhausted",
	"quota_exhausted",
	"daily limit",
	"monthly limit",
	"usage limit", // Anthropic: "You have reached your specified API usage limits"
	"spending limit",
	"billing",
	"payment required",
	"arrears",
	"余额不足", // insufficient balance
	"额度",   // quota / credit line
	"欠费",   // in arrears
	"配额",   // quota
	"充值",   // top up
})

// withJSONEscapes adds, for each marker with non-ASCII runes, its form in a
// JSON body written with \uXXXX escapes (Python's json.dumps default).
func withJSONEscapes(markers []string) []string {
	out := append([]string(nil), markers...)
next:
	for _, m := range markers {
		var b strings.Builder
		escaped := false
		for _, r := range m {
			switch {
			case r < 0x80:
				b.WriteRune(r)
			case r > 0xFFFF: // would need a surrogate pair; none of ours does
				continue next
			default:
				escaped = true
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		}
		if escaped {
			out = append(out, b.String())
		}
	}
	return out
}

func quotaSpent(h http.Header, body []byte) bool {
	if hasQuotaMarker(body) {
		return true
	}
	for name, values := range h {
		if indexFold(name, "error") < 0 {
			continue
		}
		for _, v := range values {
			if hasQuotaMarker(v) {
				return true
			}
		}
	}
	return false
}

func hasQuotaMarker[S ~string | ~[]byte](s S) bool {
	for _, m := range quotaMarkers {
		for from := 0; ; {
			i := indexFold(s[from:], m)
			if i < 0 {
				break
			}
			at := from + i
			if at == 0 || s[at-1] != '/' {
				return true
			}
			from = at + 1
		}
	}
	return false
}

// indexFold is strings.Index with ASCII case folding of s; needle must be
// lower case. Bytes ≥ 0x80 compare exactly, which is right for UTF-8.
func indexFold[S ~string | ~[]byte](s S, needle string) int {
	n := len(needle)
	if n == 0 {
		return 0
	}
	first := needle[0]
	for i := 0; i+n <= len(s); i++ {
		if lowerASCII(s[i]) != first {
			continue
		}
		j := 1
		for j < n && lowerASCII(s[i+j]) == needle[j] {
			j++
		}
		if j == n {
			return i
		}
	}
	return -1
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// bodyRetryAfter finds a retry time in an error body: Gemini's RetryInfo
// ("retryDelay": "30s") or prose such as OpenAI's "Please try again in
// 6ms." and relays' "retry after 20 seconds".
func bodyRetryAfter(body []byte) (time.Duration, bool) {
	if i := indexFold(body, `"retrydelay"`); i >= 0 {
		if d, ok := jsonDurationAfter(body[i+len(`"retrydelay"`):]); ok {
			return d, true
		}
	}
	for _, phrase := range [...]string{"try again in ", "retry after ", "retry in "} {
		if i := indexFold(body, phrase); i >= 0 {
			if d, ok := proseDuration(body[i+len(phrase):]); ok {
				return d, true
			}
		}
	}
	return 0, false
}

// maxDurationText bounds the bytes a duration token may span, so garbage
// cannot make the scan long.
const maxDurationText = 32

// jsonDurationAfter reads `: "30s"` (a protobuf Duration in JSON).
func jsonDurationAfter(b []byte) (time.Duration, bool) {
	b = skipSpace(b)
	if len(b) == 0 || b[0] != ':' {
		return 0, false
	}
	b = skipSpace(b[1:])
	if len(b) == 0 || b[0] != '"' {
		return 0, false
	}
	b = b[1:]
	end := 0
	for end < len(b) && end < maxDurationText && b[end] != '"' {
		end++
	}
	if end == len(b) || b[end] != '"' {
		return 0, false
	}
	d, err := time.ParseDuration(string(b[:end]))
	if err != nil {
		return 0, false
	}
	return positive(d)
}

// proseDuration reads "20s", "1m30s", "6ms", "1.5 seconds", "2 minutes".
func proseDuration(b []byte) (time.Duration, bool) {
	num := 0
	for num < len(b) && num < maxDurationText && (isDigit(b[num]) || b[num] == '.') {
		num++
	}
	if num == 0 {
		return 0, false
	}
	if num < len(b) && isLetter(b[num]) {
		// A Go-style token such as "1m30s" or "6ms".
		end := num
		for end < len(b) && end < maxDurationText && (isLetter(b[end]) || isDigit(b[end]) || b[end] == '.') {
			end++
		}
		tok := strings.ToLower(strings.TrimRight(string(b[:end]), "."))
		if d, err := time.ParseDuration(tok); err == nil {
			return positive(d)
		}
		return 0, false
	}
	if num == len(b) || b[num] != ' ' {
		return 0, false
	}
	end := num + 1
	for end < len(b) && end-num < maxDurationText && isLetter(b[end]) {
		end++
	}
	unit, ok := proseUnit(b[num+1 : end])
	if !ok {
		return 0, false
	}
	return parseDecimal(string(b[:num]), unit)
}

func proseUnit(word []byte) (time.Duration, bool) {
	switch strings.ToLower(string(word)) {
	case "ms", "msec", "msecs", "millisecond", "milliseconds":
		return time.Millisecond, true
	case "s", "sec", "secs", "second", "seconds":
		return time.Second, true
	case "m", "min", "mins", "minute", "minutes":
		return time.Minute, true
	case "h", "hr", "hrs", "hour", "hours":
		return time.Hour, true
	}
	return 0, false
}

func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= lowerASCII(c) && lowerASCII(c) <= 'z' }
