package store

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestSyncConfigAndState(t *testing.T) {
	db := openTestDB(t)
	ctx := t.Context()
	cfg, st, err := db.GetSync(ctx)
	if err != nil || cfg != (SyncConfig{}) || st != (SyncState{}) {
		t.Fatalf("fresh GetSync = %+v %+v %v, want zeros", cfg, st, err)
	}
	want := SyncConfig{URL: "https://dav.example/ccmesh/", User: "me", Password: "pw", Passphrase: "correct horse"}
	if err := db.PutSyncConfig(ctx, want, false); err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1_800_000_000_123).UTC()
	state := SyncState{At: at, Action: "push", LocalHash: "l1", RemoteHash: "r1", RemoteETag: `"e1"`, RemoteModified: at.Add(-time.Second)}
	if err := db.PutSyncState(ctx, state); err != nil {
		t.Fatal(err)
	}
	if cfg, st, err = db.GetSync(ctx); err != nil || cfg != want || st != state {
		t.Errorf("GetSync = %+v %+v %v, want %+v %+v", cfg, st, err, want, state)
	}
	// A new password keeps the state; a reset forgets it.
	want.Password = "pw2"
	if err := db.PutSyncConfig(ctx, want, false); err != nil {
		t.Fatal(err)
	}
	if _, st, _ = db.GetSync(ctx); st != state {
		t.Errorf("state after a kept config change = %+v, want %+v", st, state)
	}
	want.URL = "https://other.example/"
	if err := db.PutSyncConfig(ctx, want, true); err != nil {
		t.Fatal(err)
	}
	if cfg, st, _ = db.GetSync(ctx); cfg != want || st != (SyncState{}) {
		t.Errorf("after a reset: %+v %+v, want %+v and no state", cfg, st, want)
	}
}

// One push or pull at a time; a hold ends with UnlockSync or at its time.
func TestLockSync(t *testing.T) {
	db := openTestDB(t)
	ctx := t.Context()
	now := time.UnixMilli(1_800_000_000_000)
	hold := time.Minute
	for _, tc := range []struct {
		name string
		at   time.Time
		want bool
	}{
		{"first", now, true},
		{"while held", now.Add(hold - time.Millisecond), false},
		{"when the hold ends", now.Add(hold), true},
	} {
		if ok, err := db.LockSync(ctx, tc.at, hold); err != nil || ok != tc.want {
			t.Errorf("%s: LockSync = %v %v, want %v", tc.name, ok, err, tc.want)
		}
	}
	if err := db.UnlockSync(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.LockSync(ctx, now, hold); err != nil || !ok {
		t.Errorf("after UnlockSync: LockSync = %v %v, want true", ok, err)
	}
	// The config and state rows are the same row: the hold leaves them be.
	if cfg, st, err := db.GetSync(ctx); err != nil || cfg != (SyncConfig{}) || st != (SyncState{}) {
		t.Errorf("GetSync after holds = %+v %+v %v", cfg, st, err)
	}
}

func TestReplace(t *testing.T) {
	db := openTestDB(t)
	ctx := t.Context()
	keep := mustCreate(t, db, endpointPatch("keep"))
	gone := mustCreate(t, db, endpointPatch("gone"))
	if err := db.PutSettings(ctx, json.RawMessage(`{"strategy":"sticky"}`)); err != nil {
		t.Fatal(err)
	}
	// keep: a new URL, no key given (the stored one stays); new: created.
	removed, err := db.Replace(ctx, []EndpointPatch{
		{Name: ptr("keep"), BaseURL: ptr("https://keep2.example")},
		endpointPatch("new"),
	}, json.RawMessage(`{"strategy":"priority"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []int64{gone.ID}) {
		t.Errorf("removed = %v, want [%d]", removed, gone.ID)
	}
	if got := endpointNames(t, db); !slices.Equal(got, []string{"keep", "new"}) {
		t.Errorf("endpoints = %v, want [keep new]", got)
	}
	e, err := db.GetEndpoint(ctx, keep.ID)
	if err != nil || e.BaseURL != "https://keep2.example" || e.APIKey != "sk-keep" {
		t.Errorf("keep = %+v %v, want the new URL and the old key", e, err)
	}
	if doc, _ := db.GetSettings(ctx); string(doc) != `{"strategy":"priority"}` {
		t.Errorf("settings = %s", doc)
	}

	// A refused replace changes nothing: a bad endpoint, or a name twice.
	for _, tc := range []struct {
		name      string
		patches   []EndpointPatch
		field     string
		duplicate bool
	}{
		{"bad URL", []EndpointPatch{endpointPatch("keep"), {Name: ptr("x"), BaseURL: ptr("ftp://x"), Protocol: ptr("anthropic")}}, "endpoints[1].base_url", false},
		{"name twice", []EndpointPatch{endpointPatch("a"), endpointPatch("a")}, "endpoints[1].name", true},
	} {
		_, err := db.Replace(ctx, tc.patches, json.RawMessage(`{"strategy":"round-robin"}`))
		var verr *ValidationError
		if !errors.As(err, &verr) || verr.Field != tc.field || verr.IsConflict() != tc.duplicate {
			t.Errorf("%s: Replace error = %v, want a validation error at %s", tc.name, err, tc.field)
		}
		if got := endpointNames(t, db); !slices.Equal(got, []string{"keep", "new"}) {
			t.Errorf("%s: endpoints after a refused replace = %v", tc.name, got)
		}
		if doc, _ := db.GetSettings(ctx); string(doc) != `{"strategy":"priority"}` {
			t.Errorf("%s: settings after a refused replace = %s", tc.name, doc)
		}
	}

	// No settings keeps them; no endpoints removes every one.
	if _, err := db.Replace(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := endpointNames(t, db); len(got) != 0 {
		t.Errorf("endpoints after replacing with none = %v", got)
	}
	if doc, _ := db.GetSettings(ctx); string(doc) != `{"strategy":"priority"}` {
		t.Errorf("settings after a replace without them = %s", doc)
	}
}
