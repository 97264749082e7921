package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/app/persist"
	"github.com/ccmesh/ccmesh/breaker"
)

func TestForceOpenSurvivesRestart(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	r := h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", e.ID), "")
	var hl Health
	r.decode(t, &hl)
	if r.status != 200 || hl.Status != "unhealthy" || hl.Reason != "manual" {
		t.Fatalf("force-open: %d %+v", r.status, hl)
	}

	h = h.restart()
	v := h.app.Breakers().Get(e.ID).View(time.Now())
	if v.State != breaker.Open || v.Reason != breaker.Manual {
		t.Fatalf("after restart: %v/%v, want open/manual", v.State, v.Reason)
	}

	r = h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-close", e.ID), "")
	r.decode(t, &hl)
	if hl.Status != "healthy" {
		t.Errorf("force-close: status %q, want healthy", hl.Status)
	}
	var evs []map[string]any
	h.do("GET", fmt.Sprintf("/api/breaker-events?endpoint=%d", e.ID), "").decode(t, &evs)
	if len(evs) < 2 || evs[0]["cause"] != "force_close" || evs[len(evs)-1]["cause"] != "force_open" {
		t.Errorf("audit trail = %v, want force_close newest and force_open oldest", evs)
	}
}

// A restart must neither forget a cooldown nor extend it: the absolute end
// of the Open period is the same before and after.
func TestOpenCooldownSurvivesRestart(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic","breaker_overrides":{"timeout_ms":30000}}`)
	b := h.app.Breakers().Get(e.ID)
	for i := 0; i < breaker.Defaults(breaker.Claude).FailureThreshold; i++ {
		p, err := b.Allow(breaker.Claude, time.Now().Add(time.Minute))
		if err != nil {
			t.Fatalf("allow %d: %v", i, err)
		}
		p.Done(breaker.Outcome{Kind: breaker.Failure, Reason: breaker.Broken})
	}
	before := b.View(time.Now())
	if before.State != breaker.Open || before.Reason != breaker.Broken {
		t.Fatalf("before restart: %v/%v, want open/broken", before.State, before.Reason)
	}
	if left := time.Until(before.Until); left < 25*time.Second || left > 30*time.Second {
		t.Fatalf("cooldown left = %v, want about 30s", left)
	}

	h = h.restart()
	after := h.app.Breakers().Get(e.ID).View(time.Now())
	if after.State != breaker.Open || after.Reason != breaker.Broken {
		t.Fatalf("after restart: %v/%v, want open/broken", after.State, after.Reason)
	}
	if d := after.Until.Sub(before.Until).Abs(); d > time.Millisecond {
		t.Errorf("cooldown end moved by %v across the restart (before %v, after %v)", d, before.Until, after.Until)
	}
	var hs []Health
	h.do("GET", "/api/health", "").decode(t, &hs)
	if len(hs) != 1 || hs[0].Status != "unhealthy" || hs[0].RetryInMs <= 0 || hs[0].RetryInMs > 30_000 {
		t.Errorf("health = %+v, want unhealthy with retry_in_ms in (0, 30000]", hs)
	}
}

// A flush that cannot write keeps the transition for the next one, which
// saves the breaker's state as it is then, not as the transition left it;
// a transition of an endpoint deleted meanwhile is dropped.
func TestBreakerPersisterRetriesAndSkipsDeleted(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	// A persister of its own, so the App's loop does not flush under the test.
	p := persist.NewBreakers(h.app.db, zerolog.Nop(), breakerSource{h.app})
	p.Queue(breaker.Transition{ID: e.ID, From: breaker.Closed, To: breaker.Open,
		Reason: breaker.Manual, Cause: breaker.CauseForceOpen, At: time.Now()})
	p.Queue(breaker.Transition{ID: 999, From: breaker.Closed, To: breaker.Open,
		Reason: breaker.Manual, Cause: breaker.CauseForceOpen, At: time.Now()})

	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.Flush(cancelled); err == nil {
		t.Fatal("flush with a cancelled context: no error")
	}
	if err := p.Flush(t.Context()); err != nil {
		t.Fatalf("second flush: %v", err)
	}

	evs, err := h.app.db.ListBreakerEvents(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].EndpointID != e.ID || evs[0].Endpoint != "a" || evs[0].Cause != "force_open" {
		t.Errorf("audit trail = %+v, want one force_open of endpoint a", evs)
	}
	states, err := h.app.db.LoadBreakerStates(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || states[0].EndpointID != e.ID || states[0].State != "closed" {
		t.Errorf("state rows = %+v, want endpoint a's current state, closed", states)
	}
	if err := p.Flush(t.Context()); err != nil {
		t.Errorf("flush of an empty queue: %v", err)
	}
	if evs, _ := h.app.db.ListBreakerEvents(t.Context(), 0, 0); len(evs) != 1 {
		t.Errorf("a flushed transition was written again: %d events", len(evs))
	}
}

// A flush whose state write fails writes no audit entry either, and the
// flush after it writes each entry once (docs/BEHAVIOUR.md#breaker-persistence).
func TestBreakerFlushAuditsOnce(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	// A persister of its own, so the App's loop does not flush under the test.
	p := persist.NewBreakers(h.app.db, zerolog.Nop(), breakerSource{h.app})
	p.Queue(breaker.Transition{ID: e.ID, From: breaker.Closed, To: breaker.Open,
		Reason: breaker.Manual, Cause: breaker.CauseForceOpen, At: time.Now()})
	p.Queue(breaker.Transition{ID: e.ID, From: breaker.Open, To: breaker.Closed,
		Cause: breaker.CauseForceClose, At: time.Now()})

	restore := failWrites(t, h, "breaker_state")
	if err := p.Flush(t.Context()); err == nil {
		t.Fatal("flush with failing state writes: no error")
	}
	restore()
	if err := p.Flush(t.Context()); err != nil {
		t.Fatalf("flush after the failure: %v", err)
	}
	if err := p.Flush(t.Context()); err != nil {
		t.Fatalf("flush of an empty queue: %v", err)
	}
	evs, err := h.app.db.ListBreakerEvents(t.Context(), e.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var causes []string
	for _, ev := range evs {
		causes = append(causes, ev.Cause)
	}
	if fmt.Sprint(causes) != "[force_close force_open]" {
		t.Errorf("audit trail = %v, want each transition once: [force_close force_open]", causes)
	}
	states, err := h.app.db.LoadBreakerStates(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || states[0].EndpointID != e.ID {
		t.Errorf("state rows = %+v, want endpoint a's", states)
	}
}
