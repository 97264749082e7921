package store

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCreateEndpointDefaults(t *testing.T) {
	db := openTestDB(t)
	start := time.Now().Truncate(time.Millisecond)
	a := mustCreate(t, db, EndpointPatch{
		Name:     ptr("alpha"),
		BaseURL:  ptr(" https://relay.example/api/ "),
		Protocol: ptr("anthropic"),
		APIKey:   ptr("sk-secret\n"),
	})
	b := mustCreate(t, db, endpointPatch("beta"))

	want := Endpoint{
		ID: a.ID, Name: "alpha", BaseURL: "https://relay.example/api", APIKey: "sk-secret",
		Protocol: "anthropic", Auth: "", Models: []string{}, ModelMap: map[string]string{},
		Enabled: true, SortOrder: 0, BreakerOverrides: json.RawMessage("{}"), PriceMultiplier: 1, HedgeAfterMs: -1, Drops: []EndpointDrop{},
		Balance: json.RawMessage("{}"), CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
		Keys: []EndpointKey{{ID: a.Keys[0].ID, Key: "sk-secret", Weight: 1, Enabled: true}}, Weight: 1, Tags: []string{},
	}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("created\n got %+v\nwant %+v", a, want)
	}
	if a.CreatedAt.Before(start) || !a.UpdatedAt.Equal(a.CreatedAt) {
		t.Errorf("created_at %v / updated_at %v, want both at or after %v", a.CreatedAt, a.UpdatedAt, start)
	}
	if b.SortOrder != 1 {
		t.Errorf("second endpoint sort_order = %d, want 1 (after the last)", b.SortOrder)
	}
	got, err := db.GetEndpoint(t.Context(), a.ID)
	if err != nil {
		t.Fatalf("GetEndpoint: %v", err)
	}
	if !reflect.DeepEqual(got, a) {
		t.Errorf("GetEndpoint\n got %+v\nwant %+v", got, a)
	}
}

