// Package balance reads what an endpoint has left: a built-in template for
// a provider or relay, or a connector the user describes (method, URL,
// headers, body and JSON paths), sent only to the endpoint's own origin
// unless the user confirmed another host (docs/BEHAVIOUR.md#balance).
//
// It knows nothing of the store or the breakers: the app decodes the
// connector an endpoint was stored with, calls Read, and decides what a
// Reading means for routing (Exhausted, HasCredit).
package balance

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Unit is what a reading's numbers count.
type Unit string

const (
	USD     Unit = "USD"
	CNY     Unit = "CNY"
	Tokens  Unit = "tokens"
	Percent Unit = "percent"
)

// Units are the units a connector may name.
var Units = []Unit{USD, CNY, Tokens, Percent}

// Valid reports whether u is one of Units.
func (u Unit) Valid() bool { return slices.Contains(Units, u) }

// Connector is an endpoint's balance connector, as the admin API takes it
// and the store keeps it (a JSON object; {} is none). Template names a
// built-in one; without it the fields describe a custom one.
type Connector struct {
	Template string `json:"template,omitempty"`
	// Method, URL, Headers and Body of a custom connector; URL, header
	// values and body may hold {{base_url}} (the endpoint's base URL) and
	// {{origin}}, header values and body also {{key}}.
	Method  string            `json:"method,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	Paths   Paths             `json:"paths,omitzero"`
	// Unit is the unit when Paths.Unit is empty or finds nothing.
	Unit Unit `json:"unit,omitempty"`
	// Multiplier turns the answer's numbers into Unit (new-api's 500 000
	// quota units are $1: 0.000002); 0 is 1.
	Multiplier float64 `json:"multiplier,omitempty"`
	// OtherHost is the user's explicit yes to sending the key to URL's
	// host when it is not the endpoint's own.
	OtherHost bool `json:"other_host,omitempty"`
	// LowThreshold, when set, is the remaining amount (in the reading's
	// unit) under which the endpoint is low: crossing it notifies once.
	LowThreshold *float64 `json:"low_threshold,omitempty"`
}

// Paths are where a custom connector finds its values in the JSON answer:
// dotted keys with array indices, e.g. data.limits[0].percentage.
type Paths struct {
	Remaining string `json:"remaining,omitempty"`
	Used      string `json:"used,omitempty"`
	Total     string `json:"total,omitempty"`
	Unit      string `json:"unit,omitempty"`
	ResetAt   string `json:"reset_at,omitempty"`
}

// Empty reports a connector that reads nothing: the endpoint has none.
func (c Connector) Empty() bool {
	return c.Template == "" && c.URL == ""
}

// Reading is one read of a balance. A reading with an Error is unknown:
// its numbers are nil, never 0.
type Reading struct {
	Remaining *float64  `json:"remaining"`
	Used      *float64  `json:"used"`
	Total     *float64  `json:"total"`
	Unit      Unit      `json:"unit"`
	Unlimited bool      `json:"unlimited,omitempty"`
	ResetAt   time.Time `json:"reset_at,omitzero"`
	At        time.Time `json:"at"`
	// Template is the template that read it (a relay's names the shape
	// that answered); "" for a custom connector.
	Template string `json:"template,omitempty"`
	// Error says why the reading is unknown: the status, or the path that
	// was missing; Status is the HTTP status of a failed answer.
	Error  string `json:"error,omitempty"`
	Status int    `json:"status,omitempty"`
}

// Known reports a reading that says how much is left.
func (r Reading) Known() bool { return r.Error == "" && (r.Remaining != nil || r.Unlimited) }

// Exhausted reports a reading that shows nothing left: 0 (or less)
// remaining, and for a percentage a reset time still ahead — a plan at
// 100 % until it resets. An unknown or unlimited reading never is.
func (r Reading) Exhausted(now time.Time) bool {
	if !r.Known() || r.Unlimited || *r.Remaining > 0 {
		return false
	}
	if !r.ResetAt.IsZero() && !r.ResetAt.After(now) {
		return false // the reset it waited for has come
	}
	return r.Unit != Percent || !r.ResetAt.IsZero()
}

// HasCredit reports a reading that shows something left.
func (r Reading) HasCredit() bool {
	return r.Known() && (r.Unlimited || *r.Remaining > 0)
}

// Below reports a known reading under threshold t.
func (r Reading) Below(t *float64) bool {
	return t != nil && r.Known() && !r.Unlimited && *r.Remaining < *t
}

// complete fills what follows from what the answer gave: remaining from
// total and used, used from total and remaining; and rounds away the
// float noise of a multiplier.
func (r *Reading) complete() {
	switch {
	case r.Remaining == nil && r.Total != nil && r.Used != nil:
		r.Remaining = ptr(*r.Total - *r.Used)
	case r.Used == nil && r.Total != nil && r.Remaining != nil:
		r.Used = ptr(*r.Total - *r.Remaining)
	}
	for _, p := range []*float64{r.Remaining, r.Used, r.Total} {
		if p != nil {
			*p = math.Round(*p*1e6) / 1e6
		}
	}
}

func ptr(v float64) *float64 { return &v }

// failed is an unknown reading that says why.
func failed(now time.Time, status int, format string, args ...any) Reading {
	return Reading{At: now, Status: status, Error: fmt.Sprintf(format, args...)}
}

// Check validates c for an endpoint with base URL baseURL: a known
// template, or a custom connector with a URL, a method, a remaining or
// used-and-total path, a known unit, and — when its URL is on another
// host than the endpoint's — OtherHost set. It returns the JSON field at
// fault and why.
func (c Connector) Check(baseURL string) (field, msg string) {
	if c.LowThreshold != nil && (math.IsNaN(*c.LowThreshold) || *c.LowThreshold < 0) {
		return "balance.low_threshold", "must be a number of at least 0"
	}
	if c.Multiplier < 0 || math.IsNaN(c.Multiplier) || math.IsInf(c.Multiplier, 0) {
		return "balance.multiplier", "must be a positive number (0 or left out is 1)"
	}
	if c.Unit != "" && !c.Unit.Valid() {
		return "balance.unit", fmt.Sprintf("must be one of %s", unitList())
	}
	if c.Template != "" {
		if _, ok := Lookup(c.Template); !ok {
			return "balance.template", fmt.Sprintf("no template %q; the built-in ones are %s", c.Template, strings.Join(Names(), ", "))
		}
		if c.URL != "" || c.Method != "" || len(c.Headers) > 0 || c.Body != "" || c.Paths != (Paths{}) {
			return "balance.template", "a template is used as it is: leave url, method, headers, body and paths out"
		}
		return "", ""
	}
	if c.URL == "" {
		if c.Method != "" || len(c.Headers) > 0 || c.Body != "" || c.Paths != (Paths{}) {
			return "balance.url", "a custom connector needs the URL it reads"
		}
		return "", ""
	}
	switch c.Method {
	case "", "GET", "POST":
	default:
		return "balance.method", "must be GET or POST"
	}
	if strings.Contains(c.URL, "{{key}}") {
		return "balance.url", "the key goes in a header or the body, never the URL (URLs end up in logs)"
	}
	u, err := url.Parse(expand(c.URL, baseURL, ""))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "balance.url", "must be an http or https URL (it may start with {{base_url}} or {{origin}})"
	}
	if c.Paths.Remaining == "" && (c.Paths.Total == "" || c.Paths.Used == "") {
		return "balance.paths", "give the path of remaining, or the paths of used and total"
	}
	if c.Unit == "" && c.Paths.Unit == "" {
		return "balance.unit", fmt.Sprintf("give a unit (%s) or the path of one", unitList())
	}
	if !c.OtherHost && !sameOrigin(u, baseURL) {
		return "balance.other_host", fmt.Sprintf("the connector reads %s, not the endpoint's own host: the key would go there; confirm with other_host: true", u.Host)
	}
	return "", ""
}

func unitList() string {
	s := make([]string, len(Units))
	for i, u := range Units {
		s[i] = string(u)
	}
	return strings.Join(s, ", ")
}
