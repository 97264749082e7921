package store

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// The last test of each endpoint survives a reopen, is replaced by the
// next, and goes with its endpoint (docs/BEHAVIOUR.md#health).
func TestEndpointTests(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccmesh.db")
	db := openAt(t, path)
	a := mustCreate(t, db, endpointPatch("alpha"))
	b := mustCreate(t, db, endpointPatch("beta"))
	at := time.Date(2026, 11, 30, 8, 0, 0, 123_000_000, time.UTC)
	first := EndpointTest{EndpointID: b.ID, At: at, OK: false, Status: 401, LatencyMs: 12, Message: "the endpoint answered 401"}
	second := EndpointTest{EndpointID: b.ID, At: at.Add(time.Minute), OK: true, Status: 200, LatencyMs: 30, Message: "ok"}
	other := EndpointTest{EndpointID: a.ID, At: at, OK: true, Status: 200, LatencyMs: 7, Message: "ok"}
	for _, tr := range []EndpointTest{first, other, second} {
		if err := db.SaveEndpointTest(t.Context(), tr); err != nil {
			t.Fatalf("SaveEndpointTest(%+v): %v", tr, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, path)
	got, err := db.LoadEndpointTests(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := []EndpointTest{other, second}; !reflect.DeepEqual(got, want) {
		t.Errorf("LoadEndpointTests after a reopen\n got %+v\nwant %+v", got, want)
	}

	if err := db.DeleteEndpoint(t.Context(), b.ID); err != nil {
		t.Fatal(err)
	}
	got, err = db.LoadEndpointTests(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := []EndpointTest{other}; !reflect.DeepEqual(got, want) {
		t.Errorf("after deleting %s\n got %+v\nwant %+v", b.Name, got, want)
	}
	if err := db.SaveEndpointTest(t.Context(), EndpointTest{EndpointID: b.ID, At: at}); !errors.Is(err, ErrNotFound) {
		t.Errorf("test of a deleted endpoint: %v, want ErrNotFound", err)
	}
}