func TestCreateEndpointAllFields(t *testing.T) {
	db := openTestDB(t)
	p := endpointPatch("full")
	p.Auth = ptr("bearer")
	p.Protocol = ptr("openai-responses")
	p.Models = ptr([]string{"gpt-*", "o3"})
	p.ModelMap = ptr(map[string]string{"gpt-4*": "gpt-4.1"})
	p.Enabled = ptr(false)
	p.SortOrder = ptr(10)
	p.BreakerOverrides = ptr(json.RawMessage(`{"failure_threshold":2,"error_rate_threshold":1,"disabled":true}`))
	e := mustCreate(t, db, p)
	got, err := db.GetEndpoint(t.Context(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Auth != "bearer" || got.Protocol != "openai-responses" || got.Enabled || got.SortOrder != 10 {
		t.Errorf("scalar fields not stored: %+v", got)
	}
	if !slices.Equal(got.Models, *p.Models) || !reflect.DeepEqual(got.ModelMap, *p.ModelMap) {
		t.Errorf("models %v / model_map %v, want %v / %v", got.Models, got.ModelMap, *p.Models, *p.ModelMap)
	}
	if string(got.BreakerOverrides) != string(*p.BreakerOverrides) {
		t.Errorf("breaker_overrides = %s, want %s", got.BreakerOverrides, *p.BreakerOverrides)
	}
	// The stored endpoint must not alias the caller's input.
	(*p.Models)[0] = "changed"
	(*p.BreakerOverrides)[0] = '['
	if again, _ := db.GetEndpoint(t.Context(), e.ID); again.Models[0] != "gpt-*" || again.BreakerOverrides[0] != '{' {
		t.Errorf("models or breaker_overrides changed through the caller's input: %v %s", again.Models, again.BreakerOverrides)
	}
}

// The app's fields are the app's: the store keeps whatever words and
// document it is given, and an empty document as {}.
func TestEndpointKeepsAppFieldsAsGiven(t *testing.T) {
	db := openTestDB(t)
	p := endpointPatch("any")
	p.Protocol, p.Auth = ptr("a-protocol-of-the-app"), ptr("")
	p.BreakerOverrides = ptr(json.RawMessage(`{"a_later_parameter":[1,2],"timeout_ms":-1}`))
	e := mustCreate(t, db, p)
	if e.Protocol != *p.Protocol || e.Auth != "" || string(e.BreakerOverrides) != string(*p.BreakerOverrides) {
		t.Errorf("created %q %q %s, want the input as given", e.Protocol, e.Auth, e.BreakerOverrides)
	}
	steps := []struct {
		name  string
		patch EndpointPatch
		want  string
	}{
		{"left out keeps", EndpointPatch{Enabled: ptr(false)}, `{"a_later_parameter":[1,2],"timeout_ms":-1}`},
		{"empty is {}", EndpointPatch{BreakerOverrides: ptr(json.RawMessage(""))}, `{}`},
		{"replaced", EndpointPatch{BreakerOverrides: ptr(json.RawMessage(`{"disabled":true}`))}, `{"disabled":true}`},
	}
	for _, st := range steps {
		got, err := db.UpdateEndpoint(t.Context(), e.ID, st.patch)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if string(got.BreakerOverrides) != st.want {
			t.Errorf("%s: breaker_overrides = %s, want %s", st.name, got.BreakerOverrides, st.want)
		}
	}
	// What is not JSON at all is a caller's bug, not a user's input.
	bad := endpointPatch("bad")
	bad.BreakerOverrides = ptr(json.RawMessage(`{"x":`))
	if _, err := db.CreateEndpoint(t.Context(), bad); err == nil {
		t.Error("CreateEndpoint with breaker_overrides that are not JSON: nil error")
	} else if _, ok := err.(*ValidationError); ok {
		t.Errorf("CreateEndpoint with breaker_overrides that are not JSON: %v is a *ValidationError", err)
	}
}

func TestCreateEndpointFastOrder(t *testing.T) {
	db := openTestDB(t)
	fast := func(name string) EndpointPatch {
		p := endpointPatch(name)
		p.Fast = ptr(true)
		return p
	}
	tests := []struct {
		patch       EndpointPatch
		wantFast    bool
		wantFastOrd int
		wantSortOrd int
	}{
		{fast("f0"), true, 0, 0},
		{endpointPatch("slow"), false, 0, 1},
		{fast("f1"), true, 1, 2},
	}
	for _, tc := range tests {
		t.Run(*tc.patch.Name, func(t *testing.T) {
			e := mustCreate(t, db, tc.patch)
			if e.Fast != tc.wantFast || e.FastSortOrder != tc.wantFastOrd || e.SortOrder != tc.wantSortOrd {
				t.Errorf("fast=%v fast_sort_order=%d sort_order=%d, want %v %d %d",
					e.Fast, e.FastSortOrder, e.SortOrder, tc.wantFast, tc.wantFastOrd, tc.wantSortOrd)
			}
		})
	}
}

func TestUpdateEndpoint(t *testing.T) {
	db := openTestDB(t)
	a := mustCreate(t, db, endpointPatch("alpha"))
	mustCreate(t, db, endpointPatch("beta"))

	got, err := db.UpdateEndpoint(t.Context(), a.ID, EndpointPatch{
		BaseURL: ptr("http://localhost:8080/v1/"),
		Models:  ptr([]string{"*sonnet*"}),
		Fast:    ptr(true),
	})
	if err != nil {
		t.Fatalf("UpdateEndpoint: %v", err)
	}
	if got.Name != "alpha" || got.APIKey != "sk-alpha" || got.Protocol != "anthropic" {
		t.Errorf("fields left out of the patch changed: %+v", got)
	}
	if got.BaseURL != "http://localhost:8080/v1" || !slices.Equal(got.Models, []string{"*sonnet*"}) {
		t.Errorf("base_url %q models %v, want the patched values", got.BaseURL, got.Models)
	}
	if !got.Fast || got.FastSortOrder != 0 {
		t.Errorf("fast=%v fast_sort_order=%d, want true 0", got.Fast, got.FastSortOrder)
	}
	if !got.CreatedAt.Equal(a.CreatedAt) || got.UpdatedAt.Before(a.UpdatedAt) {
		t.Errorf("created_at %v updated_at %v; want created kept, updated not earlier than %v",
			got.CreatedAt, got.UpdatedAt, a.UpdatedAt)
	}

	// Renaming to its own name and clearing the key are fine; leaving the
	// fast queue resets the position.
	got, err = db.UpdateEndpoint(t.Context(), a.ID, EndpointPatch{Name: ptr("alpha"), APIKey: ptr(""), Fast: ptr(false)})
	if err != nil {
		t.Fatalf("UpdateEndpoint: %v", err)
	}
	if got.APIKey != "" || got.Fast || got.FastSortOrder != 0 {
		t.Errorf("key %q fast %v order %d, want cleared", got.APIKey, got.Fast, got.FastSortOrder)
	}
	// Names are case-sensitive: "Beta" is not "beta".
	if _, err := db.UpdateEndpoint(t.Context(), a.ID, EndpointPatch{Name: ptr("Beta")}); err != nil {
		t.Errorf("rename to Beta beside beta: %v", err)
	}
}

func TestEndpointNotFound(t *testing.T) {
	db := openTestDB(t)
	ops := []struct {
		name string
		call func() error
	}{
		{"get", func() error { _, err := db.GetEndpoint(t.Context(), 42); return err }},
		{"update", func() error { _, err := db.UpdateEndpoint(t.Context(), 42, EndpointPatch{}); return err }},
		{"delete", func() error { return db.DeleteEndpoint(t.Context(), 42) }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			if err := op.call(); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s of a missing endpoint: %v, want ErrNotFound", op.name, err)
			}
		})
	}
}

