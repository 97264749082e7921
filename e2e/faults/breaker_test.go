package faults

import (
	"net/http"
	"strconv"
	"testing"
)

// testBreakerThroughProxy drives docs/BEHAVIOUR.md#circuit-breaker's state machine through the real
// binary with request sequences: the error-rate trip, HalfOpen back to
// Closed after success_threshold probes, and docs/BEHAVIOUR.md#attempt-loop's Retry-After of an
// all-429 answer from several endpoints.
func testBreakerThroughProxy(t *testing.T, bin string) {
	c := startCCMesh(t, bin)
	c.setTimeouts(t, firstByteTimeout, idleTimeout)
	t.Run("error rate trips before consecutive failures do", func(t *testing.T) {
		model, name := "claude-e2e-rate", "rate-a"
		a := newUpstream(t, name, healthy)
		c.addEndpoint(t, endpointSpec{Name: name, BaseURL: a.url, Protocol: "anthropic", APIKey: "sk-ant-rate", Models: []string{model}})
		// 429s without Retry-After count as failures, one attempt each. A
		// success after every 7 keeps consecutive failures under Claude's
		// 8; by the 15th sample (min_requests) 13 of 15 failed, over 0.7.
		for i := range 15 {
			f := status429
			if i%8 == 7 {
				f = healthy
			}
			a.setFault(f)
			r := send(t.Context(), c.http, c.url(""), model, false)
			if h := c.health(t, name); i < 14 && h.State != "closed" {
				t.Fatalf("after request %d (status %d) the breaker is %s/%s; want closed until 15 samples", i+1, r.status, h.State, h.Reason)
			}
		}
		if h := c.health(t, name); h.State != "open" {
			t.Errorf("after 13 failures in 15 requests the breaker is %s with %d consecutive failures; docs/BEHAVIOUR.md#breaker-states: error rate ≥ 0.7 over ≥ 15 samples opens it",
				h.State, h.ConsecutiveFailures)
		}
	})
	t.Run("half-open closes after success_threshold probes", func(t *testing.T) {
		model, name := "claude-e2e-probe", "probe-a"
		a := newUpstream(t, name, status429RetryAfter)
		a.setRetryAfter("1")
		c.addEndpoint(t, endpointSpec{Name: name, BaseURL: a.url, Protocol: "anthropic", APIKey: "sk-ant-probe", Models: []string{model}})
		send(t.Context(), c.http, c.url(""), model, false)
		a.setFault(healthy)
		want := []string{"half_open", "half_open", "closed"} // Claude's success_threshold is 3
		for i, w := range want {
			if r := send(t.Context(), c.http, c.url(""), model, false); r.status != 200 {
				t.Fatalf("probe %d: status %d (%s)", i+1, r.status, r.body)
			}
			if h := c.health(t, name); h.State != w {
				t.Errorf("after probe %d the breaker is %s, want %s", i+1, h.State, w)
			}
		}
	})
	t.Run("all endpoints 429: Retry-After is the earliest", func(t *testing.T) {
		model := "claude-e2e-all429"
		for i, ra := range []string{"20", "8", "30"} {
			name := "all429-" + strconv.Itoa(i)
			u := newUpstream(t, name, status429RetryAfter)
			u.setRetryAfter(ra)
			c.addEndpoint(t, endpointSpec{Name: name, BaseURL: u.url, Protocol: "anthropic", APIKey: "sk-ant-" + name, Models: []string{model}})
		}
		r := send(t.Context(), c.http, c.url(""), model, false)
		if r.status != http.StatusTooManyRequests {
			t.Fatalf("status %d, want 429 (docs/BEHAVIOUR.md#attempt-loop: every attempt ended in 429); body %s", r.status, r.body)
		}
		got, err := strconv.Atoi(r.header.Get("Retry-After"))
		if err != nil || got < 6 || got > 8 {
			t.Errorf("Retry-After = %q, want ≈8 s, the earliest of 20, 8 and 30", r.header.Get("Retry-After"))
		}
		row := c.waitLogs(t, model, 1)[0]
		if row.Attempts != 3 {
			t.Errorf("attempts = %d, want 3 (each endpoint once, at once)", row.Attempts)
		}
	})
}
