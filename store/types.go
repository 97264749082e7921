package store

import (
	"errors"
	"fmt"
	"time"
)

// Protocols and auth modes an endpoint may have (docs/BEHAVIOUR.md#endpoints).
const (
	ProtocolAnthropic       = "anthropic"
	ProtocolOpenAIChat      = "openai-chat"
	ProtocolOpenAIResponses = "openai-responses"

	AuthAuto    = "auto"
	AuthXAPIKey = "x-api-key"
	AuthBearer  = "bearer"
)

// Endpoint is one upstream, as stored.
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
	BreakerOverrides BreakerParams     `json:"breaker_overrides"`
	CreatedAt        time.Time         `json:"created_at"`
	UpdatedAt        time.Time         `json:"updated_at"`
}

// EndpointPatch is the input of CreateEndpoint and UpdateEndpoint, decoded
// straight from the admin API's JSON. Nil fields are left out: on create they
// take docs/BEHAVIOUR.md#endpoints's defaults, on update they keep the stored value.
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
	FastSortOrder    *int               `json:"fast_sort_order"`
	SortOrder        *int               `json:"sort_order"`
	BreakerOverrides *BreakerParams     `json:"breaker_overrides"`
}

// BreakerParams are optional breaker parameters with docs/BEHAVIOUR.md#breaker-defaults's names; used
// for per-endpoint overrides and for the per-profile defaults in Settings.
// Nil means "not set here".
type BreakerParams struct {
	FailureThreshold      *int     `json:"failure_threshold,omitempty"`
	SuccessThreshold      *int     `json:"success_threshold,omitempty"`
	TimeoutMs             *int64   `json:"timeout_ms,omitempty"`
	ErrorRateThreshold    *float64 `json:"error_rate_threshold,omitempty"`
	MinRequests           *int     `json:"min_requests,omitempty"`
	RateLimitTimeoutMs    *int64   `json:"rate_limit_timeout_ms,omitempty"`
	MaxRateLimitTimeoutMs *int64   `json:"max_rate_limit_timeout_ms,omitempty"`
	QuotaTimeoutMs        *int64   `json:"quota_timeout_ms,omitempty"`
	Disabled              *bool    `json:"disabled,omitempty"`
}

// Settings is the whole settings document.
type Settings struct {
	// Listen is the address to use at the next start when --listen is not
	// given; "" means the built-in default.
	Listen             string          `json:"listen"`
	Strategy           string          `json:"strategy"` // sticky | priority | round-robin
	Breaker            BreakerProfiles `json:"breaker"`
	FirstByteTimeoutMs int64           `json:"first_byte_timeout_ms"`
	IdleTimeoutMs      int64           `json:"idle_timeout_ms"`
	MaxBodyBytes       int64           `json:"max_body_bytes"`
	ClientToken        string          `json:"client_token"`
	LogRetentionRows   int             `json:"log_retention_rows"`
	LogRetentionDays   int             `json:"log_retention_days"`
	Notifications      bool            `json:"notifications"`
	Language           string          `json:"language"` // en | zh-CN
}

// BreakerProfiles holds the per-profile breaker defaults set by the user.
type BreakerProfiles struct {
	Claude BreakerParams `json:"claude"`
	OpenAI BreakerParams `json:"openai"`
}

// DefaultSettings are the settings of a new database.
func DefaultSettings() Settings {
	return Settings{
		Strategy:           "sticky",
		FirstByteTimeoutMs: 60_000,
		IdleTimeoutMs:      90_000,
		MaxBodyBytes:       64 << 20,
		LogRetentionRows:   50_000,
		LogRetentionDays:   14,
		Notifications:      true,
		Language:           "en",
	}
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
	UpdatedAt           time.Time `json:"updated_at"`
}

// BreakerEvent is one row of the breaker audit trail (docs/BEHAVIOUR.md#manual-control).
type BreakerEvent struct {
	ID         int64     `json:"id"`
	At         time.Time `json:"at"`
	EndpointID int64     `json:"endpoint_id"`
	Endpoint   string    `json:"endpoint"`
	Cause      string    `json:"cause"` // request | force_open | force_close | restore
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
	Explicit       bool      `json:"explicit"`
	EndpointID     int64     `json:"endpoint_id"`
	Endpoint       string    `json:"endpoint"`
	Status         int       `json:"status"`
	Attempts       int       `json:"attempts"`
	DurationMs     int64     `json:"duration_ms"`
	TTFBMs         int64     `json:"ttfb_ms"`
	Stream         bool      `json:"stream"`
	StreamEnd      string    `json:"stream_end"` // "" | complete | upstream_error | idle_timeout | client_gone
	TokensIn       int64     `json:"tokens_in"`
	TokensOut      int64     `json:"tokens_out"`
	SentUpstream   bool      `json:"sent_upstream"`
	ClientGone     bool      `json:"client_gone"`
	Error          string    `json:"error"`
	Routing        any       `json:"routing,omitempty"`
	History        any       `json:"history,omitempty"`
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
