package store

import (
	"encoding/json"
	"testing"
)

func TestSettings(t *testing.T) {
	db := openTestDB(t)
	got, err := db.GetSettings(t.Context())
	if err != nil || got != nil {
		t.Fatalf("GetSettings on a new database = %s, %v; want nil, nil", got, err)
	}
	// The document is the app's: kept as given, whatever its members.
	for _, doc := range []string{
		`{"strategy":"priority","notifications":false,"breaker":{"claude":{"timeout_ms":30000}},"a_later_setting":[1]}`,
		`{}`,
	} {
		if err := db.PutSettings(t.Context(), json.RawMessage(doc)); err != nil {
			t.Fatalf("PutSettings(%s): %v", doc, err)
		}
		got, err = db.GetSettings(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != doc {
			t.Errorf("round trip = %s, want %s", got, doc)
		}
	}
	if err := db.PutSettings(t.Context(), json.RawMessage(`{"x":`)); err == nil {
		t.Error("PutSettings of a document that is not JSON: nil error")
	}
	if got, _ := db.GetSettings(t.Context()); string(got) != `{}` {
		t.Errorf("after a rejected PutSettings = %s, want the last document", got)
	}
}

func TestMeta(t *testing.T) {
	db := openTestDB(t)
	steps := []struct {
		set       *string // nil: only read
		wantValue string
		wantOK    bool
	}{
		{nil, "", false},
		{ptr(`{"w":800}`), `{"w":800}`, true},
		{ptr(""), "", true},
	}
	for i, st := range steps {
		if st.set != nil {
			if err := db.SetMeta(t.Context(), "window", *st.set); err != nil {
				t.Fatalf("step %d: SetMeta: %v", i, err)
			}
		}
		v, ok, err := db.GetMeta(t.Context(), "window")
		if err != nil || v != st.wantValue || ok != st.wantOK {
			t.Errorf("step %d: GetMeta = %q, %v, %v; want %q, %v, nil", i, v, ok, err, st.wantValue, st.wantOK)
		}
	}
}
