package store

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"
)

// everyField is an EndpointPatch that sets every field to a value none of
// them has by default, by the patch field's Go name. A field added to
// EndpointPatch without a value here fails TestEveryEndpointFieldStored.
var everyField = map[string]any{
	"Name":             "every-field",
	"BaseURL":          "https://every.example/v1",
	"APIKey":           "sk-every-field-1234",
	"Protocol":         "openai-chat",
	"Auth":             "x-api-key",
	"Models":           []string{"gpt-*", "o3"},
	"ModelMap":         map[string]string{"claude-*": "gpt-5"},
	"Enabled":          false,
	"Fast":             true,
	"FastSortOrder":    7,
	"SortOrder":        9,
	"BreakerOverrides": json.RawMessage(`{"failure_threshold":3}`),
	"PriceMultiplier":  0.25,
	"HedgeAfterMs":     int64(1500),
	"Drops": []EndpointDrop{{Drop: "context_management", At: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		Error: "400: context_management: Extra inputs are not permitted", Source: "learned"}},
	"OnModelMismatch": "fail",
	"Balance":         json.RawMessage(`{"template":"relay","low_threshold":5}`),
	"ProxyURL":        "socks5h://user:pass@127.0.0.1:1080",
	// The first key is APIKey's; ids are the store's, so they are left out
	// of the comparison (keyless).
	"Keys": []EndpointKey{{Label: "main", Key: "sk-every-field-1234", Weight: 3, Enabled: true},
		{Label: "spare", Key: "sk-every-field-5678", Weight: 0, Enabled: false}},
	"Weight": 4,
	"Tags":   []string{"cheap", "eu"},
}

// keyless is v with the ids of a key pool zeroed.
func keyless(v any) any {
	keys, ok := v.([]EndpointKey)
	if !ok {
		return v
	}
	out := slices.Clone(keys)
	for i := range out {
		out[i].ID = 0
	}
	return out
}

// fullPatch is everyField as an EndpointPatch; it fails t for a patch field
// everyField does not set.
func fullPatch(t *testing.T) EndpointPatch {
	t.Helper()
	var p EndpointPatch
	pv := reflect.ValueOf(&p).Elem()
	for i := range pv.NumField() {
		name := pv.Type().Field(i).Name
		v, ok := everyField[name]
		if !ok {
			t.Fatalf("EndpointPatch.%s has no value in everyField: give it one", name)
		}
		ptr := reflect.New(pv.Field(i).Type().Elem())
		ptr.Elem().Set(reflect.ValueOf(v))
		pv.Field(i).Set(ptr)
	}
	return p
}

// Every field a patch sets is stored and read back, on create and on
// update: the one field table (endpoint_fields.go) leaves none out.
func TestEveryEndpointFieldStored(t *testing.T) {
	db := openTestDB(t)
	check := func(what string, e Endpoint) {
		t.Helper()
		ev := reflect.ValueOf(e)
		for name, want := range everyField {
			got := ev.FieldByName(name)
			if !got.IsValid() {
				t.Errorf("%s: Endpoint has no field %s", what, name)
				continue
			}
			if !reflect.DeepEqual(keyless(got.Interface()), want) {
				t.Errorf("%s: %s = %#v, want %#v", what, name, got.Interface(), want)
			}
		}
	}
	e, err := db.CreateEndpoint(t.Context(), fullPatch(t))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := db.GetEndpoint(t.Context(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	check("created", got)

	other, err := db.CreateEndpoint(t.Context(), endpointPatch("other"))
	if err != nil {
		t.Fatal(err)
	}
	p := fullPatch(t)
	p.Name = ptr("every-field-2")
	everyField["Name"] = "every-field-2"
	defer func() { everyField["Name"] = "every-field" }()
	if _, err := db.UpdateEndpoint(t.Context(), other.ID, p); err != nil {
		t.Fatalf("update: %v", err)
	}
	if got, err = db.GetEndpoint(t.Context(), other.ID); err != nil {
		t.Fatal(err)
	}
	check("updated", got)
}

// Learned drops are added to what the endpoint has, once each, without
// touching its other fields.
func TestAddEndpointDrops(t *testing.T) {
	db := openTestDB(t)
	e, err := db.CreateEndpoint(t.Context(), endpointPatch("relay"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	d := EndpointDrop{Drop: "context_management", At: at, Error: "400: refused", Source: "learned"}
	for i, want := range []bool{true, false} {
		added, err := db.AddEndpointDrops(t.Context(), e.ID, []EndpointDrop{d})
		if err != nil || added != want {
			t.Fatalf("add %d: %v, %v; want %v", i, added, err, want)
		}
	}
	got, err := db.GetEndpoint(t.Context(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Drops, []EndpointDrop{d}) || got.Name != "relay" || got.APIKey != e.APIKey || !got.UpdatedAt.Equal(e.UpdatedAt) {
		t.Errorf("got %+v", got)
	}
	if _, err := db.AddEndpointDrops(t.Context(), 999, []EndpointDrop{d}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
}

// PatchOf sets every field of the patch, to a copy of the endpoint's.
func TestPatchOf(t *testing.T) {
	db := openTestDB(t)
	e, err := db.CreateEndpoint(t.Context(), fullPatch(t))
	if err != nil {
		t.Fatal(err)
	}
	p := PatchOf(e)
	pv := reflect.ValueOf(p)
	for i := range pv.NumField() {
		name := pv.Type().Field(i).Name
		if pv.Field(i).IsNil() {
			t.Errorf("PatchOf leaves %s unset", name)
			continue
		}
		if got, want := pv.Field(i).Elem().Interface(), reflect.ValueOf(e).FieldByName(name).Interface(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", name, got, want)
		}
	}
	(*p.Models)[0] = "changed"
	if e.Models[0] == "changed" {
		t.Error("the patch shares the endpoint's models")
	}
}
