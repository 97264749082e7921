package proxy

import (
	"github.com/ccmesh/ccmesh/breaker"

	"math"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	httpDate := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	rfc3339 := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339Nano) }
	for _, tc := range []struct {
		name   string
		h      http.Header
		want   time.Duration
		wantOK bool
	}{
		{"none", header(), 0, false},
		{"delta seconds", header("Retry-After", "30"), 30 * time.Second, true},
		{"delta seconds with spaces", header("Retry-After", " 7 "), 7 * time.Second, true},
		{"decimal seconds", header("Retry-After", "1.5"), 1500 * time.Millisecond, true},
		{"zero is not usable", header("Retry-After", "0"), 0, false},
		{"http date", header("Retry-After", httpDate(2*time.Minute)), 2 * time.Minute, true},
		{"rfc 850 date", header("Retry-After", now.Add(time.Hour).Format(time.RFC850)), time.Hour, true},
		{"past http date is not usable", header("Retry-After", httpDate(-time.Minute)), 0, false},
		{"http date now is not usable", header("Retry-After", httpDate(0)), 0, false},
		{"huge saturates", header("Retry-After", "99999999999999999999999999"), math.MaxInt64, true},
		{"negative is garbage", header("Retry-After", "-5"), 0, false},
		{"exponent is garbage", header("Retry-After", "1e3"), 0, false},
		{"garbage", header("Retry-After", "soon"), 0, false},
		{"two dots garbage", header("Retry-After", "1.2.3"), 0, false},
		{"retry-after-ms", header("Retry-After-Ms", "1500"), 1500 * time.Millisecond, true},
		{"retry-after-ms fractional", header("retry-after-ms", "12.5"), 12500 * time.Microsecond, true},
		{"retry-after-ms wins", header("Retry-After-Ms", "250", "Retry-After", "30"), 250 * time.Millisecond, true},
		{"garbage ms falls back", header("Retry-After-Ms", "NaN", "Retry-After", "3"), 3 * time.Second, true},
		{"inf ms is garbage", header("Retry-After-Ms", "Inf"), 0, false},
		{"anthropic reset", header("anthropic-ratelimit-requests-reset", rfc3339(20*time.Second)), 20 * time.Second, true},
		{"anthropic past reset", header("anthropic-ratelimit-tokens-reset", rfc3339(-time.Second)), 0, false},
		{"anthropic garbage reset", header("anthropic-ratelimit-tokens-reset", "tomorrow"), 0, false},
		{"openai reset seconds", header("x-ratelimit-reset-requests", "1s"), time.Second, true},
		{"openai reset compound", header("x-ratelimit-reset-tokens", "6m0s"), 6 * time.Minute, true},
		{"openai reset ms", header("x-ratelimit-reset-tokens", "20ms"), 20 * time.Millisecond, true},
		{"openai reset bare seconds", header("x-ratelimit-reset-requests", "2.5"), 2500 * time.Millisecond, true},
		{"openai reset garbage", header("x-ratelimit-reset-requests", "1 fortnight"), 0, false},
		{"openai negative reset", header("x-ratelimit-reset-requests", "-1s"), 0, false},
		{"latest reset of all", header("x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "6m0s"), 6 * time.Minute, true},
		{"spent limit's reset wins", header(
			"x-ratelimit-reset-requests", "1s", "x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-tokens", "6m0s", "x-ratelimit-remaining-tokens", "5000"), time.Second, true},
		{"anthropic spent limit", header(
			"anthropic-ratelimit-requests-reset", rfc3339(time.Minute), "anthropic-ratelimit-requests-remaining", "10",
			"anthropic-ratelimit-input-tokens-reset", rfc3339(3*time.Second), "anthropic-ratelimit-input-tokens-remaining", "0"),
			3 * time.Second, true},
		{"retry-after beats reset", header("Retry-After", "4", "x-ratelimit-reset-requests", "1m"), 4 * time.Second, true},
		{"past retry-after falls to reset", header("Retry-After", httpDate(-time.Hour), "x-ratelimit-reset-requests", "9s"), 9 * time.Second, true},
		{"generic reset seconds", header("x-ratelimit-reset", "12"), 12 * time.Second, true},
		{"generic reset unix time", header("x-ratelimit-reset", "1796025640"), time.Unix(1796025640, 0).Sub(now), true},
		{"generic reset unix millis", header("x-ratelimit-reset", "1796025640000"), time.Unix(1796025640, 0).Sub(now), true},
		{"generic reset past unix time", header("x-ratelimit-reset", "1700000000"), 0, false},
		{"generic reset absurd", header("x-ratelimit-reset", "99999999999999999999"), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseRetryAfter(tc.h, now)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("parseRetryAfter(%v) = %v, %v; want %v, %v", tc.h, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestRetryAfterIntoBreaker follows a parsed Retry-After through the
// breaker: the parser leaves a huge value alone, the breaker caps it.
func TestRetryAfterIntoBreaker(t *testing.T) {
	for _, tc := range []struct {
		name         string
		h            http.Header
		wantCooldown time.Duration
	}{
		{"within the cap", header("Retry-After", "17"), 17 * time.Second},
		{"huge value capped", header("Retry-After", "86400"), 60 * time.Second},
		{"saturated value capped", header("Retry-After", "99999999999999999999999999"), 60 * time.Second},
		{"garbage: no retry time, counted toward thresholds", header("Retry-After", "later"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := breaker.NewSet(breaker.Config{}, nil).Get(1)
				v := classifyStatus(http.StatusTooManyRequests, tc.h, nil, true, time.Now())
				p, err := b.Allow(breaker.Claude, time.Now().Add(time.Minute))
				if err != nil {
					t.Fatal(err)
				}
				p.Done(v.outcome)
				got := b.View(time.Now())
				if tc.wantCooldown == 0 {
					if got.State != breaker.Closed {
						t.Errorf("state %v, want closed", got.State)
					}
					return
				}
				if got.State != breaker.Open || got.Reason != breaker.RateLimited || got.Until.Sub(got.OpenedAt) != tc.wantCooldown {
					t.Errorf("got %v (%v) for %v, want open (rate_limited) for %v", got.State, got.Reason, got.Until.Sub(got.OpenedAt), tc.wantCooldown)
				}
			})
		})
	}
}
