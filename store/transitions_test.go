package store

import (
	"testing"
)

// failWrites makes every insert into table fail until the returned func
// runs: a real SQLite error, as a full disk would give.
func failWrites(t *testing.T, db *DB, table string) (restore func()) {
	t.Helper()
	raw := rawOpen(t, db.Path())
	for _, op := range []string{"INSERT", "UPDATE"} {
		q := `CREATE TRIGGER fail_` + op + `_` + table + ` BEFORE ` + op + ` ON ` + table +
			` BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`
		if _, err := raw.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		for _, op := range []string{"INSERT", "UPDATE"} {
			if _, err := raw.ExecContext(t.Context(), `DROP TRIGGER fail_`+op+`_`+table); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// States and audit entries are saved together or not at all, so a retry
// after a failure writes each entry once (docs/BEHAVIOUR.md#breaker-persistence).
func TestSaveBreakerTransitionsAllOrNothing(t *testing.T) {
	db := openTestDB(t)
	a := mustCreate(t, db, endpointPatch("a"))
	states := []BreakerState{{EndpointID: a.ID, State: "open", Reason: "manual"}, {EndpointID: 999, State: "open"}}
	events := []BreakerEvent{
		{EndpointID: a.ID, Endpoint: "a", Cause: "force_open", From: "closed", To: "open", Reason: "manual"},
		{EndpointID: 999, Endpoint: "gone", Cause: "request", From: "closed", To: "open", Reason: "broken"},
	}
	restore := failWrites(t, db, "breaker_events")
	if err := db.SaveBreakerTransitions(t.Context(), states, events); err == nil {
		t.Fatal("SaveBreakerTransitions with failing audit writes: no error")
	}
	if got, _ := db.LoadBreakerStates(t.Context()); len(got) != 0 {
		t.Errorf("states after the failed save = %+v, want none (all or nothing)", got)
	}
	restore()
	if err := db.SaveBreakerTransitions(t.Context(), states, events); err != nil {
		t.Fatalf("SaveBreakerTransitions: %v", err)
	}
	got, err := db.LoadBreakerStates(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].EndpointID != a.ID || got[0].State != "open" || got[0].UpdatedAt.IsZero() {
		t.Errorf("states = %+v, want endpoint a's, open (the deleted endpoint's skipped)", got)
	}
	evs, err := db.ListBreakerEvents(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Endpoint != "gone" || evs[1].Endpoint != "a" || evs[1].At.IsZero() {
		t.Errorf("events = %+v, want a's and the deleted endpoint's, once each", evs)
	}
}
