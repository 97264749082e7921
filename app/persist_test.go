package app

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/breaker"
)

// failWrites makes every write to table in h's database fail until the
// returned func runs: a real SQLite error from the file the App uses, as a
// full disk would give, not a stand-in for the store.
func failWrites(t *testing.T, h *harness, table string) (restore func()) {
	t.Helper()
	// The App may be writing too (its persistence loop retries): wait for it.
	raw, err := sql.Open("sqlite", "file:"+h.app.db.Path()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	for _, op := range []string{"INSERT", "UPDATE"} {
		q := fmt.Sprintf(`CREATE TRIGGER fail_%s_%s BEFORE %s ON %s BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`,
			op, table, op, table)
		if _, err := raw.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		for _, op := range []string{"INSERT", "UPDATE"} {
			if _, err := raw.ExecContext(t.Context(), fmt.Sprintf(`DROP TRIGGER fail_%s_%s`, op, table)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A flush whose state write fails writes no audit entry either, and the
// flush after it writes each entry once (docs/BEHAVIOUR.md#breaker-persistence).
func TestBreakerFlushAuditsOnce(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	// A persister of its own, so the App's loop does not flush under the test.
	p := newBreakerPersister(h.app.db, zerolog.Nop(), h.app)
	p.queue(breaker.Transition{ID: e.ID, From: breaker.Closed, To: breaker.Open,
		Reason: breaker.Manual, Cause: breaker.CauseForceOpen, At: time.Now()})
	p.queue(breaker.Transition{ID: e.ID, From: breaker.Open, To: breaker.Closed,
		Cause: breaker.CauseForceClose, At: time.Now()})

	restore := failWrites(t, h, "breaker_state")
	if err := p.flush(t.Context()); err == nil {
		t.Fatal("flush with failing state writes: no error")
	}
	restore()
	if err := p.flush(t.Context()); err != nil {
		t.Fatalf("flush after the failure: %v", err)
	}
	if err := p.flush(t.Context()); err != nil {
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

// A force-open the database cannot save still takes effect, and the answer
// says both (docs/BEHAVIOUR.md#manual-control); it is saved later.
func TestForceOpenNotSaved(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	restore := failWrites(t, h, "breaker_events")
	r := h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", e.ID), "")
	got := r.apiErr(t)
	if r.status != 500 || got.Code != "not_saved" {
		t.Fatalf("force-open with a failing database: %d %s, want 500 not_saved", r.status, r.body)
	}
	for _, want := range []string{"endpoint a's breaker is forced open now", "saving that failed", "database or disk is full"} {
		if !strings.Contains(got.Message, want) {
			t.Errorf("message %q does not say %q", got.Message, want)
		}
	}
	var hs []Health
	h.do("GET", "/api/health", "").decode(t, &hs)
	if len(hs) != 1 || hs[0].Status != "unhealthy" || hs[0].Reason != "manual" {
		t.Errorf("health after the unsaved force-open = %+v, want unhealthy/manual: it took effect", hs)
	}
	restore()
	h = h.restart() // shutdown saves what is queued
	if v := h.app.Breakers().Get(e.ID).View(time.Now()); v.State != breaker.Open || v.Reason != breaker.Manual {
		t.Errorf("after a restart: %v/%v, want open/manual saved at shutdown", v.State, v.Reason)
	}
	evs, _ := h.app.db.ListBreakerEvents(t.Context(), e.ID, 0)
	forced := 0
	for _, ev := range evs {
		if ev.Cause == "force_open" {
			forced++
		}
	}
	if forced != 1 {
		t.Errorf("audit trail = %+v, want one force_open", evs)
	}
}

// A read-only ccmesh.db stops start-up with words that say so, and keeps
// its mode (docs/BEHAVIOUR.md#bad-input-and-faults).
func TestStartRefusesReadOnlyDatabase(t *testing.T) {
	h := newHarness(t)
	h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	h.stop()
	path := filepath.Join(h.dir, DBFile)
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	a, err := New(context.Background(), Options{DataDir: h.dir, Listen: "127.0.0.1:3457", AdminToken: testToken})
	if err == nil {
		a.Close(context.Background())
		t.Fatal("New on a read-only database succeeded, want an error")
	}
	if !strings.Contains(err.Error(), "ccmesh.db is read-only: ") {
		t.Errorf("error %q does not say ccmesh.db is read-only", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o400 {
		t.Errorf("mode after the refused start = %v, want 0400 kept", m)
	}
}
