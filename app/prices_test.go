package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

func f64(v float64) *float64 { return &v }

// Every shipped row names the provider's page it was read from (https), the
// day it was read, prices that are numbers ≥ 0, and a pattern in the
// language of an endpoint's models; no pattern is there twice, and the file
// has no key the rows do not know (docs/BEHAVIOUR.md#cost).
func TestShippedPrices(t *testing.T) {
	var doc pricesInput
	dec := json.NewDecoder(bytes.NewReader(shippedJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("prices.json: %v", err)
	}
	if len(doc.Rows) == 0 {
		t.Fatal("prices.json has no rows")
	}
	seen := map[string]bool{}
	for i, r := range doc.Rows {
		at := fmt.Sprintf("row %d (%s)", i+1, r.Model)
		if why := store.CheckModelPattern(r.Model); why != "" || strings.TrimSpace(r.Model) != r.Model {
			t.Errorf("%s: pattern %q %s", at, r.Model, why)
		}
		if seen[r.Model] {
			t.Errorf("%s: pattern given twice", at)
		}
		seen[r.Model] = true
		u, err := url.Parse(r.Source)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			t.Errorf("%s: source %q is not an https address", at, r.Source)
		}
		if d, err := time.Parse(time.DateOnly, r.Date); err != nil || d.Year() < 2025 {
			t.Errorf("%s: date %q is not a YYYY-MM-DD day", at, r.Date)
		}
		for name, v := range map[string]*float64{"input": &r.Input, "output": &r.Output, "cache_read": r.CacheRead, "cache_write": r.CacheWrite} {
			if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0) {
				t.Errorf("%s: %s = %v", at, name, *v)
			}
		}
		// Each exact name is priced by its own row.
		if !strings.Contains(r.Model, "*") {
			if got, ok := NewPrices(nil).Lookup(r.Model); !ok || got.Model != r.Model {
				t.Errorf("%s: looked up as %q, %v", at, got.Model, ok)
			}
		}
	}
	// As the user's rows, the shipped ones would pass the admin API's checks too.
	if err := validPriceRows("rows", doc.Rows); err != nil {
		t.Errorf("shipped rows as user rows: %v", err)
	}
	if got := shippedRows(); len(got) != len(doc.Rows) {
		t.Errorf("shippedRows() has %d rows, the file %d", len(got), len(doc.Rows))
	}
}

