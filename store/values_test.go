package store

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// Values that used to be stored and then broke something: each is refused
// with its field, its code and a message that says what is wrong.
func TestCreateEndpointRefusesBadValues(t *testing.T) {
	tests := []struct {
		name          string
		patch         EndpointPatch
		field, code   string
		wantInMessage string
	}{
		{"name .", newPatchWith(func(p *EndpointPatch) { p.Name = ptr(".") }), "name", CodeInvalidName, "@name/model"},
		{"name ..", newPatchWith(func(p *EndpointPatch) { p.Name = ptr("..") }), "name", CodeInvalidName, "@name/model"},
		{"port above 65535", newPatchWith(func(p *EndpointPatch) { p.BaseURL = ptr("https://relay.example:65536/api") }), "base_url", CodeInvalidURL, "port must be a number from 1 to 65535"},
		{"port 99999", newPatchWith(func(p *EndpointPatch) { p.BaseURL = ptr("http://127.0.0.1:99999") }), "base_url", CodeInvalidURL, "port must be a number from 1 to 65535"},
		{"port 0", newPatchWith(func(p *EndpointPatch) { p.BaseURL = ptr("http://127.0.0.1:0") }), "base_url", CodeInvalidURL, "port must be a number from 1 to 65535"},
		{"port not numeric", newPatchWith(func(p *EndpointPatch) { p.BaseURL = ptr("http://relay.example:80a/api") }), "base_url", CodeInvalidURL, "port must be a number from 1 to 65535"},
		{"ipv6 port above 65535", newPatchWith(func(p *EndpointPatch) { p.BaseURL = ptr("http://[::1]:70000") }), "base_url", CodeInvalidURL, "port must be a number from 1 to 65535"},
		{"base_url not UTF-8", newPatchWith(func(p *EndpointPatch) { p.BaseURL = ptr("https://relay.example/\xff") }), "base_url", CodeInvalidURL, "UTF-8"},
		{"key not UTF-8", newPatchWith(func(p *EndpointPatch) { p.APIKey = ptr("sk-\xffabc") }), "api_key", CodeInvalidAPIKey, "UTF-8"},
		{"key with U+FFFD", newPatchWith(func(p *EndpointPatch) { p.APIKey = ptr("sk-\uFFFDabc") }), "api_key", CodeInvalidAPIKey, "UTF-8"},
		{"name not UTF-8", newPatchWith(func(p *EndpointPatch) { p.Name = ptr("a\xff") }), "name", CodeInvalidName, "letters, digits"},
		{"model not UTF-8", newPatchWith(func(p *EndpointPatch) { p.Models = ptr([]string{"claude-\xc3"}) }), "models", CodeInvalidModelPattern, "UTF-8"},
		{"model_map key not UTF-8", newPatchWith(func(p *EndpointPatch) { p.ModelMap = ptr(map[string]string{"a\xff": "b"}) }), "model_map", CodeInvalidModelMap, "UTF-8"},
		{"model_map value not UTF-8", newPatchWith(func(p *EndpointPatch) { p.ModelMap = ptr(map[string]string{"a": "b\xff"}) }), "model_map", CodeInvalidModelMap, "UTF-8"},
	}
	db := openTestDB(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := db.CreateEndpoint(t.Context(), tc.patch)
			assertValidation(t, err, tc.field, tc.code)
			if err != nil && !strings.Contains(err.Error(), tc.wantInMessage) {
				t.Errorf("message %q does not say %q", err, tc.wantInMessage)
			}
		})
	}
	if names := endpointNames(t, db); len(names) != 0 {
		t.Errorf("endpoints after rejected creates = %v, want none", names)
	}
	for _, url := range []string{"http://127.0.0.1:65535", "http://[::1]:1/api", "https://relay.example:/x"} {
		p := endpointPatch("ok")
		p.BaseURL = ptr(url)
		if _, err := db.CreateEndpoint(t.Context(), p); err != nil {
			t.Errorf("base_url %s: %v, want it accepted", url, err)
		}
		if err := db.DeleteEndpoint(t.Context(), lastID(t, db)); err != nil {
			t.Fatal(err)
		}
	}
}

func lastID(t *testing.T, db *DB) int64 {
	t.Helper()
	var id int64
	if err := db.sql.QueryRowContext(t.Context(), `SELECT max(id) FROM endpoints`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// Normalising a base_url twice gives what normalising it once gave.
func TestBaseURLNormalisedOnce(t *testing.T) {
	for _, in := range []string{"https://a.example/ /", "https://a.example/\t/ ", " https://a.example/api// "} {
		e := Endpoint{BaseURL: in}
		if err := checkBaseURL(&e); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		once := e.BaseURL
		if err := checkBaseURL(&e); err != nil || e.BaseURL != once {
			t.Errorf("%q: once %q, twice %q (%v)", in, once, e.BaseURL, err)
		}
		if strings.HasSuffix(once, "/") || strings.HasSuffix(once, " ") {
			t.Errorf("%q normalised to %q, want no trailing / or space", in, once)
		}
	}
}

// An import names each endpoint once: a name that appears twice is refused,
// naming the second, and nothing is stored.
func TestImportRefusesDuplicateNames(t *testing.T) {
	db := openTestDB(t)
	mustCreate(t, db, endpointPatch("alpha"))
	second := endpointPatch("beta")
	second.BaseURL = ptr("https://other.example")
	n, err := db.Import(t.Context(), []EndpointPatch{endpointPatch("beta"), endpointPatch("gamma"), second}, nil)
	assertValidation(t, err, "endpoints[2].name", CodeDuplicateName)
	if err != nil && !strings.Contains(err.Error(), `"beta" appears twice in this import (endpoints 1 and 3)`) {
		t.Errorf("message %q does not name the duplicate and both places", err)
	}
	if n != 0 {
		t.Errorf("count = %d, want 0", n)
	}
	if names := endpointNames(t, db); !slices.Equal(names, []string{"alpha"}) {
		t.Errorf("endpoints after the refused import = %v, want [alpha]", names)
	}
}

// An order at the top of the range (or a huge one stored before there was
// a range) never makes the next create fail: appended endpoints stop at
// MaxSortOrder, and ties go by id.
func TestAppendAfterHighestSortOrder(t *testing.T) {
	db := openTestDB(t)
	p := endpointPatch("huge")
	p.SortOrder, p.Fast, p.FastSortOrder = ptr(math.MaxInt64), ptr(true), ptr(math.MaxInt64)
	mustCreate(t, db, p)
	a := endpointPatch("a")
	a.Fast = ptr(true)
	first := mustCreate(t, db, a)
	b := endpointPatch("b")
	b.Fast = ptr(true)
	second := mustCreate(t, db, b)
	if first.SortOrder != MaxSortOrder || second.SortOrder != MaxSortOrder ||
		first.FastSortOrder != MaxSortOrder || second.FastSortOrder != MaxSortOrder {
		t.Errorf("appended orders = %d/%d and %d/%d, want %d", first.SortOrder, first.FastSortOrder,
			second.SortOrder, second.FastSortOrder, MaxSortOrder)
	}
	if names := endpointNames(t, db); !slices.Equal(names, []string{"a", "b", "huge"}) {
		t.Errorf("list order = %v, want a before b (by id)", names)
	}
}