func TestDeleteEndpointRemovesBreakerState(t *testing.T) {
	db := openTestDB(t)
	a := mustCreate(t, db, endpointPatch("alpha"))
	b := mustCreate(t, db, endpointPatch("beta"))
	for _, id := range []int64{a.ID, b.ID} {
		if err := db.SaveBreakerState(t.Context(), BreakerState{EndpointID: id, State: "open"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.DeleteEndpoint(t.Context(), a.ID); err != nil {
		t.Fatalf("DeleteEndpoint: %v", err)
	}
	if names := endpointNames(t, db); !slices.Equal(names, []string{"beta"}) {
		t.Errorf("endpoints after delete = %v, want [beta]", names)
	}
	states, err := db.LoadBreakerStates(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || states[0].EndpointID != b.ID {
		t.Errorf("breaker states after delete = %+v, want only endpoint %d's", states, b.ID)
	}
}

func TestCreateEndpointValidation(t *testing.T) {
	tests := []struct {
		name      string
		patch     EndpointPatch
		wantField string
		wantCode  string
	}{
		{"no name", newPatchWith(func(p *EndpointPatch) { p.Name = nil }), "name", CodeRequired},
		{"empty name", newPatchWith(func(p *EndpointPatch) { p.Name = ptr("") }), "name", CodeRequired},
		{"no base_url", newPatchWith(func(p *EndpointPatch) { p.BaseURL = nil }), "base_url", CodeRequired},
		{"name with space", newPatchWith(func(p *EndpointPatch) { p.Name = ptr("my relay") }), "name", CodeInvalidName},
		{"name with slash", newPatchWith(func(p *EndpointPatch) { p.Name = ptr("a/b") }), "name", CodeInvalidName},
		{"name too long", newPatchWith(func(p *EndpointPatch) { p.Name = ptr(strings.Repeat("a", 65)) }), "name", CodeInvalidName},
		{"name not ascii", newPatchWith(func(p *EndpointPatch) { p.Name = ptr("中转") }), "name", CodeInvalidName},
		{"duplicate name", newPatchWith(func(p *EndpointPatch) { p.Name = ptr("taken") }), "name", CodeDuplicateName},
		{"ftp url", newPatchWith(func(p *EndpointPatch) { p.BaseURL = ptr("ftp://relay.example") }), "base_url", CodeInvalidURL},
		{"no scheme", newPatchWith(func(p *EndpointPatch) { p.BaseURL = ptr("relay.example/api") }), "base_url", CodeInvalidURL},
		{"no host", newPatchWith(func(p *EndpointPatch) { p.BaseURL = ptr("https:///v1") }), "base_url", CodeInvalidURL},
		{"port only", newPatchWith(func(p *EndpointPatch) { p.BaseURL = ptr("http://:8080") }), "base_url", CodeInvalidURL},
		{"query", newPatchWith(func(p *EndpointPatch) { p.BaseURL = ptr("https://relay.example/api?key=1") }), "base_url", CodeInvalidURL},
		{"fragment", newPatchWith(func(p *EndpointPatch) { p.BaseURL = ptr("https://relay.example/#x") }), "base_url", CodeInvalidURL},
		{"credentials", newPatchWith(func(p *EndpointPatch) { p.BaseURL = ptr("https://u:sk-1@relay.example") }), "base_url", CodeInvalidURL},
		{"key with control char", newPatchWith(func(p *EndpointPatch) { p.APIKey = ptr("sk-a\x00b") }), "api_key", CodeInvalidAPIKey},
		{"empty model pattern", newPatchWith(func(p *EndpointPatch) { p.Models = ptr([]string{"claude-*", ""}) }), "models", CodeInvalidModelPattern},
		{"question mark pattern", newPatchWith(func(p *EndpointPatch) { p.Models = ptr([]string{"claude-?"}) }), "models", CodeInvalidModelPattern},
		{"class pattern", newPatchWith(func(p *EndpointPatch) { p.Models = ptr([]string{"claude-[ab"}) }), "models", CodeInvalidModelPattern},
		{"model_map bad key", newPatchWith(func(p *EndpointPatch) { p.ModelMap = ptr(map[string]string{"a[": "b"}) }), "model_map", CodeInvalidModelMap},
		{"model_map empty key", newPatchWith(func(p *EndpointPatch) { p.ModelMap = ptr(map[string]string{"": "b"}) }), "model_map", CodeInvalidModelMap},
		{"model_map empty value", newPatchWith(func(p *EndpointPatch) { p.ModelMap = ptr(map[string]string{"claude-*": " "}) }), "model_map", CodeInvalidModelMap},
	}
	db := openTestDB(t)
	mustCreate(t, db, endpointPatch("taken"))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := db.CreateEndpoint(t.Context(), tc.patch)
			assertValidation(t, err, tc.wantField, tc.wantCode)
			if names := endpointNames(t, db); !slices.Equal(names, []string{"taken"}) {
				t.Errorf("endpoints after a rejected create = %v, want [taken]", names)
			}
		})
	}
}

func assertValidation(t *testing.T, err error, field, code string) {
	t.Helper()
	verr, ok := err.(*ValidationError)
	if !ok {
		t.Fatalf("error = %v (%T), want *ValidationError", err, err)
	}
	if verr.Field != field || verr.Code != code {
		t.Errorf("error field=%q code=%q, want %q %q (message %q)", verr.Field, verr.Code, field, code, verr.Message)
	}
	if verr.Message == "" {
		t.Error("validation error has no message")
	}
	if got, want := verr.IsConflict(), code == CodeDuplicateName; got != want {
		t.Errorf("IsConflict() = %v, want %v", got, want)
	}
}

func TestUpdateEndpointValidationChangesNothing(t *testing.T) {
	db := openTestDB(t)
	a := mustCreate(t, db, endpointPatch("alpha"))
	mustCreate(t, db, endpointPatch("beta"))
	tests := []struct {
		name      string
		patch     EndpointPatch
		wantField string
		wantCode  string
	}{
		{"rename to a taken name", EndpointPatch{Name: ptr("beta"), APIKey: ptr("sk-new")}, "name", CodeDuplicateName},
		{"empty base_url", EndpointPatch{BaseURL: ptr(""), APIKey: ptr("sk-new")}, "base_url", CodeRequired},
		{"bad url with a good name", EndpointPatch{Name: ptr("gamma"), BaseURL: ptr("mailto:x@y")}, "base_url", CodeInvalidURL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := db.UpdateEndpoint(t.Context(), a.ID, tc.patch)
			assertValidation(t, err, tc.wantField, tc.wantCode)
			got, err := db.GetEndpoint(t.Context(), a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, a) {
				t.Errorf("after a rejected update\n got %+v\nwant %+v", got, a)
			}
		})
	}
}

