package store

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// keyPoolsMigration is the version of 00015_key_pools.sql.
const keyPoolsMigration = 15

// An endpoint stored before pools keeps its key as keys[0], with an id no
// later key gets; one without a key has an empty pool.
func TestMigrateKeyPools(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccmesh.db")
	if _, err := prepareFile(path); err != nil {
		t.Fatal(err)
	}
	old := rawOpen(t, dsn(path, openOptions{busyTimeout: time.Second}))
	older := &DB{sql: old, path: path, writeSem: make(chan struct{}, 1)}
	p, err := older.newMigrator()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(t.Context(), keyPoolsMigration-1); err != nil {
		t.Fatalf("migrate to version %d: %v", keyPoolsMigration-1, err)
	}
	createOld(t, old, "before")
	if _, err := old.ExecContext(t.Context(), `INSERT INTO endpoints (name, base_url, api_key, protocol,
		created_at, updated_at) VALUES ('keyless', 'https://k.example', '', 'anthropic', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	db := openAt(t, path)
	list, err := db.ListEndpoints(t.Context())
	if err != nil || len(list) != 2 {
		t.Fatalf("endpoints after the migration: %v, %v", list, err)
	}
	got := list[0]
	want := EndpointKey{ID: got.ID, Key: "sk-before", Weight: 1, Enabled: true}
	if len(got.Keys) != 1 || got.Keys[0] != want || got.APIKey != "sk-before" || got.Weight != 1 {
		t.Errorf("migrated endpoint: keys %+v api_key %q weight %d, want [%+v] sk-before 1", got.Keys, got.APIKey, got.Weight, want)
	}
	if len(list[1].Keys) != 0 || list[1].APIKey != "" {
		t.Errorf("keyless endpoint: keys %+v api_key %q, want none", list[1].Keys, list[1].APIKey)
	}
	// The counter has moved past the migrated ids.
	e, err := db.UpdateEndpoint(t.Context(), list[1].ID, EndpointPatch{APIKey: ptr("sk-new")})
	if err != nil {
		t.Fatal(err)
	}
	if e.Keys[0].ID <= got.Keys[0].ID {
		t.Errorf("new key id %d, want above the migrated one (%d)", e.Keys[0].ID, got.Keys[0].ID)
	}
}

// What a patch does to a pool: keys replace it (an id of a stored key
// without a secret keeps that secret, any other id is new), api_key alone
// replaces it with one key unless it is the same first key, and APIKey is
// always the first key's secret.
func TestKeyPoolPatches(t *testing.T) {
	db := openTestDB(t)
	e := mustCreate(t, db, EndpointPatch{Name: ptr("pool"), BaseURL: ptr("https://p.example"), Protocol: ptr("anthropic"),
		Keys: &[]EndpointKey{{Label: "a", Key: " sk-a ", Weight: 3, Enabled: true}, {Label: "b", Key: "sk-b", Weight: 1, Enabled: true}}})
	a, b := e.Keys[0], e.Keys[1]
	if e.APIKey != "sk-a" || a.Key != "sk-a" || a.ID == 0 || b.ID == 0 || a.ID == b.ID {
		t.Fatalf("created pool %+v, api_key %q", e.Keys, e.APIKey)
	}
	tests := []struct {
		name    string
		patch   EndpointPatch
		want    []string // label:key of each key
		wantIDs []int64  // 0: a new id
		apiKey  string
	}{
		{"keep b's secret by id, reorder", EndpointPatch{Keys: &[]EndpointKey{{ID: b.ID, Label: "b2", Weight: 1, Enabled: true}, {ID: a.ID, Label: "a", Weight: 3, Enabled: true}}},
			[]string{"b2:sk-b", "a:sk-a"}, []int64{b.ID, a.ID}, "sk-b"},
		{"an unknown id is new", EndpointPatch{Keys: &[]EndpointKey{{ID: 999, Label: "c", Key: "sk-c", Weight: 1, Enabled: true}}},
			[]string{"c:sk-c"}, []int64{0}, "sk-c"},
		{"the same api_key keeps the pool", EndpointPatch{APIKey: ptr("sk-c"), Name: ptr("pool")},
			[]string{"c:sk-c"}, nil, "sk-c"},
		{"another api_key is a pool of one", EndpointPatch{APIKey: ptr("sk-d")},
			[]string{":sk-d"}, []int64{0}, "sk-d"},
		{"an empty api_key empties it", EndpointPatch{APIKey: ptr("")}, []string{}, nil, ""},
	}
	prev := e.Keys
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.UpdateEndpoint(t.Context(), e.ID, tt.patch)
			if err != nil {
				t.Fatal(err)
			}
			labels := make([]string, len(got.Keys))
			for i, k := range got.Keys {
				labels[i] = k.Label + ":" + k.Key
			}
			if !equalStrings(labels, tt.want) || got.APIKey != tt.apiKey {
				t.Errorf("keys %v api_key %q, want %v %q", labels, got.APIKey, tt.want, tt.apiKey)
			}
			for i, id := range tt.wantIDs {
				if id == 0 && (got.Keys[i].ID == 0 || hasID(prev, got.Keys[i].ID) || got.Keys[i].ID == a.ID || got.Keys[i].ID == b.ID) {
					t.Errorf("key %d id %d, want a new one", i, got.Keys[i].ID)
				}
				if id != 0 && got.Keys[i].ID != id {
					t.Errorf("key %d id %d, want %d", i, got.Keys[i].ID, id)
				}
			}
			prev = got.Keys
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func hasID(keys []EndpointKey, id int64) bool {
	for _, k := range keys {
		if k.ID == id {
			return true
		}
	}
	return false
}

// A pool is refused with a duplicate, a missing or bad secret, or a
// weight out of range.
func TestKeyPoolRefused(t *testing.T) {
	tests := []struct {
		name        string
		keys        []EndpointKey
		field, code string
	}{
		{"duplicate", []EndpointKey{{Key: "sk-a", Weight: 1}, {Key: " sk-a", Weight: 1}}, "keys[1].key", CodeDuplicateKey},
		{"no secret", []EndpointKey{{Label: "x", Weight: 1}}, "keys[0].key", CodeRequired},
		{"control character", []EndpointKey{{Key: "sk\x00a", Weight: 1}}, "keys[0].key", CodeInvalidAPIKey},
		{"weight", []EndpointKey{{Key: "sk-a", Weight: 1001}}, "keys[0].weight", CodeInvalidKey},
	}
	db := openTestDB(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := endpointPatch("refused")
			p.Keys = &tt.keys
			_, err := db.CreateEndpoint(t.Context(), p)
			var verr *ValidationError
			if !errors.As(err, &verr) || verr.Field != tt.field || verr.Code != tt.code {
				t.Errorf("error %v, want field %s code %s", err, tt.field, tt.code)
			}
		})
	}
}

// Decoding a key without weight or enabled gives 1 and true.
func TestEndpointKeyDefaults(t *testing.T) {
	var k EndpointKey
	if err := k.UnmarshalJSON([]byte(`{"key":"sk"}`)); err != nil {
		t.Fatal(err)
	}
	if k.Weight != 1 || !k.Enabled {
		t.Errorf("got %+v, want weight 1 enabled", k)
	}
	if err := k.UnmarshalJSON([]byte(`{"key":"sk","weight":0,"enabled":false}`)); err != nil || k.Weight != 0 || k.Enabled {
		t.Errorf("got %+v %v, want weight 0 disabled", k, err)
	}
}
