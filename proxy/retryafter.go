package proxy

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// parseRetryAfter reads when an upstream says to retry, from its response
// headers. ok is false when no header gives a usable time; when ok, d > 0.
//
// Headers, first usable wins:
//   - retry-after-ms: milliseconds, decimals allowed ("1500", "12.5");
//   - Retry-After: delta-seconds ("30", decimals tolerated) or an HTTP-date;
//   - rate-limit reset headers: anthropic-ratelimit-{requests,tokens,
//     input-tokens,output-tokens}-reset (RFC 3339 time),
//     x-ratelimit-reset-{requests,tokens} (OpenAI durations: "1s", "6m0s",
//     "20ms") and x-ratelimit-reset (seconds, or a Unix time when it is
//     that large). Of several, the latest among limits whose matching
//     -remaining header is "0" wins, else the latest of all: the limit that
//     is spent is what the 429 is about.
//
// A value that ends at or before now — "0", a past HTTP-date, a reset time
// already gone — is not usable and is skipped like garbage: a retry time of
// zero tells the breaker nothing. Huge values saturate at the largest
// Duration instead of overflowing; capping them is the breaker's job
// (MaxRateLimitTimeout), not the parser's.
func parseRetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if d, ok := explicitRetryAfter(h, now); ok {
		return d, true
	}
	return resetRetryAfter(h, now)
}

// explicitRetryAfter reads the headers that are an instruction to retry
// later, as opposed to the reset headers that describe a rate-limit bucket
// on every response; docs/BEHAVIOUR.md#spent-quota tells quota from rate limit by the former.
func explicitRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if d, ok := parseDecimal(h.Get("Retry-After-Ms"), time.Millisecond); ok {
		return d, true
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if d, ok := parseDecimal(v, time.Second); ok {
		return d, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return positive(t.Sub(now))
	}
	return 0, false
}

type resetFormat uint8

const (
	resetRFC3339  resetFormat = iota // absolute time (Anthropic)
	resetDuration                    // Go-style duration (OpenAI)
	resetSeconds                     // seconds, or a Unix time when large
)

var resetHeaders = [...]struct {
	reset, remaining string // canonical header names
	format           resetFormat
}{
	{"Anthropic-Ratelimit-Requests-Reset", "Anthropic-Ratelimit-Requests-Remaining", resetRFC3339},
	{"Anthropic-Ratelimit-Tokens-Reset", "Anthropic-Ratelimit-Tokens-Remaining", resetRFC3339},
	{"Anthropic-Ratelimit-Input-Tokens-Reset", "Anthropic-Ratelimit-Input-Tokens-Remaining", resetRFC3339},
	{"Anthropic-Ratelimit-Output-Tokens-Reset", "Anthropic-Ratelimit-Output-Tokens-Remaining", resetRFC3339},
	{"X-Ratelimit-Reset-Requests", "X-Ratelimit-Remaining-Requests", resetDuration},
	{"X-Ratelimit-Reset-Tokens", "X-Ratelimit-Remaining-Tokens", resetDuration},
	{"X-Ratelimit-Reset", "X-Ratelimit-Remaining", resetSeconds},
}

func resetRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	var latest, latestSpent time.Duration
	for _, rh := range resetHeaders {
		v := strings.TrimSpace(h.Get(rh.reset))
		if v == "" {
			continue
		}
		d, ok := parseReset(v, rh.format, now)
		if !ok {
			continue
		}
		latest = max(latest, d)
		if strings.TrimSpace(h.Get(rh.remaining)) == "0" {
			latestSpent = max(latestSpent, d)
		}
	}
	if latestSpent > 0 {
		return latestSpent, true
	}
	return latest, latest > 0
}

// Unix times in x-ratelimit-reset are told from delta-seconds by size: no
// sane delay is 30 years, and every Unix time since 2001 is above 1e9.
const (
	unixSecondsFloor = 1e9
	unixMillisFloor  = 1e12
	// Past this (year 33658 in milliseconds) the value is garbage, and
	// converting it to int64 would overflow.
	unixMillisCeiling = 1e15
)

func parseReset(v string, f resetFormat, now time.Time) (time.Duration, bool) {
	switch f {
	case resetRFC3339:
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return 0, false
		}
		return positive(t.Sub(now))
	case resetDuration:
		if d, err := time.ParseDuration(v); err == nil {
			return positive(d)
		}
		return parseDecimal(v, time.Second) // some relays send bare seconds
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || !isDecimal(v) {
		return 0, false
	}
	switch {
	case n >= unixMillisCeiling:
		return 0, false
	case n >= unixMillisFloor:
		return positive(time.UnixMilli(int64(n)).Sub(now))
	case n >= unixSecondsFloor:
		return positive(time.Unix(int64(n), 0).Sub(now))
	}
	return parseDecimal(v, time.Second)
}

// parseDecimal reads a plain non-negative decimal ("30", "12.5") as a number
// of units. Signs, exponents, hex, "Inf" and "NaN" are garbage here even
// though strconv accepts them. It saturates instead of overflowing.
func parseDecimal(v string, unit time.Duration) (time.Duration, bool) {
	if !isDecimal(v) {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false
	}
	ns := math.Round(f * float64(unit))
	if ns >= math.MaxInt64 { // float64(MaxInt64) is 2^63: out of range
		return math.MaxInt64, true
	}
	return positive(time.Duration(ns))
}

// isDecimal reports whether v is digits with at most one '.', and at least
// one digit.
func isDecimal(v string) bool {
	digits, dots := 0, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

func positive(d time.Duration) (time.Duration, bool) {
	if d <= 0 {
		return 0, false
	}
	return d, true
}
