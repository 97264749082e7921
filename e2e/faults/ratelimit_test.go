package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// testAllRateLimited covers docs/BEHAVIOUR.md#rate-limit-wait: when the only candidate
// is Open(RateLimited), ccmesh waits inside the gateway (up to 5 s) for the
// cooldown to end instead of failing at once; past the budget it answers
// 429 with Retry-After; a client that leaves ends the wait at once.
func testAllRateLimited(t *testing.T, bin string) {
	c := startCCMesh(t, bin)
	c.setTimeouts(t, firstByteTimeout, idleTimeout)
	cases := []struct {
		name       string
		retryAfter int           // seconds, the upstream's first answer
		clientWait time.Duration // the client gives up after this; 0 = never
		wantStatus int           // the second request's status; 0 = the client left
		wantRetry  [2]int        // Retry-After bounds on a 429
		wantState  string        // A's breaker afterwards
	}{
		// The cooldown (1 s) ends within the budget: the request waits and
		// then goes to A as its HalfOpen probe.
		{name: "cooldown within the budget", retryAfter: 1, wantStatus: 200, wantState: "half_open"},
		// 30 s is past the 5 s budget: 429 with the remaining cooldown
		// (whether ccmesh first waits out its budget is not pinned here).
		{name: "cooldown past the budget", retryAfter: 30, wantStatus: 429, wantRetry: [2]int{20, 30}, wantState: "open"},
		// A 3 s cooldown would be waited for; the client leaves after 300 ms.
		{name: "client leaves during the wait", retryAfter: 3, clientWait: 300 * time.Millisecond, wantState: "open"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			model := fmt.Sprintf("claude-e2e-ratelimit-%d", i)
			name := fmt.Sprintf("rl%d-a", i)
			a := newUpstream(t, name, status429RetryAfter)
			a.setRetryAfter(strconv.Itoa(tc.retryAfter))
			c.addEndpoint(t, endpointSpec{Name: name, BaseURL: a.url, Protocol: "anthropic", APIKey: "sk-ant-rl-secret", Models: []string{model}})
			if r := send(t.Context(), c.http, c.url(""), model, false); r.status != 429 {
				t.Fatalf("first request: status %d, want the upstream's 429 (%s)", r.status, r.body)
			}
			a.setFault(healthy)
			ctx := t.Context()
			if tc.clientWait > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.clientWait)
				defer cancel()
			}
			start := time.Now()
			r := send(ctx, c.http, c.url(""), model, true)
			took := time.Since(start)
			checkWaitReply(t, tc.wantStatus, tc.wantRetry, r, took, name)
			rows := c.waitLogs(t, model, 2)
			if tc.wantStatus == 0 {
				if !rows[0].ClientGone || rows[0].Status != 499 {
					t.Errorf("log row of the client that left: client_gone %v status %d, want true 499", rows[0].ClientGone, rows[0].Status)
				}
				// The cooldown had 2.7 s to go: a wait that ended with the
				// client is far shorter.
				if rows[0].DurationMs >= 2000 {
					t.Errorf("the request lasted %d ms after its client left at 300 ms; docs/BEHAVIOUR.md#rate-limit-wait: the wait ends at once", rows[0].DurationMs)
				}
			}
			if h := c.health(t, name); h.State != tc.wantState {
				t.Errorf("A's breaker = %s/%s, want %s", h.State, h.Reason, tc.wantState)
			}
		})
	}
}

func checkWaitReply(t *testing.T, wantStatus int, wantRetry [2]int, r reply, took time.Duration, name string) {
	t.Helper()
	switch wantStatus {
	case 0:
		if !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("the client should have given up waiting, got status %d err %v", r.status, r.err)
		}
		return
	case 200:
		if r.status != 200 || streamText(parseSSE(r.body)) != answerText(name) {
			t.Fatalf("second request: status %d body %s, want A's answer after the wait", r.status, r.body)
		}
		if took < 500*time.Millisecond {
			t.Errorf("answered after %s: docs/BEHAVIOUR.md#rate-limit-wait wants the request to wait for the cooldown (≈1 s)", took)
		}
	case 429:
		if r.status != 429 {
			t.Fatalf("second request: status %d, want 429 after the 5 s budget (docs/BEHAVIOUR.md#rate-limit-wait); body %s", r.status, r.body)
		}
		ra, err := strconv.Atoi(r.header.Get("Retry-After"))
		if err != nil || ra < wantRetry[0] || ra > wantRetry[1] {
			t.Errorf("Retry-After = %q, want seconds in %v", r.header.Get("Retry-After"), wantRetry)
		}
	}
}
