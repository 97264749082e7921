package app

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/store"
)

// Every integer the admin API takes has a range tag that reads, a float
// may have one, and nothing else has one; an order's range ends at the
// store's MaxSortOrder.
func TestRangesCoverEveryNumber(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[Settings](), reflect.TypeFor[store.EndpointPatch](), reflect.TypeFor[breaker.Overrides]()} {
		for i := range typ.NumField() {
			f := typ.Field(i)
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			r, ok, err := config.RangeOf(f)
			if err != nil {
				t.Error(err)
			}
			switch ft.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				if !ok {
					t.Errorf("%s.%s has no range tag", typ, f.Name)
				}
				if strings.HasSuffix(f.Name, "SortOrder") && r.Max != store.MaxSortOrder {
					t.Errorf("%s.%s ends at %d, want store.MaxSortOrder %d", typ, f.Name, r.Max, store.MaxSortOrder)
				}
			case reflect.Float32, reflect.Float64:
			default:
				if ok {
					t.Errorf("%s.%s is no number but has a range tag", typ, f.Name)
				}
			}
		}
	}
}

// Durations, counts and orders outside their ranges are refused with the
// range in the message, and the ends are taken
// (docs/BEHAVIOUR.md#bad-input-and-faults).
func TestRangesEnforced(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	ep := fmt.Sprintf("/api/endpoints/%d", e.ID)
	const huge = "9223372036854775807"
	defaults, err := json.Marshal(DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		method, path, body string
		code, field, msg   string
	}{
		{"PUT", "/api/settings", `{"first_byte_timeout_ms":` + huge + `}`, "invalid_setting", "first_byte_timeout_ms",
			"first_byte_timeout_ms must be from 1 to 3600000 (1 ms to 1 h), got " + huge},
		{"PUT", "/api/settings", `{"first_byte_timeout_ms":0}`, "invalid_setting", "first_byte_timeout_ms", "got 0"},
		{"PUT", "/api/settings", `{"idle_timeout_ms":3600001}`, "invalid_setting", "idle_timeout_ms", "got 3600001"},
		{"PUT", "/api/settings", `{"max_body_bytes":1023}`, "invalid_setting", "max_body_bytes",
			"max_body_bytes must be from 1024 to 1073741824 (1 KiB to 1 GiB), got 1023"},
		{"PUT", "/api/settings", `{"max_body_bytes":1073741825}`, "invalid_setting", "max_body_bytes", "got 1073741825"},
		{"PUT", "/api/settings", `{"log_retention_rows":99}`, "invalid_setting", "log_retention_rows",
			"log_retention_rows must be from 100 to 10000000, got 99"},
		{"PUT", "/api/settings", `{"log_retention_rows":10000001}`, "invalid_setting", "log_retention_rows", "got 10000001"},
		{"PUT", "/api/settings", `{"log_retention_days":3651}`, "invalid_setting", "log_retention_days", "got 3651"},
		{"PUT", "/api/settings", `{"log_retention_days":0}`, "invalid_setting", "log_retention_days", "got 0"},
		{"PUT", "/api/settings", `{"breaker":{"claude":{"quota_timeout_ms":` + huge + `}}}`, "invalid_breaker_override",
			"breaker.claude.quota_timeout_ms", "quota_timeout_ms must be from 1 to 604800000 (1 ms to 7 days), got " + huge},
		{"PUT", "/api/settings", `{"breaker":{"openai":{"min_requests":10001}}}`, "invalid_breaker_override",
			"breaker.openai.min_requests", "min_requests must be from 1 to 10000, got 10001"},
		{"PUT", ep, `{"sort_order":` + huge + `}`, "out_of_range", "sort_order", "sort_order must be from 0 to 1000000, got " + huge},
		{"PUT", ep, `{"sort_order":-1}`, "out_of_range", "sort_order", "got -1"},
		{"PUT", ep, `{"fast":true,"fast_sort_order":1000001}`, "out_of_range", "fast_sort_order", "got 1000001"},
		{"PUT", ep, `{"breaker_overrides":{"timeout_ms":604800001}}`, "invalid_breaker_override", "breaker_overrides.timeout_ms", "got 604800001"},
		{"PUT", ep, `{"breaker_overrides":{"rate_limit_timeout_ms":` + huge + `}}`, "invalid_breaker_override", "breaker_overrides.rate_limit_timeout_ms", "got " + huge},
		{"PUT", ep, `{"breaker_overrides":{"max_rate_limit_timeout_ms":604800001}}`, "invalid_breaker_override", "breaker_overrides.max_rate_limit_timeout_ms", "got 604800001"},
		{"PUT", ep, `{"breaker_overrides":{"failure_threshold":10001}}`, "invalid_breaker_override", "breaker_overrides.failure_threshold", "got 10001"},
		{"PUT", ep, `{"breaker_overrides":{"success_threshold":10001}}`, "invalid_breaker_override", "breaker_overrides.success_threshold", "got 10001"},
		{"PUT", ep, `{"price_multiplier":0}`, "out_of_range", "price_multiplier", "price_multiplier must be from 0.001 to 1000, got 0"},
		{"PUT", ep, `{"price_multiplier":-1}`, "out_of_range", "price_multiplier", "got -1"},
		{"PUT", ep, `{"price_multiplier":1000.5}`, "out_of_range", "price_multiplier", "got 1000.5"},
		{"POST", "/api/endpoints", `{"name":"b","base_url":"https://b.example","protocol":"anthropic","price_multiplier":0.0009}`,
			"out_of_range", "price_multiplier", "got 0.0009"},
		{"POST", "/api/endpoints", `{"name":"b","base_url":"https://b.example","protocol":"anthropic","sort_order":` + huge + `}`,
			"out_of_range", "sort_order", "got " + huge},
		{"POST", "/api/import", `{"version":1,"endpoints":[{"name":"b","base_url":"https://b.example","protocol":"anthropic","sort_order":1000001}]}`,
			"out_of_range", "endpoints[0].sort_order", "endpoint 1 (b): sort_order must be from 0 to 1000000, got 1000001"},
		{"POST", "/api/import", `{"version":1,"settings":` + strings.Replace(string(defaults), `"idle_timeout_ms":90000`, `"idle_timeout_ms":`+huge, 1) + `,"endpoints":[]}`,
			"invalid_setting", "idle_timeout_ms", "got " + huge},
	}
	endpointsBefore := h.do("GET", "/api/endpoints", "")
	settingsBefore := h.do("GET", "/api/settings", "")
	for _, tc := range bad {
		r := h.do(tc.method, tc.path, tc.body)
		got := r.apiErr(t)
		if r.status != 422 || got.Code != tc.code || got.Field != tc.field || !strings.Contains(got.Message, tc.msg) {
			t.Errorf("%s %s %s: %d %s\nwant 422 %s at %s saying %q", tc.method, tc.path, tc.body, r.status, r.body, tc.code, tc.field, tc.msg)
		}
	}
	if now := h.do("GET", "/api/endpoints", ""); string(now.body) != string(endpointsBefore.body) {
		t.Errorf("refused calls changed the endpoints:\nbefore %s\nafter  %s", endpointsBefore.body, now.body)
	}
	if now := h.do("GET", "/api/settings", ""); string(now.body) != string(settingsBefore.body) {
		t.Errorf("refused calls changed the settings:\nbefore %s\nafter  %s", settingsBefore.body, now.body)
	}

	// The ends of each range are taken, and an endpoint at the top of the
	// order range leaves later creates working.
	ends := []struct{ method, path, body string }{
		{"PUT", "/api/settings", `{"first_byte_timeout_ms":3600000,"idle_timeout_ms":1,"max_body_bytes":1024,"log_retention_rows":10000000,"log_retention_days":3650}`},
		{"PUT", "/api/settings", `{"max_body_bytes":1073741824,"log_retention_rows":100,"log_retention_days":1}`},
		{"PUT", "/api/settings", `{"breaker":{"claude":{"timeout_ms":604800000,"failure_threshold":10000,"min_requests":1}}}`},
		{"PUT", ep, `{"sort_order":1000000,"fast":true,"fast_sort_order":1000000,"breaker_overrides":{"quota_timeout_ms":1,"success_threshold":10000}}`},
		{"PUT", ep, `{"price_multiplier":0.001}`},
		{"PUT", ep, `{"price_multiplier":1000}`},
	}
	for _, tc := range ends {
		if r := h.do(tc.method, tc.path, tc.body); r.status != 200 {
			t.Errorf("%s %s %s: %d %s, want 200", tc.method, tc.path, tc.body, r.status, r.body)
		}
	}
	for _, name := range []string{"b", "c"} {
		h.mustCreate(`{"name":"` + name + `","base_url":"https://b.example","protocol":"anthropic","fast":true}`)
	}
}
