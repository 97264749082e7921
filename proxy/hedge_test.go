package proxy

import (
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// hedgeHarness has endpoints a (first in the list) and b, hedging after
// a short delay.
func hedgeHarness(t *testing.T, a, b proxytest.Response, after ...time.Duration) (*harness, *proxytest.Upstream, *proxytest.Upstream) {
	ua, ub := upstream(t, a), upstream(t, b)
	d := 20 * time.Millisecond
	if len(after) > 0 {
		d = after[0]
	}
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", ua.URL), ep(2, "b", ub.URL)}, HedgeAfter: d})
	return h, ua, ub
}

func hedgeParts(r *Record) string {
	var parts []string
	for _, a := range r.Attempts {
		parts = append(parts, a.Endpoint+":"+string(a.Hedge))
	}
	return strings.Join(parts, ",")
}

// A stream whose first content does not come is raced; the racer's content
// is the only content the client gets, the slow side is cancelled —
// its connection closed, its breaker untouched (docs/BEHAVIOUR.md#hedging).
func TestHedgeStreamRacerWins(t *testing.T) {
	slow := proxytest.Response{Events: proxytest.AnthropicStream(1, 1, "never"), StallAfter: 1}
	h, ua, ub := hedgeHarness(t, slow, okClaudeStream())
	r := h.post("/v1/messages", claudeStreamBody)
	if r.status != http.StatusOK || strings.Count(r.body, `"hel"`) != 1 || strings.Contains(r.body, "never") {
		t.Fatalf("status %d body %s", r.status, r.body)
	}
	if strings.Count(r.body, "event: message_start") != 1 {
		t.Errorf("two preludes reached the client: %s", r.body)
	}
	rec := h.record()
	if got := hedgeParts(rec); got != "a:cancelled,b:won" {
		t.Fatalf("attempts %s", got)
	}
	if a := rec.Attempts[0]; a.Outcome != breaker.Neutral || a.BreakerCounted || a.ErrorType != ErrHedgeCancelled {
		t.Errorf("cancelled attempt %+v", a)
	}
	if v := h.breakers.Get(1).View(time.Now()); v.State != breaker.Closed || v.Counts.ConsecutiveFailures != 0 {
		t.Errorf("a's breaker heard the cancelled attempt: %+v", v)
	}
	if r.header.Get("X-Ccmesh-Endpoint") != "b" || r.header.Get("X-Ccmesh-Attempts") != "2" || rec.Endpoint != "b" || rec.StreamEnd != StreamComplete || rec.TokensOut != 34 {
		t.Errorf("endpoint %q/%q end %q tokens %d", r.header.Get("X-Ccmesh-Endpoint"), rec.Endpoint, rec.StreamEnd, rec.TokensOut)
	}
	// StallAfter waits for its request to be cancelled: a's side is done.
	if ua.Count() != 1 || ub.Count() != 1 {
		t.Errorf("upstream requests a=%d b=%d", ua.Count(), ub.Count())
	}
}

// A request that is not streamed is raced while it has no response headers.
func TestHedgeNonStream(t *testing.T) {
	h, _, ub := hedgeHarness(t, proxytest.Response{HangHeaders: true}, okClaude())
	r := h.post("/v1/messages", claudeBody)
	if r.status != http.StatusOK || !strings.Contains(r.body, "hello") || ub.Count() != 1 {
		t.Fatalf("status %d body %s", r.status, r.body)
	}
	if got := hedgeParts(h.record()); got != "a:cancelled,b:won" {
		t.Errorf("attempts %s", got)
	}
}

// An attempt with content before the delay is never raced (a delay no
// loopback answer takes).
func TestHedgeNotNeeded(t *testing.T) {
	h, _, ub := hedgeHarness(t, okClaudeStream(), okClaudeStream(), 30*time.Second)
	if r := h.post("/v1/messages", claudeStreamBody); r.status != http.StatusOK {
		t.Fatalf("status %d", r.status)
	}
	rec := h.record()
	if ub.Count() != 0 || len(rec.Attempts) != 1 || rec.Attempts[0].Hedge != "" {
		t.Errorf("b saw %d requests; attempts %s", ub.Count(), hedgeParts(rec))
	}
}

// When the racer fails on its own the first attempt still answers; the
// racer is "failed" and counted when its failure came before the first
// attempt's content, "cancelled" and neutral when after — which one
// depends on which the network delivers first.
func TestHedgeRacerFails(t *testing.T) {
	gate := make(chan struct{})
	slow := proxytest.Response{Events: proxytest.AnthropicStream(1, 1, "late"), Gate: gate}
	h, _, ub := hedgeHarness(t, slow, proxytest.AnthropicError(500, "api_error", "down"))
	go func() {
		for ub.Count() == 0 {
			runtime.Gosched()
		}
		close(gate)
	}()
	r := h.post("/v1/messages", claudeStreamBody)
	if r.status != http.StatusOK || !strings.Contains(r.body, "late") || strings.Contains(r.body, "down") {
		t.Fatalf("status %d body %s", r.status, r.body)
	}
	rec := h.record()
	b := rec.Attempts[1]
	switch got := hedgeParts(rec); {
	case got == "a:won,b:failed" && b.Outcome == breaker.Failure && b.Status == 500:
	case got == "a:won,b:cancelled" && b.Outcome == breaker.Neutral:
	default:
		t.Errorf("attempts %s, racer %+v", got, b)
	}
}

// An endpoint's own delay races it with the setting off, and an endpoint
// set to never be raced is not, whatever the setting.
func TestHedgePerEndpoint(t *testing.T) {
	slow := proxytest.Response{Events: proxytest.AnthropicStream(1, 1, "never"), StallAfter: 1}
	ua, ub := upstream(t, slow), upstream(t, okClaudeStream())
	a, b := ep(1, "a", ua.URL), ep(2, "b", ub.URL)
	a.HedgeAfter = 20 * time.Millisecond
	h := newHarness(t, Config{Endpoints: []Endpoint{a, b}})
	if r := h.post("/v1/messages", claudeStreamBody); r.status != http.StatusOK || r.header.Get("X-Ccmesh-Endpoint") != "b" {
		t.Fatalf("status %d via %q", r.status, r.header.Get("X-Ccmesh-Endpoint"))
	}
	if got := hedgeParts(h.record()); got != "a:cancelled,b:won" {
		t.Errorf("attempts %s", got)
	}

	// Never raced: a stalled attempt on a ends by its own first-byte
	// timeout and the loop moves on, though the setting says 1 ms.
	a.HedgeAfter = HedgeOff
	h.srv.Update(Config{Endpoints: []Endpoint{a, b}, HedgeAfter: time.Millisecond, FirstByteTimeout: 200 * time.Millisecond, RetryDelay: 1})
	if r := h.post("/v1/messages", claudeStreamBody); r.status != http.StatusOK || r.header.Get("X-Ccmesh-Endpoint") != "b" {
		t.Fatalf("status %d via %q", r.status, r.header.Get("X-Ccmesh-Endpoint"))
	}
	rec := h.record()
	if got := hedgeParts(rec); got != "a:,a:,b:" || rec.Attempts[0].ErrorType != ErrFirstByte {
		t.Errorf("attempts %s, first %q; want a's two timeouts, then b, no race", got, rec.Attempts[0].ErrorType)
	}
}
