package store

import (
	"reflect"
	"testing"
)

func TestSettings(t *testing.T) {
	db := openTestDB(t)
	got, err := db.GetSettings(t.Context())
	if err != nil {
		t.Fatalf("GetSettings on a new database: %v", err)
	}
	if want := DefaultSettings(); !reflect.DeepEqual(got, want) {
		t.Errorf("new database settings\n got %+v\nwant %+v", got, want)
	}

	s := DefaultSettings()
	s.Strategy = "priority"
	s.Notifications = false // a zero value must survive the merge with defaults
	s.LogRetentionDays = 3
	s.ClientToken = "tok"
	s.Language = "zh-CN"
	s.Breaker.Claude = BreakerParams{FailureThreshold: ptr(5), TimeoutMs: ptr(int64(30_000))}
	s.Breaker.OpenAI = BreakerParams{ErrorRateThreshold: ptr(0.5), Disabled: ptr(true)}
	if err := db.PutSettings(t.Context(), s); err != nil {
		t.Fatalf("PutSettings: %v", err)
	}
	got, err = db.GetSettings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("round trip\n got %+v\nwant %+v", got, s)
	}
}

// TestSettingsMergeDefaults stands for a database written before a setting
// existed: the missing field reads as its default.
func TestSettingsMergeDefaults(t *testing.T) {
	db := openTestDB(t)
	if _, err := db.sql.ExecContext(t.Context(),
		`INSERT INTO settings (id, doc) VALUES (1, '{"strategy":"round-robin","idle_timeout_ms":5}')`); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetSettings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultSettings()
	want.Strategy, want.IdleTimeoutMs = "round-robin", 5
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged settings\n got %+v\nwant %+v", got, want)
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
