package store

import (
	"reflect"
	"slices"
	"testing"
)

func TestImport(t *testing.T) {
	db := openTestDB(t)
	existing := mustCreate(t, db, endpointPatch("alpha"))

	s := DefaultSettings()
	s.Strategy = "priority"
	// alpha comes without a key, as in an export made without keys.
	n, err := db.Import(t.Context(), []EndpointPatch{
		{Name: ptr("alpha"), BaseURL: ptr("https://new.example"), Protocol: ptr(ProtocolAnthropic)},
		endpointPatch("beta"),
	}, &s)
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
	if got, _ := db.GetSettings(t.Context()); !reflect.DeepEqual(got, s) {
		t.Errorf("settings = %+v, want %+v", got, s)
	}
}

func TestImportRejectsAllOrNothing(t *testing.T) {
	db := openTestDB(t)
	mustCreate(t, db, endpointPatch("alpha"))
	before, _ := db.GetSettings(t.Context())
	s := DefaultSettings()
	s.Strategy = "round-robin"

	bad := endpointPatch("gamma")
	bad.BaseURL = ptr("ftp://x")
	_, err := db.Import(t.Context(), []EndpointPatch{endpointPatch("beta"), bad}, &s)
	assertValidation(t, err, "endpoints[1].base_url", CodeInvalidURL)

	if names := endpointNames(t, db); !slices.Equal(names, []string{"alpha"}) {
		t.Errorf("endpoints after a rejected import = %v, want [alpha]", names)
	}
	if got, _ := db.GetSettings(t.Context()); !reflect.DeepEqual(got, before) {
		t.Errorf("settings changed by a rejected import: %+v", got)
	}
}
