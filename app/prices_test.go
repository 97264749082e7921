package app

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/app/backup"
	"github.com/ccmesh/ccmesh/app/pricing"
	"github.com/ccmesh/ccmesh/proxy"
)

// GET /api/prices lists the user's rows, then the shipped ones; PUT
// replaces the user's rows, which then price requests (docs/BEHAVIOUR.md#cost).
func TestPricesAPI(t *testing.T) {
	h := newHarness(t)
	var got PricesReply
	h.do("GET", "/api/prices", "").decode(t, &got)
	if len(got.Rows) != len(pricing.Shipped()) {
		t.Fatalf("GET /api/prices on a new database: %d rows, want the %d shipped", len(got.Rows), len(pricing.Shipped()))
	}
	for _, r := range got.Rows {
		if !r.Shipped || r.Source == "" || r.Date == "" {
			t.Errorf("shipped row %+v", r)
		}
	}

	body := `{"rows":[{"model":"claude-sonnet-4-5*","input":1.5,"output":7.5,"cache_read":0.15},
		{"model":"my-model","input":0,"output":1,"source":"https://relay.example/pricing","date":"2026-11-30"}]}`
	r := h.do("PUT", "/api/prices", body)
	if r.status != 200 {
		t.Fatalf("PUT /api/prices: %d %s", r.status, r.body)
	}
	got = PricesReply{} // decoded afresh: onto old rows, encoding/json would keep their fields
	r.decode(t, &got)
	if len(got.Rows) != 2+len(pricing.Shipped()) || got.Rows[0].Model != "claude-sonnet-4-5*" || got.Rows[0].Shipped ||
		got.Rows[1].Model != "my-model" || got.Rows[1].Source != "https://relay.example/pricing" || !got.Rows[2].Shipped {
		t.Errorf("rows after PUT: %+v", got.Rows[:3])
	}
	if got.Rows[0].CacheWrite != nil || *got.Rows[0].CacheRead != 0.15 {
		t.Errorf("first row's cache prices: %+v", got.Rows[0])
	}
	if again := h.do("GET", "/api/prices", ""); !bytes.Equal(again.body, r.body) {
		t.Errorf("GET after PUT:\n%s\nwant the PUT's reply\n%s", again.body, r.body)
	}
	// The snapshot prices with them at once: 1M input × $1.50 + 1M cache writes at the input price.
	if usd, ok := h.app.state.Load().Prices.Cost("claude-sonnet-4-5-20250929", proxy.Usage{Input: 1_000_000, CacheWrite: 1_000_000}, 1); !ok || usd != 3 {
		t.Errorf("cost with the user's row = %v, %v; want 3", usd, ok)
	}
	// They are part of the settings document: kept across a restart and by
	// a settings change that leaves them out.
	if r := h.do("PUT", "/api/settings", `{"language":"zh-CN"}`); r.status != 200 {
		t.Fatalf("PUT /api/settings: %d %s", r.status, r.body)
	}
	h = h.restart()
	var after PricesReply
	h.do("GET", "/api/prices", "").decode(t, &after)
	if len(after.Rows) != len(got.Rows) || after.Rows[0].Model != "claude-sonnet-4-5*" || after.Rows[1].Model != "my-model" {
		t.Errorf("rows after a settings change and a restart: %+v", after.Rows[:2])
	}
	// An empty list removes them.
	if r := h.do("PUT", "/api/prices", `{"rows":[]}`); r.status != 200 {
		t.Fatalf("PUT empty: %d %s", r.status, r.body)
	}
	h.do("GET", "/api/prices", "").decode(t, &after)
	if len(after.Rows) != len(pricing.Shipped()) || !after.Rows[0].Shipped {
		t.Errorf("after PUT []: %d rows, first %+v", len(after.Rows), after.Rows[0])
	}
}

