package app

import (
	"fmt"
	"net/http"
	"testing"
	"time"

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

func TestNewKeyResetsBreaker(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic","api_key":"old-key-123456"}`)
	h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", e.ID), "")
	if r := h.do("PUT", fmt.Sprintf("/api/endpoints/%d", e.ID), `{"api_key":"new-key-123456"}`); r.status != http.StatusOK {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	if v := h.app.Breakers().Get(e.ID).View(time.Now()); v.State != breaker.Closed {
		t.Errorf("after a key change: %v, want closed", v.State)
	}
}
