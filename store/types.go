package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Endpoint is one upstream, as stored. Protocol, Auth and BreakerOverrides
// are the app's: the store keeps them as given, without knowing their words
// or fields (the admin API validates them).
type Endpoint struct {
	ID               int64             `json:"id"`
	Name             string            `json:"name"`
	BaseURL          string            `json:"base_url"`
	APIKey           string            `json:"-"` // never serialised; the API shows a mask
	Protocol         string            `json:"protocol"`
	Auth             string            `json:"auth"`
	Models           []string          `json:"models"`
	ModelMap         map[string]string `json:"model_map"`
	Enabled          bool              `json:"enabled"`
	Fast             bool              `json:"fast"`
	FastSortOrder    int               `json:"fast_sort_order"`
	SortOrder        int               `json:"sort_order"`
	BreakerOverrides json.RawMessage   `json:"breaker_overrides"` // a JSON object; {} when none
	PriceMultiplier  float64           `json:"price_multiplier"`  // scales the cost of its answers (docs/BEHAVIOUR.md#cost)
	HedgeAfterMs     int64             `json:"hedge_after_ms"`    // its own hedge delay (docs/BEHAVIOUR.md#hedging); -1: the setting's
	Drops            []EndpointDrop    `json:"drops"`             // parts of a request it refuses (docs/BEHAVIOUR.md#refused-fields)
	OnModelMismatch  string            `json:"on_model_mismatch"` // "" (record) | record | fail (docs/BEHAVIOUR.md#the-answers-model)
	Balance          json.RawMessage   `json:"balance"`           // its balance connector, a JSON object; {} when none (docs/BEHAVIOUR.md#balance)
	ProxyURL         string            `json:"-"`                 // the proxy its requests go through, "" direct; the API shows it masked (docs/BEHAVIOUR.md#upstream-proxy)
	// Keys is its key pool (docs/BEHAVIOUR.md#key-pools), never serialised
	// (the API shows each masked); APIKey is always the first key's secret.
	Keys      []EndpointKey `json:"-"`
	Weight    int           `json:"weight"` // docs/BEHAVIOUR.md#rotation; 0: only when nothing else is left
	Tags      []string      `json:"tags"`   // groups routing rules name as tag:<tag> (docs/BEHAVIOUR.md#routing-rules); [] when none
	CreatedAt time.Time     `json:"created_at"`
	UpdatedAt time.Time     `json:"updated_at"`
}

// EndpointPatch is the input of CreateEndpoint and UpdateEndpoint, decoded
// from the admin API's JSON. Nil fields are left out: on create the endpoint
// is enabled, with price_multiplier 1, last in the list (and in the fast
// queue if fast), with the zero value of every other field left out; on
// update they keep the stored value.
// The app sets docs/BEHAVIOUR.md#endpoints's other defaults before a create.
type EndpointPatch struct {
	Name             *string            `json:"name"`
	BaseURL          *string            `json:"base_url"`
	APIKey           *string            `json:"api_key"`
	Protocol         *string            `json:"protocol"`
	Auth             *string            `json:"auth"`
	Models           *[]string          `json:"models"`
	ModelMap         *map[string]string `json:"model_map"`
	Enabled          *bool              `json:"enabled"`
	Fast             *bool              `json:"fast"`
	FastSortOrder    *int               `json:"fast_sort_order" range:"0,1000000"` // up to MaxSortOrder
	SortOrder        *int               `json:"sort_order" range:"0,1000000"`
	BreakerOverrides *json.RawMessage   `json:"breaker_overrides"`
	PriceMultiplier  *float64           `json:"price_multiplier" range:"0.001,1000"` // default 1
	HedgeAfterMs     *int64             `json:"hedge_after_ms" range:"-1,600000"`    // default -1: the setting's
	Drops            *[]EndpointDrop    `json:"drops"`
	OnModelMismatch  *string            `json:"on_model_mismatch"`
	Balance          *json.RawMessage   `json:"balance"`
	ProxyURL         *string            `json:"proxy_url"`
	// Keys replaces the pool: an entry with the id of a stored key and no
	// key keeps that key's secret; any other id is replaced by a new one.
	// Without Keys, APIKey replaces the pool with one key (none when "").
	Keys   *[]EndpointKey `json:"keys"`
	Weight *int           `json:"weight" range:"0,1000"` // default 1
	Tags   *[]string      `json:"tags"`
}

// EndpointKey is one key of an endpoint's pool (docs/BEHAVIOUR.md#key-pools).
// The store keeps Key in the keys column; the API never shows it.
type EndpointKey struct {
	ID      int64  `json:"id"`
	Label   string `json:"label"`
	Key     string `json:"key"`
	Weight  int    `json:"weight" range:"0,1000"`
	Enabled bool   `json:"enabled"`
}

// UnmarshalJSON gives a key left without weight or enabled the defaults,
// 1 and true, rather than the zero values, which mean something.
func (k *EndpointKey) UnmarshalJSON(b []byte) error {
	type bare EndpointKey
	v := bare{Weight: 1, Enabled: true}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*k = EndpointKey(v)
	return nil
}

// EndpointDrop is one part of a request an endpoint refuses and gets
// without (docs/BEHAVIOUR.md#refused-fields): a field path or
// "beta:<value>", when it was learned or entered, the refusal that taught
// it, and whether ccmesh learned it or the user entered it. The store keeps
// them as given; the app checks Drop against the proxy's list.
type EndpointDrop struct {
	Drop   string    `json:"drop"`
	At     time.Time `json:"at"`
	Error  string    `json:"error,omitempty"`
	Source string    `json:"source"` // learned | manual
}

