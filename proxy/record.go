package proxy

import (
	"bytes"
	"encoding/json"
	"time"
)

// LogSink receives one Record per client request. Log must not block: the
// request path calls it (the app queues the record for its batch writer).
type LogSink interface{ Log(rec *Record) }

// Stream end states (docs/BEHAVIOUR.md#request-log).
const (
	StreamComplete      = "complete"
	StreamUpstreamError = "upstream_error"
	StreamIdleTimeout   = "idle_timeout"
	StreamClientGone    = "client_gone"
)

// StatusClientGone is logged when the client went away (nginx's 499);
// nothing is written to the client.
const StatusClientGone = 499

// Record is one client request for the request log (docs/BEHAVIOUR.md#request-log). The proxy
// fills plain fields only; the app marshals Routing and Attempts off the
// request path.
type Record struct {
	Time           time.Time `json:"time"`
	Protocol       string    `json:"protocol"` // the endpoints' protocol the route serves
	Path           string    `json:"path"`
	ModelAsked     string    `json:"model_asked"`
	ModelForwarded string    `json:"model_forwarded"`
	Explicit       bool      `json:"explicit"`
	EndpointID     int64     `json:"endpoint_id"`
	Endpoint       string    `json:"endpoint"`
	Status         int       `json:"status"`
	AttemptCount   int       `json:"attempt_count"`
	DurationMs     int64     `json:"duration_ms"`
	TTFBMs         int64     `json:"ttfb_ms"`
	Stream         bool      `json:"stream"`
	StreamEnd      string    `json:"stream_end"`
	TokensIn       int64     `json:"tokens_in"`
	TokensOut      int64     `json:"tokens_out"`
	SentUpstream   bool      `json:"sent_upstream"`
	ClientGone     bool      `json:"client_gone"`
	Error          string    `json:"error"`
	Routing        Routing   `json:"routing"`
	Attempts       []Attempt `json:"attempts"`
}

// Routing is the routing decision of a request.
type Routing struct {
	Strategy   string      `json:"strategy"`
	Candidates []Candidate `json:"candidates"`
	Excluded   []Excluded  `json:"excluded"`
	// Waited is how long the request waited for a rate limit to end (docs/BEHAVIOUR.md#rate-limit-wait).
	WaitedMs int64 `json:"waited_ms,omitempty"`
}

// Candidate is an endpoint the request could use, with its breaker state.
type Candidate struct {
	EndpointID int64  `json:"endpoint_id"`
	Endpoint   string `json:"endpoint"`
	State      string `json:"state"`
}

// Excluded is an endpoint routing left out, and why.
type Excluded struct {
	EndpointID int64     `json:"endpoint_id"`
	Endpoint   string    `json:"endpoint"`
	Reason     string    `json:"reason"` // protocol | model | breaker state/reason
	Until      time.Time `json:"until,omitzero"`
}

// Attempt is one upstream attempt in the failover history.
type Attempt struct {
	EndpointID     int64     `json:"endpoint_id"`
	Endpoint       string    `json:"endpoint"`
	ErrorType      string    `json:"error_type"` // "" on success; see the errType* constants
	Status         int       `json:"status"`
	Message        string    `json:"message"`
	BodyHead       string    `json:"body_head"`
	StartedAt      time.Time `json:"started_at"`
	DurationMs     int64     `json:"duration_ms"`
	BreakerCounted bool      `json:"breaker_counted"`
	Outcome        string    `json:"outcome"` // success | failure | neutral
}

// Attempt error types.
const (
	errTypeTransport  = "transport"
	errTypeFirstByte  = "first_byte_timeout"
	errTypeIdle       = "idle_timeout"
	errTypeStatus     = "upstream_status"
	errTypeQuota      = "quota_exhausted"
	errTypeRateLimit  = "rate_limited"
	errTypeStreamErr  = "stream_error"
	errTypeStreamEnd  = "stream_ended_early"
	errTypeClientGone = "client_gone"
)

// usage collects token counts from any of the three protocols' usage
// objects; fields absent from a protocol stay zero.
type usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

func (u *usage) in() int64  { return max(u.InputTokens, u.PromptTokens) }
func (u *usage) out() int64 { return max(u.OutputTokens, u.CompletionTokens) }

// applyUsage records the tokens of a usage object; later reports win
// because Anthropic's message_delta carries the final output count.
func (rec *Record) applyUsage(u *usage) {
	if u == nil {
		return
	}
	if v := u.in(); v > 0 {
		rec.TokensIn = v
	}
	if v := u.out(); v > 0 {
		rec.TokensOut = v
	}
}

var usageKey = []byte(`"usage"`)

// usageFromJSON reads usage from a non-streamed response body: top-level
// "usage" (all three protocols) or count_tokens' top-level input_tokens.
func usageFromJSON(b []byte) *usage {
	var doc struct {
		Usage       *usage `json:"usage"`
		InputTokens int64  `json:"input_tokens"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return nil
	}
	if doc.Usage != nil {
		return doc.Usage
	}
	if doc.InputTokens > 0 {
		return &usage{InputTokens: doc.InputTokens}
	}
	return nil
}

// usageFromEvent reads usage from one SSE data payload: Anthropic
// message_start (message.usage) and message_delta (usage), OpenAI's usage
// chunk (usage) and Responses' response.completed (response.usage).
func usageFromEvent(data []byte) *usage {
	if !bytes.Contains(data, usageKey) {
		return nil
	}
	var ev struct {
		Usage    *usage                  `json:"usage"`
		Message  *struct{ Usage *usage } `json:"message"`
		Response *struct{ Usage *usage } `json:"response"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return nil
	}
	switch {
	case ev.Usage != nil:
		return ev.Usage
	case ev.Message != nil && ev.Message.Usage != nil:
		return ev.Message.Usage
	case ev.Response != nil && ev.Response.Usage != nil:
		return ev.Response.Usage
	}
	return nil
}
