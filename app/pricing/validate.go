package pricing

import (
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/ccmesh/ccmesh/store"
)

// Bounds of the user's price rows (docs/BEHAVIOUR.md#cost).
const (
	MaxRows           = 500
	maxPricePattern   = 256
	maxPriceSourceLen = 2048
)

// CodeInvalid is the code of a refused price row (422).
const CodeInvalid = "invalid_price"

// Invalid is a refused row: the error code the admin API answers with,
// the field at fault (e.g. rows[2].model) and why, for the user.
type Invalid struct {
	Code, Field, Message string
}

func (e *Invalid) Error() string { return e.Message }

func rejected(code, field, format string, args ...any) *Invalid {
	return &Invalid{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Validate checks the user's price rows found at field: at most
// MaxRows; each with a model pattern (the rule of an endpoint's
// models, at most maxPricePattern bytes, no surrounding spaces, each
// pattern once), prices that are finite and ≥ 0, a source that is an
// http(s) URL if given and a date that is YYYY-MM-DD if given.
func Validate(field string, rows []PriceRow) *Invalid {
	if len(rows) > MaxRows {
		return rejected(CodeInvalid, field, "at most %d price rows are kept, got %d", MaxRows, len(rows))
	}
	first := make(map[string]int, len(rows))
	for i, r := range rows {
		at := fmt.Sprintf("%s[%d]", field, i)
		n := i + 1
		switch {
		case strings.TrimSpace(r.Model) == "":
			return rejected(store.CodeRequired, at+".model",
				"price row %d: model is required, a model name or a pattern with * (e.g. claude-sonnet-4-5*)", n)
		case strings.TrimSpace(r.Model) != r.Model:
			return rejected(CodeInvalid, at+".model", "price row %d: model %q has spaces around it; model names have none", n, r.Model)
		case len(r.Model) > maxPricePattern:
			return rejected(CodeInvalid, at+".model", "price row %d: model is longer than %d characters", n, maxPricePattern)
		}
		if why := store.CheckModelPattern(r.Model); why != "" {
			return rejected(CodeInvalid, at+".model", "price row %d: model pattern %q %s", n, r.Model, why)
		}
		if j, dup := first[r.Model]; dup {
			return rejected(CodeInvalid, at+".model",
				"price row %d: model %q is already priced by row %d; give each pattern once", n, r.Model, j+1)
		}
		first[r.Model] = i
		for _, p := range []struct {
			name string
			v    *float64
		}{{"input", &r.Input}, {"output", &r.Output}, {"cache_read", r.CacheRead}, {"cache_write", r.CacheWrite}} {
			if p.v != nil && (math.IsNaN(*p.v) || math.IsInf(*p.v, 0) || *p.v < 0) {
				return rejected(CodeInvalid, at+"."+p.name,
					"price row %d (%s): %s must be a number ≥ 0, in USD per million tokens, got %v", n, r.Model, p.name, *p.v)
			}
		}
		if r.Source != "" {
			u, err := url.Parse(r.Source)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(r.Source) > maxPriceSourceLen {
				return rejected(CodeInvalid, at+".source",
					"price row %d (%s): source must be an http:// or https:// address of at most %d characters", n, r.Model, maxPriceSourceLen)
			}
		}
		if r.Date != "" {
			if _, err := time.Parse(time.DateOnly, r.Date); err != nil {
				return rejected(CodeInvalid, at+".date", "price row %d (%s): date must be YYYY-MM-DD, not %q", n, r.Model, r.Date)
			}
		}
	}
	return nil
}
