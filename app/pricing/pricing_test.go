package pricing

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
	var doc Doc
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
	if err := Validate("rows", doc.Rows); err != nil {
		t.Errorf("shipped rows as user rows: %v", err)
	}
	if got := Shipped(); len(got) != len(doc.Rows) {
		t.Errorf("Shipped() has %d rows, the file %d", len(got), len(doc.Rows))
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