// Within a set of rows the most specific pattern wins, whatever the order
// the rows are given in: an exact name, then fewer '*', then more literal
// characters, then the pattern that sorts first.
func TestPriceMatchingOrder(t *testing.T) {
	rows := []PriceRow{
		{Model: "claude-*", Input: 1},
		{Model: "claude-sonnet-*", Input: 2},
		{Model: "claude-sonnet-4-5", Input: 3},
		{Model: "*sonnet-4-5-2025*", Input: 4}, // two '*': tried after every one-'*' pattern
		{Model: "a*c", Input: 5},
		{Model: "*bc", Input: 6},
		{Model: "x*y*z", Input: 7},
	}
	tests := []struct {
		model string
		want  string // "" for no price
	}{
		// An exact name first.
		{"claude-sonnet-4-5", "claude-sonnet-4-5"},
		// More literal text.
		{"claude-sonnet-4-5-20250929", "claude-sonnet-*"},
		{"claude-sonnet-4-5-20250929-thinking", "claude-sonnet-*"},
		{"claude-opus-4-5", "claude-*"},
		// Two '*' when no pattern with one matches.
		{"my-sonnet-4-5-20250929", "*sonnet-4-5-2025*"},
		{"a-claude-sonnet-4-5-2025", "*sonnet-4-5-2025*"},
		// A tie goes by sort order ('*' sorts before letters).
		{"abc", "*bc"},
		// Middle parts match in order, and may not overlap the ends.
		{"xayz", "x*y*z"},
		{"x-y-z-y-z", "x*y*z"},
		{"xyz", "x*y*z"},
		{"xzy", ""},
		{"xz", ""},
		// Case-sensitive, whole names.
		{"CLAUDE-SONNET-4-5", ""},
		{"claude", ""},
		{"", ""},
		{"gpt-5", ""},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		shuffled := append([]PriceRow(nil), rows...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		set := newPriceSet(shuffled)
		for _, tc := range tests {
			got, ok := set.lookup(tc.model)
			if ok != (tc.want != "") || got.Model != tc.want {
				t.Errorf("round %d: %q priced by %q (%v), want %q", round, tc.model, got.Model, ok, tc.want)
			}
		}
	}
	// Fewer '*' wins before more literal text: a catch-all "*" is tried
	// before any pattern with two, and matches the empty name too.
	set := newPriceSet(append(rows, PriceRow{Model: "*"}))
	for model, want := range map[string]string{"xayz": "*", "my-sonnet-4-5-20250929": "*", "": "*",
		"claude-x": "claude-*", "abc": "*bc", "claude-sonnet-4-5": "claude-sonnet-4-5"} {
		if got, _ := set.lookup(model); got.Model != want {
			t.Errorf("with *: %q priced by %q, want %q", model, got.Model, want)
		}
	}
}

// The user's rows are tried before the shipped ones, whatever their
// patterns: a user's "*" prices even a model the shipped table names.
func TestUserPricesWin(t *testing.T) {
	shipped, ok := NewPrices(nil).Lookup("claude-sonnet-4-5-20250929")
	if !ok || shipped.Model != "claude-sonnet-4-5*" {
		t.Fatalf("shipped row for claude-sonnet-4-5-20250929 = %+v, %v", shipped, ok)
	}
	p := NewPrices([]PriceRow{{Model: "claude-sonnet-4-5*", Input: 1, Output: 2}})
	if got, _ := p.Lookup("claude-sonnet-4-5-20250929"); got.Input != 1 || got.Source != "" {
		t.Errorf("user row did not win: %+v", got)
	}
	if got, _ := p.Lookup("claude-haiku-4-5"); got.Model != "claude-haiku-4-5*" {
		t.Errorf("a model the user does not price falls back to the shipped table, got %+v", got)
	}
	p = NewPrices([]PriceRow{{Model: "*", Input: 9, Output: 9}})
	for _, m := range []string{"gpt-5", "claude-opus-4-5", "made-up"} {
		if got, _ := p.Lookup(m); got.Model != "*" {
			t.Errorf("%s: priced by %q, want the user's *", m, got.Model)
		}
	}
}

// Cost multiplies each kind of token by its price, per million tokens, and
// the sum by the endpoint's multiplier; a row without cache prices charges
// cache reads and writes at its input price; reasoning is part of output.
func TestCostArithmetic(t *testing.T) {
	p := NewPrices([]PriceRow{
		{Model: "plain", Input: 2, Output: 8},
		{Model: "cached", Input: 2, Output: 8, CacheRead: f64(0.2), CacheWrite: f64(2.5)},
	})
	tests := []struct {
		name       string
		model      string
		u          proxy.Usage
		multiplier float64
		want       float64
	}{
		// 1M × $3 + 200k × $15 + 2M × $0.30 + 100k × $3.75 = 3 + 3 + 0.60 + 0.375
		{"sonnet 4.5", "claude-sonnet-4-5-20250929",
			proxy.Usage{Input: 1_000_000, Output: 200_000, CacheRead: 2_000_000, CacheWrite: 100_000}, 1, 6.975},
		{"sonnet 4.5 at half price", "claude-sonnet-4-5",
			proxy.Usage{Input: 1_000_000, Output: 200_000, CacheRead: 2_000_000, CacheWrite: 100_000}, 0.5, 3.4875},
		{"relay at 1.5×", "claude-opus-4-6", proxy.Usage{Input: 10_000, Output: 2_000}, 1.5, 0.15},
		// 12,345 × $0.75 + 6,789 × $4.50 + 100,000 × $0.075, no cache writes
		{"gpt-5.4-mini", "gpt-5.4-mini", proxy.Usage{Input: 12_345, Output: 6_789, CacheRead: 100_000}, 1, 0.04730925},
		// cache reads and writes at the input price: 0.5M × 2 + 0.25M × 2 + 0.25M × 2 + 125k × 8
		{"no cache prices", "plain", proxy.Usage{Input: 500_000, CacheRead: 250_000, CacheWrite: 250_000, Output: 125_000}, 1, 3},
		{"own cache prices", "cached", proxy.Usage{Input: 500_000, CacheRead: 250_000, CacheWrite: 250_000, Output: 125_000}, 1, 2.675},
		// output 1,000 of which 800 reasoning: 1,000 × $8, not 1,800
		{"reasoning in output", "plain", proxy.Usage{Output: 1_000, Reasoning: 800}, 1, 0.008},
		{"estimated usage costs the same", "plain", proxy.Usage{Input: 1_000_000, Estimated: true}, 1, 2},
		{"nothing used", "plain", proxy.Usage{}, 1, 0},
		{"a free model is $0, priced", "glm-4.7-flash", proxy.Usage{Input: 1_000_000, Output: 1_000_000}, 1, 0},
		{"multiplier 0 counts as 1", "plain", proxy.Usage{Input: 1_000_000}, 0, 2},
		{"negative multiplier counts as 1", "plain", proxy.Usage{Input: 1_000_000}, -3, 2},
		{"NaN multiplier counts as 1", "plain", proxy.Usage{Input: 1_000_000}, math.NaN(), 2},
		{"infinite multiplier counts as 1", "plain", proxy.Usage{Input: 1_000_000}, math.Inf(1), 2},
	}
	for _, tc := range tests {
		got, ok := p.Cost(tc.model, tc.u, tc.multiplier)
		if !ok || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: Cost = %v, %v; want %v", tc.name, got, ok, tc.want)
		}
		if cents := math.Round(got * 100); cents != math.Round(tc.want*100) {
			t.Errorf("%s: %v¢, want %v¢", tc.name, cents, math.Round(tc.want*100))
		}
	}
}

