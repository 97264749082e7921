package store

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestImport(t *testing.T) {
	db := openTestDB(t)
	existing := mustCreate(t, db, endpointPatch("alpha"))

	s := json.RawMessage(`{"strategy":"priority"}`)
	// alpha comes without a key, as in an export made without keys.
	n, err := db.Import(t.Context(), []EndpointPatch{
		{Name: ptr("alpha"), BaseURL: ptr("https://new.example"), Protocol: ptr("anthropic")},
		endpointPatch("beta"),
	}, s)
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	if n != 2 {
		t.Errorf("Import count = %d, want 2", n)
	}
	if names := endpointNames(t, db); !slices.Equal(names, []string{"alpha", "beta"}) {
		t.Errorf("endpoints = %v, want [alpha beta]", names)
	}
	a, err := db.GetEndpoint(t.Context(), existing.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.BaseURL != "https://new.example" || a.APIKey != "sk-alpha" {
		t.Errorf("alpha = %q key %q, want the new URL and the kept key", a.BaseURL, a.APIKey)
	}
	if got, _ := db.GetSettings(t.Context()); string(got) != string(s) {
		t.Errorf("settings = %s, want %s", got, s)
	}
	// Without a settings document the stored one stays.
	if _, err := db.Import(t.Context(), []EndpointPatch{endpointPatch("gamma")}, nil); err != nil {
		t.Fatalf("Import without settings: %v", err)
	}
	if got, _ := db.GetSettings(t.Context()); string(got) != string(s) {
		t.Errorf("settings after an import without them = %s, want %s", got, s)
	}
}

func TestImportRejectsAllOrNothing(t *testing.T) {
	db := openTestDB(t)
	mustCreate(t, db, endpointPatch("alpha"))
	before, _ := db.GetSettings(t.Context())
	s := json.RawMessage(`{"strategy":"round-robin"}`)

	bad := endpointPatch("gamma")
	bad.BaseURL = ptr("ftp://x")
	_, err := db.Import(t.Context(), []EndpointPatch{endpointPatch("beta"), bad}, s)
	assertValidation(t, err, "endpoints[1].base_url", CodeInvalidURL)

	if names := endpointNames(t, db); !slices.Equal(names, []string{"alpha"}) {
		t.Errorf("endpoints after a rejected import = %v, want [alpha]", names)
	}
	if got, _ := db.GetSettings(t.Context()); string(got) != string(before) {
		t.Errorf("settings changed by a rejected import: %s", got)
	}
}
