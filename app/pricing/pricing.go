// Package pricing is the price table (docs/BEHAVIOUR.md#cost): the rows
// ccmesh ships (prices.json), the user's rows in front of them, the lookup
// of a model's row and the cost of an attempt's usage. It knows nothing of
// the app: the app keeps the user's rows in its settings document and
// serves them on /api/prices.
package pricing

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/ccmesh/ccmesh/proxy"
)

// The price table (docs/BEHAVIOUR.md#cost): rows that price a model, in US
// dollars per million tokens of each kind. ccmesh ships rows read from the
// providers' own pricing pages (prices.json, each row naming its page and
// the day it was read); the user's rows, kept in the settings document,
// come first.

// PriceRow prices the models its pattern matches, in USD per million
// tokens. CacheRead and CacheWrite may be left out: a row without a cache
// read price charges cache reads at the input price, and one without a
// cache write price charges cache writes at the input price too.
type PriceRow struct {
	// Model is a model name or a pattern with '*' (any run of characters),
	// the pattern language of an endpoint's models.
	Model      string   `json:"model"`
	Input      float64  `json:"input"`
	Output     float64  `json:"output"` // reasoning tokens are output tokens
	CacheRead  *float64 `json:"cache_read,omitempty"`
	CacheWrite *float64 `json:"cache_write,omitempty"`
	// Source is the page the price was read from; Date (YYYY-MM-DD) the day
	// it was read. Every shipped row has both; the user's may leave them out.
	Source string `json:"source,omitempty"`
	Date   string `json:"date,omitempty"`
}

// cacheReadPrice is the price of a cache read: the row's, or its input price.
func (r PriceRow) cacheReadPrice() float64 {
	if r.CacheRead != nil {
		return *r.CacheRead
	}
	return r.Input
}

// cacheWritePrice is the price of a cache write: the row's, or its input price.
func (r PriceRow) cacheWritePrice() float64 {
	if r.CacheWrite != nil {
		return *r.CacheWrite
	}
	return r.Input
}

// PriceRowReply is a row as GET /api/prices shows it.
type PriceRowReply struct {
	PriceRow
	Shipped bool `json:"shipped"` // in ccmesh's table; false for the user's rows
}

// PricesReply is GET and PUT /api/prices: the user's rows, then the shipped ones.
type PricesReply struct {
	Rows []PriceRowReply `json:"rows"`
}

// Doc is the shape of prices.json and of the body of PUT /api/prices: a
// list of rows, all of them.
type Doc struct {
	Rows []PriceRow `json:"rows"`
}

//go:embed prices.json
var shippedJSON []byte

// Shipped is the shipped price table, decoded once; callers must not
// change the rows. The file is part of
// the binary and TestShippedPrices checks every row, so a file that does
// not decode is a build that must not run.
var Shipped = sync.OnceValue(func() []PriceRow {
	var doc Doc
	dec := json.NewDecoder(bytes.NewReader(shippedJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		panic(fmt.Sprintf("app/pricing/prices.json: %v", err))
	}
	return doc.Rows
})

// shippedSet is the shipped table, compiled once and shared by every Prices.
var shippedSet = sync.OnceValue(func() priceSet { return newPriceSet(Shipped()) })

// Prices finds the price of a model: in the user's rows first, then in the
// shipped rows. Within each set the most specific pattern wins: an exact
// name, then fewer '*', then more literal characters, then the pattern
// that sorts first (the order model_map keys are tried in). A Prices is
// immutable; the app's State holds the current one.
type Prices struct {
	user, shipped priceSet
}

// NewPrices is the price table with the user's rows user in front of the
// shipped ones.
func NewPrices(user []PriceRow) *Prices {
	return &Prices{user: newPriceSet(user), shipped: shippedSet()}
}

// Lookup returns the row that prices model, and whether one does.
func (p *Prices) Lookup(model string) (PriceRow, bool) {
	if p == nil {
		return PriceRow{}, false
	}
	if r, ok := p.user.lookup(model); ok {
		return r, true
	}
	return p.shipped.lookup(model)
}

// Cost is what usage u of model costs in USD: (input × input price +
// output × output price + cache_read × cache read price + cache_write ×
// cache write price) / 1,000,000 × multiplier, with the row's own cache
// prices or, where it has none, its input price. Reasoning tokens are
// part of output and are not priced again. ok is false when no row prices
// the model: the cost is unknown, which is not $0. A multiplier that is
// not a positive finite number counts as 1 (an endpoint's is > 0 by
// validation).
func (p *Prices) Cost(model string, u proxy.Usage, multiplier float64) (usd float64, ok bool) {
	r, ok := p.Lookup(model)
	if !ok {
		return 0, false
	}
	if !(multiplier > 0) || math.IsInf(multiplier, 0) {
		multiplier = 1
	}
	sum := float64(u.Input)*r.Input + float64(u.Output)*r.Output +
		float64(u.CacheRead)*r.cacheReadPrice() + float64(u.CacheWrite)*r.cacheWritePrice()
	return sum / 1e6 * multiplier, true
}

// priceSet is one set of rows, compiled: exact names in a map, patterns
// with '*' most specific first.
type priceSet struct {
	exact map[string]PriceRow
	wild  []pricePattern
}

type pricePattern struct {
	raw   string
	parts []string // raw split on '*'
	row   PriceRow
}

func (p pricePattern) wildcards() int { return len(p.parts) - 1 }

func (p pricePattern) literalLen() int { return len(p.raw) - p.wildcards() }

// match is the model pattern rule of docs/BEHAVIOUR.md#endpoints: '*'
// matches any run of characters, everything else itself, case-sensitively.
func (p pricePattern) match(s string) bool {
	if len(p.parts) == 1 {
		return s == p.raw
	}
	first, last := p.parts[0], p.parts[len(p.parts)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	s = s[len(first) : len(s)-len(last)]
	for _, mid := range p.parts[1 : len(p.parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return true
}

func newPriceSet(rows []PriceRow) priceSet {
	s := priceSet{exact: make(map[string]PriceRow)}
	for _, r := range rows {
		if !strings.Contains(r.Model, "*") {
			if _, dup := s.exact[r.Model]; !dup { // the first row of a name prices it
				s.exact[r.Model] = r
			}
			continue
		}
		s.wild = append(s.wild, pricePattern{raw: r.Model, parts: strings.Split(r.Model, "*"), row: r})
	}
	slices.SortStableFunc(s.wild, func(a, b pricePattern) int {
		return cmp.Or(
			cmp.Compare(a.wildcards(), b.wildcards()),
			-cmp.Compare(a.literalLen(), b.literalLen()),
			strings.Compare(a.raw, b.raw))
	})
	return s
}

func (s priceSet) lookup(model string) (PriceRow, bool) {
	if r, ok := s.exact[model]; ok {
		return r, true
	}
	for _, p := range s.wild {
		if p.match(model) {
			return p.row, true
		}
	}
	return PriceRow{}, false
}