// BreakerState is a breaker's persisted state (docs/BEHAVIOUR.md#breaker-persistence).
type BreakerState struct {
	EndpointID          int64     `json:"endpoint_id"`
	State               string    `json:"state"`  // closed | open | half_open
	Reason              string    `json:"reason"` // "" | broken | rate_limited | quota_exhausted | manual
	OpenedAt            time.Time `json:"opened_at"`
	Until               time.Time `json:"until"`
	ConsecutiveFailures int       `json:"consecutive_failures"`
	HalfOpenSuccesses   int       `json:"half_open_successes"`
	Reopens             int       `json:"reopens"`
	Balance             bool      `json:"balance"` // a balance reading holds it open (docs/BEHAVIOUR.md#balance)
	UpdatedAt           time.Time `json:"updated_at"`
}

// BreakerEvent is one row of the breaker audit trail (docs/BEHAVIOUR.md#manual-control).
type BreakerEvent struct {
	ID         int64     `json:"id"`
	At         time.Time `json:"at"`
	EndpointID int64     `json:"endpoint_id"`
	Endpoint   string    `json:"endpoint"`
	Cause      string    `json:"cause"` // request | force_open | force_close | restore | balance
	From       string    `json:"from"`
	To         string    `json:"to"`
	Reason     string    `json:"reason"`
}

// RequestLog is one client request (docs/BEHAVIOUR.md#request-log). Routing and Attempts are
// marshalled to JSON by the log writer (off the request path); rows read
// back carry them as json.RawMessage.
type RequestLog struct {
	ID             int64     `json:"id"`
	At             time.Time `json:"at"`
	Protocol       string    `json:"protocol"`
	Path           string    `json:"path"`
	ModelAsked     string    `json:"model_asked"`
	ModelForwarded string    `json:"model_forwarded"`
	// ModelAnswered is the model the answer named when it is another than
	// ModelForwarded (docs/BEHAVIOUR.md#the-answers-model); "" otherwise.
	ModelAnswered string `json:"model_answered,omitempty"`
	Explicit      bool   `json:"explicit"`
	EndpointID    int64  `json:"endpoint_id"`
	Endpoint      string `json:"endpoint"`
	Status        int    `json:"status"`
	Attempts      int    `json:"attempts"`
	DurationMs    int64  `json:"duration_ms"`
	TTFBMs        int64  `json:"ttfb_ms"`
	Stream        bool   `json:"stream"`
	StreamEnd     string `json:"stream_end"` // "" | complete | upstream_error | idle_timeout | client_gone
	TokensIn      int64  `json:"tokens_in"`
	TokensOut     int64  `json:"tokens_out"`
	SentUpstream  bool   `json:"sent_upstream"`
	ClientGone    bool   `json:"client_gone"`
	Error         string `json:"error"`
	Routing       any    `json:"routing,omitempty"`
	History       any    `json:"history,omitempty"`
	Rule          string `json:"rule"` // the routing rule that decided the candidates (docs/BEHAVIOUR.md#routing-rules); "" when none did
	// Usage is the usage of all the request's attempts summed; CostUSD
	// the sum of their costs, nil when no attempt had a price (unknown,
	// never 0). Both are nil on rows logged before they were kept.
	Usage   *LogUsage `json:"usage"`
	CostUSD *float64  `json:"cost_usd"`
	// Deltas is what the row adds to the statistics, written with it in
	// the same transaction; never read back.
	Deltas []UsageDelta `json:"-"`
	// ResentFrom is the row this request resent
	// (docs/BEHAVIOUR.md#capture-and-resend); 0 (NULL) for a client's own.
	ResentFrom int64 `json:"resent_from,omitempty"`
	// Capture, when set, is stored with the row; Done, when set, is
	// called once on the writer's goroutine with the row's id once it is
	// written, or 0 when it is lost (dropped or its batch failed). Neither
	// is read back.
	Capture CaptureSource  `json:"-"`
	Done    func(id int64) `json:"-"`
}

// LogUsage is a request's token counts summed over its attempts, in the
// names of an attempt's usage (docs/BEHAVIOUR.md#usage); Estimated when
// any attempt's was.
type LogUsage struct {
	Tokens
	Estimated bool `json:"estimated"`
}

// LogFilter selects request logs, newest first.
type LogFilter struct {
	Limit    int    // default 50, max 500
	Before   int64  // only rows with id < Before; 0 = newest
	Endpoint string // final endpoint name
	Status   int
	Model    string // matches model_asked or model_forwarded
}

// StatPoint is requests and errors of one endpoint in one minute.
type StatPoint struct {
	Minute     time.Time `json:"minute"`
	EndpointID int64     `json:"endpoint_id"`
	Endpoint   string    `json:"endpoint"`
	Requests   int       `json:"requests"`
	Errors     int       `json:"errors"`
}

var (
	// ErrNotFound: no row with that id.
	ErrNotFound = errors.New("not found")
)

// ValidationError is a rejected input; nothing was changed.
type ValidationError struct {
	Field   string // JSON field name, e.g. "name"
	Code    string // stable code, e.g. "invalid_name", "duplicate_name"
	Message string // words a user can act on
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("%s: %s", e.Field, e.Message)
}

// IsConflict reports a uniqueness violation (duplicate name): HTTP 409.
func (e *ValidationError) IsConflict() bool { return e.Code == "duplicate_name" }