// A refused PUT /api/prices names the row and field at fault, says why, and
// changes nothing.
func TestPricesValidation(t *testing.T) {
	h := newHarness(t)
	if r := h.do("PUT", "/api/prices", `{"rows":[{"model":"kept","input":1,"output":2}]}`); r.status != 200 {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	before := h.do("GET", "/api/prices", "")
	row := func(fields string) string { return `{"rows":[{"model":"a","input":1,"output":2},{` + fields + `}]}` }
	many := make([]string, pricing.MaxRows+1)
	for i := range many {
		many[i] = fmt.Sprintf(`{"model":"m%d","input":1,"output":1}`, i)
	}
	tests := []struct {
		body         string
		status       int
		code, field  string
		wantInMesage string
	}{
		{row(`"model":"","input":1,"output":2`), 422, "required", "rows[1].model", "model is required"},
		{row(`"input":1,"output":2`), 422, "required", "rows[1].model", "price row 2"},
		{row(`"model":" gpt-5","input":1,"output":2`), 422, "invalid_price", "rows[1].model", "spaces around it"},
		{row(`"model":"gpt-[5]","input":1,"output":2`), 422, "invalid_price", "rows[1].model", "only * as a wildcard"},
		{row(`"model":"` + strings.Repeat("m", 257) + `","input":1,"output":2`), 422, "invalid_price", "rows[1].model", "longer than 256"},
		{row(`"model":"a","input":3,"output":4`), 422, "invalid_price", "rows[1].model", "already priced by row 1"},
		{row(`"model":"b","input":-1,"output":2`), 422, "invalid_price", "rows[1].input", "input must be a number ≥ 0"},
		{row(`"model":"b","input":1,"output":-0.5`), 422, "invalid_price", "rows[1].output", "got -0.5"},
		{row(`"model":"b","input":1,"output":2,"cache_read":-1`), 422, "invalid_price", "rows[1].cache_read", "cache_read must be"},
		{row(`"model":"b","input":1,"output":2,"cache_write":-2`), 422, "invalid_price", "rows[1].cache_write", "cache_write must be"},
		{row(`"model":"b","input":1,"output":2,"source":"javascript:alert(1)"`), 422, "invalid_price", "rows[1].source", "https://"},
		{row(`"model":"b","input":1,"output":2,"source":"relay.example"`), 422, "invalid_price", "rows[1].source", "https://"},
		{row(`"model":"b","input":1,"output":2,"date":"yesterday"`), 422, "invalid_price", "rows[1].date", "YYYY-MM-DD"},
		{`{"rows":[` + strings.Join(many, ",") + `]}`, 422, "invalid_price", "rows", "at most 500 price rows"},
		{`{}`, 422, "required", "rows", "rows is required"},
		{`{"rows":null}`, 422, "required", "rows", "rows is required"},
		{row(`"model":"b","input":"1","output":2`), 400, "bad_json", "rows.input", "must be a number"},
		{row(`"model":"b","input":1e999,"output":2`), 400, "bad_json", "rows.input", "must be a number"},
		{row(`"model":"b","inptu":1,"output":2`), 400, "unknown_field", "rows[1].inptu", `did you mean "input"`},
		{row(`"model":"b","input":1,"output":2,"shipped":true`), 400, "unknown_field", "rows[1].shipped", "unknown field"},
		{`[]`, 400, "bad_json", "", "must be an object"},
	}
	for _, tc := range tests {
		r := h.do("PUT", "/api/prices", tc.body)
		e := r.apiErr(t)
		if r.status != tc.status || e.Code != tc.code || e.Field != tc.field || !strings.Contains(e.Message, tc.wantInMesage) {
			body := tc.body
			if len(body) > 200 {
				body = body[:200] + "…"
			}
			t.Errorf("%s:\n got %d %s at %q: %s\nwant %d %s at %q saying %q", body, r.status, e.Code, e.Field, e.Message,
				tc.status, tc.code, tc.field, tc.wantInMesage)
		}
	}
	if now := h.do("GET", "/api/prices", ""); !bytes.Equal(now.body, before.body) {
		t.Error("refused PUTs changed the prices")
	}
	// Exactly the limit is taken.
	if r := h.do("PUT", "/api/prices", `{"rows":[`+strings.Join(many[:pricing.MaxRows], ",")+`]}`); r.status != 200 {
		t.Errorf("%d rows: %d %s", pricing.MaxRows, r.status, r.body)
	}
}

// PUT /api/settings checks prices it is given as PUT /api/prices does, and
// replaces the list whole: a new row does not inherit what the old row in
// its place had, and the snapshot the old rows belong to is left alone.
func TestSettingsPricesReplacedWhole(t *testing.T) {
	h := newHarness(t)
	if r := h.do("PUT", "/api/prices", `{"rows":[{"model":"x","input":1,"output":2,"cache_read":0.5,"source":"https://a.example"}]}`); r.status != 200 {
		t.Fatalf("PUT prices: %d %s", r.status, r.body)
	}
	old := h.app.state.Load()
	if r := h.do("PUT", "/api/settings", `{"prices":[{"model":"y","input":3,"output":4,"cache_read":0.25}]}`); r.status != 200 {
		t.Fatalf("PUT settings: %d %s", r.status, r.body)
	}
	if r := h.do("PUT", "/api/settings", `{"prices":[{"model":"z","input":3,"output":4}]}`); r.status != 200 {
		t.Fatalf("PUT settings: %d %s", r.status, r.body)
	}
	var s Settings
	h.do("GET", "/api/settings", "").decode(t, &s)
	if len(s.Prices) != 1 || s.Prices[0].Model != "z" || s.Prices[0].CacheRead != nil || s.Prices[0].Source != "" {
		t.Errorf("prices after PUT /api/settings: %+v", s.Prices)
	}
	if r := old.Settings.Prices[0]; r.Model != "x" || *r.CacheRead != 0.5 {
		t.Errorf("the old snapshot's row changed: %+v (cache_read %v)", r, *r.CacheRead)
	}
	r := h.do("PUT", "/api/settings", `{"prices":[{"model":"w","input":-1,"output":4}]}`)
	if e := r.apiErr(t); r.status != 422 || e.Code != "invalid_price" || e.Field != "prices[0].input" {
		t.Errorf("negative price in settings: %d %+v", r.status, e)
	}
	// null leaves them as they are.
	if r := h.do("PUT", "/api/settings", `{"prices":null,"language":"en"}`); r.status != 200 {
		t.Fatalf("PUT settings: %d %s", r.status, r.body)
	}
	h.do("GET", "/api/settings", "").decode(t, &s)
	if len(s.Prices) != 1 || s.Prices[0].Model != "z" {
		t.Errorf("prices after \"prices\":null: %+v", s.Prices)
	}
	// An export carries them and an import puts them back.
	var doc map[string]any
	h.do("GET", "/api/export", "").decode(t, &doc)
	if p := doc["settings"].(map[string]any)["prices"].([]any); len(p) != 1 {
		t.Errorf("export settings.prices = %v", p)
	}
}

// An endpoint's price_multiplier defaults to 1, is set and changed through
// the admin API and travels in an export (docs/BEHAVIOUR.md#endpoints).
func TestEndpointPriceMultiplierAPI(t *testing.T) {
	h := newHarness(t)
	a := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	b := h.mustCreate(`{"name":"b","base_url":"https://b.example","protocol":"anthropic","price_multiplier":0.25}`)
	if a.PriceMultiplier != 1 || b.PriceMultiplier != 0.25 {
		t.Errorf("price_multiplier a=%v b=%v, want 1 and 0.25", a.PriceMultiplier, b.PriceMultiplier)
	}
	r := h.do("PUT", fmt.Sprintf("/api/endpoints/%d", a.ID), `{"price_multiplier":1.2}`)
	var e EndpointReply
	r.decode(t, &e)
	if r.status != 200 || e.PriceMultiplier != 1.2 {
		t.Errorf("after PUT: %d %s", r.status, r.body)
	}
	if r := h.do("PUT", fmt.Sprintf("/api/endpoints/%d", a.ID), `{"price_multiplier":"2"}`); r.status != 400 || r.errCode() != "bad_json" {
		t.Errorf("string multiplier: %d %s", r.status, r.body)
	}
	var doc backup.Doc[Settings]
	h.do("GET", "/api/export", "").decode(t, &doc)
	if len(doc.Endpoints) != 2 || *doc.Endpoints[0].PriceMultiplier != 1.2 || *doc.Endpoints[1].PriceMultiplier != 0.25 {
		t.Errorf("export endpoints: %+v", doc.Endpoints)
	}
}