// DeepSeek and Qwen ship at their list prices: DeepSeek's peak rate (its
// off-peak half is not applied) and Qwen's first tier of international
// pay-as-you-go (docs/BEHAVIOUR.md#cost).
func TestShippedDeepSeekQwen(t *testing.T) {
	tests := []struct {
		model                    string
		input, output, cacheRead float64
	}{
		{"deepseek-flash", 0.3, 1.2, 0.006},
		{"deepseek-v4-flash", 0.3, 1.2, 0.006},
		{"deepseek-v4-pro", 1.32, 3.96, 0.044},
		{"qwen3-max", 1.2, 6, 0.24},
		{"qwen3-coder-plus", 1, 5, 0.2},
		{"qwen3-coder-flash", 0.3, 1.5, 0.06},
		{"qwen-flash", 0.05, 0.4, 0.01},
	}
	for _, tc := range tests {
		r, ok := NewPrices(nil).Lookup(tc.model)
		if !ok || r.Model != tc.model {
			t.Errorf("%s: looked up %q, %v; want its own shipped row", tc.model, r.Model, ok)
			continue
		}
		if r.Input != tc.input || r.Output != tc.output || r.CacheRead == nil || *r.CacheRead != tc.cacheRead {
			t.Errorf("%s: %+v; want %v / %v / %v", tc.model, r, tc.input, tc.output, tc.cacheRead)
		}
		if !strings.HasPrefix(r.Source, "https://") || r.Date == "" {
			t.Errorf("%s: source %q date %q", tc.model, r.Source, r.Date)
		}
	}
}

// A model no row prices has no cost — not a cost of $0.
func TestNoPrice(t *testing.T) {
	u := proxy.Usage{Input: 1000, Output: 1000}
	for _, model := range []string{"made-up-model", "", "gpt-5.4-pro", "qwen-plus", "Claude-Sonnet-4-5"} {
		if usd, ok := NewPrices(nil).Cost(model, u, 1); ok || usd != 0 {
			t.Errorf("%q: Cost = %v, %v; want no price", model, usd, ok)
		}
	}
	var none *Prices
	if usd, ok := none.Cost("claude-sonnet-4-5", u, 1); ok || usd != 0 {
		t.Errorf("nil Prices: Cost = %v, %v; want no price", usd, ok)
	}
}

// GET /api/prices lists the user's rows, then the shipped ones; PUT
// replaces the user's rows, which then price requests (docs/BEHAVIOUR.md#cost).
func TestPricesAPI(t *testing.T) {
	h := newHarness(t)
	var got PricesReply
	h.do("GET", "/api/prices", "").decode(t, &got)
	if len(got.Rows) != len(shippedRows()) {
		t.Fatalf("GET /api/prices on a new database: %d rows, want the %d shipped", len(got.Rows), len(shippedRows()))
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
	if len(got.Rows) != 2+len(shippedRows()) || got.Rows[0].Model != "claude-sonnet-4-5*" || got.Rows[0].Shipped ||
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
	if len(after.Rows) != len(shippedRows()) || !after.Rows[0].Shipped {
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
	many := make([]string, maxPriceRows+1)
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
	if r := h.do("PUT", "/api/prices", `{"rows":[`+strings.Join(many[:maxPriceRows], ",")+`]}`); r.status != 200 {
		t.Errorf("%d rows: %d %s", maxPriceRows, r.status, r.body)
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
	var doc exportDoc
	h.do("GET", "/api/export", "").decode(t, &doc)
	if len(doc.Endpoints) != 2 || *doc.Endpoints[0].PriceMultiplier != 1.2 || *doc.Endpoints[1].PriceMultiplier != 0.25 {
		t.Errorf("export endpoints: %+v", doc.Endpoints)
	}
}