func TestSetFastQueue(t *testing.T) {
	db := openTestDB(t)
	var ids []int64
	for _, n := range []string{"a", "b", "c"} {
		p := endpointPatch(n)
		p.Fast = ptr(n == "a")
		ids = append(ids, mustCreate(t, db, p).ID)
	}
	a, b, c := ids[0], ids[1], ids[2]
	tests := []struct {
		name     string
		ids      []int64
		wantCode string        // "" = accepted
		wantFast map[int64]int // fast id → fast_sort_order, after the call
	}{
		{"reorder", []int64{c, a}, "", map[int64]int{c: 0, a: 1}},
		{"unknown id", []int64{b, 999}, CodeUnknownID, map[int64]int{c: 0, a: 1}},
		{"duplicate id", []int64{b, b}, CodeDuplicateID, map[int64]int{c: 0, a: 1}},
		{"all three", []int64{b, c, a}, "", map[int64]int{b: 0, c: 1, a: 2}},
		{"empty", []int64{}, "", map[int64]int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := db.SetFastQueue(t.Context(), tc.ids)
			if tc.wantCode == "" && err != nil {
				t.Fatalf("SetFastQueue(%v): %v", tc.ids, err)
			}
			if tc.wantCode != "" {
				assertValidation(t, err, "ids", tc.wantCode)
			}
			list, err := db.ListEndpoints(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			got := map[int64]int{}
			for _, e := range list {
				if e.Fast {
					got[e.ID] = e.FastSortOrder
				}
			}
			if !reflect.DeepEqual(got, tc.wantFast) {
				t.Errorf("fast queue = %v, want %v", got, tc.wantFast)
			}
		})
	}
}

