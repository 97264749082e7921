package store

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestBreakerStateUpsert(t *testing.T) {
	db := openTestDB(t)
	a := mustCreate(t, db, endpointPatch("alpha"))
	b := mustCreate(t, db, endpointPatch("beta"))
	opened := time.Date(2026, 11, 30, 8, 0, 0, 123_000_000, time.UTC)
	first := BreakerState{EndpointID: b.ID, State: "open", Reason: "rate_limited",
		OpenedAt: opened, Until: opened.Add(5 * time.Second), ConsecutiveFailures: 3,
		UpdatedAt: opened}
	second := BreakerState{EndpointID: b.ID, State: "half_open", Reason: "rate_limited",
		OpenedAt: opened, Until: opened.Add(5 * time.Second), HalfOpenSuccesses: 1, Reopens: 2,
		UpdatedAt: opened.Add(6 * time.Second)}
	other := BreakerState{EndpointID: a.ID, State: "open", Reason: "manual", OpenedAt: opened, UpdatedAt: opened}
	for _, s := range []BreakerState{first, other, second} {
		if err := db.SaveBreakerState(t.Context(), s); err != nil {
			t.Fatalf("SaveBreakerState(%+v): %v", s, err)
		}
	}
	got, err := db.LoadBreakerStates(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []BreakerState{other, second} // by endpoint id; the upsert replaced first
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LoadBreakerStates\n got %+v\nwant %+v", got, want)
	}

	err = db.SaveBreakerState(t.Context(), BreakerState{EndpointID: 999, State: "open"})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("state of a missing endpoint: %v, want ErrNotFound", err)
	}
}

func TestBreakerStateDefaultsUpdatedAt(t *testing.T) {
	db := openTestDB(t)
	a := mustCreate(t, db, endpointPatch("alpha"))
	before := time.Now().Truncate(time.Millisecond)
	if err := db.SaveBreakerState(t.Context(), BreakerState{EndpointID: a.ID, State: "closed"}); err != nil {
		t.Fatal(err)
	}
	got, err := db.LoadBreakerStates(t.Context())
	if err != nil || len(got) != 1 {
		t.Fatalf("LoadBreakerStates = %+v, %v", got, err)
	}
	if got[0].UpdatedAt.Before(before) || !got[0].OpenedAt.IsZero() || !got[0].Until.IsZero() {
		t.Errorf("updated_at %v (want ≥ %v), opened_at %v and until %v (want zero)",
			got[0].UpdatedAt, before, got[0].OpenedAt, got[0].Until)
	}
}

func TestBreakerEvents(t *testing.T) {
	db := openTestDB(t)
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	events := []BreakerEvent{
		{At: at, EndpointID: 1, Endpoint: "alpha", Cause: "request", From: "closed", To: "open", Reason: "broken"},
		{At: at.Add(time.Second), EndpointID: 2, Endpoint: "beta", Cause: "force_open", From: "closed", To: "open", Reason: "manual"},
		{At: at.Add(2 * time.Second), EndpointID: 1, Endpoint: "alpha", Cause: "restore", From: "", To: "open", Reason: "broken"},
	}
	for i := range events {
		id, err := db.AddBreakerEvent(t.Context(), events[i])
		if err != nil {
			t.Fatalf("AddBreakerEvent: %v", err)
		}
		events[i].ID = id
	}
	tests := []struct {
		name     string
		endpoint int64
		limit    int
		want     []BreakerEvent
	}{
		{"all newest first", 0, 0, []BreakerEvent{events[2], events[1], events[0]}},
		{"one endpoint", 1, 10, []BreakerEvent{events[2], events[0]}},
		{"limit", 0, 1, []BreakerEvent{events[2]}},
		{"no such endpoint", 7, 0, []BreakerEvent{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := db.ListBreakerEvents(t.Context(), tc.endpoint, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ListBreakerEvents(%d, %d)\n got %+v\nwant %+v", tc.endpoint, tc.limit, got, tc.want)
			}
		})
	}
}
