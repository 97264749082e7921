package store

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// A reading is stored per endpoint, replaced by the next, read back as
// given, and goes with its endpoint.
func TestBalanceReadings(t *testing.T) {
	db := openTestDB(t)
	a, err := db.CreateEndpoint(t.Context(), endpointPatch("a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.CreateEndpoint(t.Context(), endpointPatch("b"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	steps := []struct {
		id  int64
		doc string
	}{
		{a.ID, `{"remaining":1}`},
		{a.ID, `{"remaining":0}`},
		{b.ID, `{"error":"500"}`},
	}
	for _, s := range steps {
		if err := db.SaveBalanceReading(t.Context(), s.id, at, json.RawMessage(s.doc)); err != nil {
			t.Fatalf("save %d: %v", s.id, err)
		}
	}
	got, err := db.LoadBalanceReadings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{a.ID: `{"remaining":0}`, b.ID: `{"error":"500"}`}
	if len(got) != len(want) {
		t.Fatalf("got %d readings, want %d", len(got), len(want))
	}
	for _, r := range got {
		if string(r.Reading) != want[r.EndpointID] || !r.At.Equal(at) {
			t.Errorf("endpoint %d: %s at %v, want %s at %v", r.EndpointID, r.Reading, r.At, want[r.EndpointID], at)
		}
	}
	if err := db.DeleteEndpoint(t.Context(), a.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.LoadBalanceReadings(t.Context()); len(got) != 1 || got[0].EndpointID != b.ID {
		t.Errorf("after deleting a: %+v, want b's only", got)
	}
	if err := db.SaveBalanceReading(t.Context(), a.ID, at, json.RawMessage(`{}`)); !errors.Is(err, ErrNotFound) {
		t.Errorf("save for a deleted endpoint: %v, want ErrNotFound", err)
	}
	if err := db.SaveBalanceReading(t.Context(), b.ID, at, json.RawMessage(`{`)); err == nil {
		t.Error("saved a reading that is not JSON")
	}
}

// A breaker state's balance mark is stored and read back.
func TestBreakerStateBalanceMark(t *testing.T) {
	db := openTestDB(t)
	e, err := db.CreateEndpoint(t.Context(), endpointPatch("a"))
	if err != nil {
		t.Fatal(err)
	}
	s := BreakerState{EndpointID: e.ID, State: "open", Reason: "quota_exhausted", Balance: true}
	if err := db.SaveBreakerState(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	got, err := db.LoadBreakerStates(t.Context())
	if err != nil || len(got) != 1 || !got[0].Balance {
		t.Errorf("loaded %+v, %v; want the balance mark", got, err)
	}
}