func TestSetOrder(t *testing.T) {
	db := openTestDB(t)
	var ids []int64
	for _, n := range []string{"a", "b", "c"} {
		ids = append(ids, mustCreate(t, db, endpointPatch(n)).ID)
	}
	a, b, c := ids[0], ids[1], ids[2]
	tests := []struct {
		name      string
		ids       []int64
		wantError bool
		wantNames []string
	}{
		{"reverse", []int64{c, b, a}, false, []string{"c", "b", "a"}},
		{"missing one", []int64{a, b}, true, []string{"c", "b", "a"}},
		{"duplicate", []int64{a, a, b}, true, []string{"c", "b", "a"}},
		{"unknown id", []int64{a, b, c, 99}, true, []string{"c", "b", "a"}},
		{"unknown instead of one", []int64{a, b, 99}, true, []string{"c", "b", "a"}},
		{"rotate", []int64{b, c, a}, false, []string{"b", "c", "a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := db.SetOrder(t.Context(), tc.ids)
			if tc.wantError {
				assertValidation(t, err, "ids", CodeNotPermutation)
			} else if err != nil {
				t.Fatalf("SetOrder(%v): %v", tc.ids, err)
			}
			if got := endpointNames(t, db); !slices.Equal(got, tc.wantNames) {
				t.Errorf("list order = %v, want %v", got, tc.wantNames)
			}
		})
	}
}

// docs/BEHAVIOUR.md#cost: an endpoint's price multiplier is stored and
// changed like its other fields, and an update that leaves it out keeps it.
func TestEndpointPriceMultiplier(t *testing.T) {
	db := openTestDB(t)
	p := endpointPatch("relay")
	p.PriceMultiplier = ptr(0.3)
	e := mustCreate(t, db, p)
	if e.PriceMultiplier != 0.3 {
		t.Fatalf("created with price_multiplier %v, want 0.3", e.PriceMultiplier)
	}
	e, err := db.UpdateEndpoint(t.Context(), e.ID, EndpointPatch{Enabled: ptr(false)})
	if err != nil || e.PriceMultiplier != 0.3 {
		t.Fatalf("after an update without it: %v, %v; want 0.3 kept", e.PriceMultiplier, err)
	}
	if e, err = db.UpdateEndpoint(t.Context(), e.ID, EndpointPatch{PriceMultiplier: ptr(2.5)}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.GetEndpoint(t.Context(), e.ID); err != nil || got.PriceMultiplier != 2.5 {
		t.Errorf("read back %v, %v; want 2.5", got.PriceMultiplier, err)
	}
}

// priceMultiplierMigration is the version of 0000N_price_multiplier.sql.
const priceMultiplierMigration = 6

// Endpoints stored before the price multiplier cost their listed price.
func TestMigratePriceMultiplier(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccmesh.db")
	if _, err := prepareFile(path); err != nil {
		t.Fatal(err)
	}
	old := rawOpen(t, dsn(path, openOptions{busyTimeout: time.Second}))
	older := &DB{sql: old, path: path, writeSem: make(chan struct{}, 1)}
	prev := sourceBefore(t, older, priceMultiplierMigration)
	p, err := older.newMigrator()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(t.Context(), prev); err != nil {
		t.Fatalf("migrate to version %d: %v", prev, err)
	}
	createOld(t, old, "before")
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	db := openAt(t, path)
	list, err := db.ListEndpoints(t.Context())
	if err != nil || len(list) != 1 {
		t.Fatalf("endpoints after the migration: %v, %v", list, err)
	}
	if list[0].PriceMultiplier != 1 {
		t.Errorf("price_multiplier of an endpoint from before = %v, want 1", list[0].PriceMultiplier)
	}
}
