package proxy

import (
	"time"

	"github.com/ccmesh/ccmesh/breaker"
)

// LogSink receives one Record per client request. Log must not block: the
// request path calls it (the app queues the record for its batch writer).
type LogSink interface{ Log(rec *Record) }

// StreamEnd is how a stream that reached the client ended
// (docs/BEHAVIOUR.md#request-log); "" when nothing was streamed.
type StreamEnd string

const (
	StreamComplete      StreamEnd = "complete"
	StreamUpstreamError StreamEnd = "upstream_error"
	StreamIdleTimeout   StreamEnd = "idle_timeout"
	StreamClientGone    StreamEnd = "client_gone"
)

// StatusClientGone is logged when the client went away (nginx's 499);
// nothing is written to the client.
const StatusClientGone = 499

// Record is one client request for the request log (docs/BEHAVIOUR.md#request-log). The proxy
// fills plain fields only; the app marshals Routing and Attempts off the
// request path.
type Record struct {
	Time           time.Time `json:"time"`
	Protocol       Protocol  `json:"protocol"` // the inbound path's protocol
	Path           string    `json:"path"`
	ModelAsked     string    `json:"model_asked"`
	ModelForwarded string    `json:"model_forwarded"`
	Explicit       bool      `json:"explicit"`
	Rule           string    `json:"rule"` // the routing rule that decided the candidates; "" when none did
	EndpointID     int64     `json:"endpoint_id"`
	Endpoint       string    `json:"endpoint"`
	Status         int       `json:"status"`
	AttemptCount   int       `json:"attempt_count"`
	DurationMs     int64     `json:"duration_ms"`
	TTFBMs         int64     `json:"ttfb_ms"`
	Stream         bool      `json:"stream"`
	StreamEnd      StreamEnd `json:"stream_end"`
	TokensIn       int64     `json:"tokens_in"`  // every input token of the answering attempt, cached or not
	TokensOut      int64     `json:"tokens_out"` // its output tokens, reasoning included
	SentUpstream   bool      `json:"sent_upstream"`
	ClientGone     bool      `json:"client_gone"`
	Error          string    `json:"error"`
	Routing        Routing   `json:"routing"`
	Attempts       []Attempt `json:"attempts"`
	// Usage is the sum of the attempts' usage; nil when none counted any.
	Usage *Usage `json:"usage,omitempty"`
	// ModelAnswered is the model the answer named when it is another than
	// the one forwarded (the answering attempt's; answered.go), else "".
	ModelAnswered string `json:"model_answered,omitempty"`
	// ResentFrom is the log row this request resends (an Internal request
	// from the admin API); 0 for a client's own.
	ResentFrom int64 `json:"resent_from,omitempty"`
	// Capture is what the client sent and got, when the capture setting
	// keeps this request (docs/BEHAVIOUR.md#capture-and-resend); raw, to be
	// redacted off the request path.
	Capture *Capture `json:"-"`
	// Tag is the tag of an Internal request, for its sender.
	Tag any `json:"-"`
}

// Routing is the routing decision of a request.
type Routing struct {
	Strategy   Strategy    `json:"strategy"`
	Candidates []Candidate `json:"candidates"`
	Excluded   []Excluded  `json:"excluded"`
	// Waited is how long the request waited for a rate limit to end (docs/BEHAVIOUR.md#rate-limit-wait).
	WaitedMs int64 `json:"waited_ms,omitempty"`
	// Session is a hash of the conversation the session strategy routed by
	// (never the client's own id); Affinity: the affinity table, not
	// rendezvous hashing, chose where it started.
	Session  string `json:"session,omitempty"`
	Affinity bool   `json:"affinity,omitempty"`
}

// Candidate is an endpoint the request could use, with its breaker state.
type Candidate struct {
	EndpointID int64         `json:"endpoint_id"`
	Endpoint   string        `json:"endpoint"`
	State      breaker.State `json:"state"`
}

// Exclusion says why routing left an endpoint out (docs/BEHAVIOUR.md#candidates).
type Exclusion string

const (
	// ExcludedModel: the endpoint's models do not match the model asked.
	ExcludedModel Exclusion = "model"
	// ExcludedProtocol: the endpoint speaks another protocol and neither
	// its models nor its model_map name the model asked, so it is not
	// offered to this client translated.
	ExcludedProtocol Exclusion = "protocol"
	// ExcludedBreaker: the breaker is Open before its cooldown ends, or
	// HalfOpen with its one probe permit taken (ProbeInFlight).
	ExcludedBreaker Exclusion = "breaker"
	// ExcludedNotFast: the endpoint could serve the client but is not in
	// the fast queue, which has members for this protocol. Only a dry run
	// (Server.Explain) names it; a request's routing lists the routable
	// list's endpoints only.
	ExcludedNotFast Exclusion = "not_fast"
	// ExcludedDisabled: the endpoint is disabled (dry runs only, as above).
	ExcludedDisabled Exclusion = "disabled"
	// ExcludedKeys: every key of the endpoint's pool is disabled or held
	// open by its breaker (docs/BEHAVIOUR.md#key-pools).
	ExcludedKeys Exclusion = "keys"
)

// Excluded is an endpoint routing left out, and why. State, BreakerReason,
// ProbeInFlight and Until describe the breaker of an ExcludedBreaker entry.
type Excluded struct {
	EndpointID    int64          `json:"endpoint_id"`
	Endpoint      string         `json:"endpoint"`
	Reason        Exclusion      `json:"reason"`
	State         breaker.State  `json:"state,omitempty"`
	BreakerReason breaker.Reason `json:"breaker_reason,omitempty"`
	ProbeInFlight bool           `json:"probe_in_flight,omitempty"`
	Until         time.Time      `json:"until,omitzero"`
	// Balance: a balance reading holds the breaker open (docs/BEHAVIOUR.md#balance).
	Balance bool `json:"balance,omitempty"`
}

// Attempt is one upstream attempt in the failover history.
type Attempt struct {
	EndpointID     int64        `json:"endpoint_id"`
	Endpoint       string       `json:"endpoint"`
	ErrorType      ErrorType    `json:"error_type"` // "" on success
	Status         int          `json:"status"`
	Message        string       `json:"message"`
	BodyHead       string       `json:"body_head"`
	StartedAt      time.Time    `json:"started_at"`
	DurationMs     int64        `json:"duration_ms"`
	BreakerCounted bool         `json:"breaker_counted"`
	Outcome        breaker.Kind `json:"outcome"` // what the breaker heard
	// Translation names the translation the attempt ran, client protocol
	// to endpoint protocol ("anthropic→openai-chat"); "" when none.
	Translation Translation `json:"translation,omitempty"`
	// Model is the model sent to the endpoint (after @name/ and model_map).
	Model string `json:"model,omitempty"`
	// Usage is what the upstream reported this attempt cost, normalised
	// (usage.go); nil when the attempt got no answer to count.
	Usage *Usage `json:"usage,omitempty"`
	// Hedge is the attempt's part in a first-token race (hedge.go); ""
	// when there was none.
	Hedge HedgePart `json:"hedge,omitempty"`
	// KeyID and Key name the key of the endpoint's pool the attempt sent
	// (its label and mask, never the key); KeyFault says its failure went
	// to that key's breaker rather than the endpoint's (docs/BEHAVIOUR.md#key-pools).
	KeyID    int64  `json:"key_id,omitempty"`
	Key      string `json:"key,omitempty"`
	KeyFault bool   `json:"key_fault,omitempty"`
	// Cost is the usage priced (docs/BEHAVIOUR.md#cost); the app fills it
	// in from its price table when it logs the record, the proxy never
	// does. nil when there is no usage.
	Cost *Cost `json:"cost_usd,omitempty"`
	// Adjusted names how the request was changed for a second try on the
	// same endpoint after it refused the first; "" when it was not.
	Adjusted Adjustment `json:"adjusted,omitempty"`
	// Dropped names the parts left out of the request the answer came to
	// (droppable.go): learned before, or after Refused refused them.
	Dropped []string `json:"dropped,omitempty"`
	// Refused is the endpoint's refusal of the attempt's first try ("400:
	// context_management: Extra inputs are not permitted"), after which
	// the request went again without what it named; "" when none.
	Refused string `json:"refused,omitempty"`
	// ModelAnswered is the model the answer named when it is another than
	// Model, the one forwarded (beyond a date suffix or the same model's
	// alias: answered.go); "" otherwise.
	ModelAnswered string `json:"model_answered,omitempty"`
}

// ErrorType names what went wrong in one attempt (docs/BEHAVIOUR.md#request-log).
type ErrorType string

const (
	ErrTransport       ErrorType = "transport"          // refused, reset, EOF, TLS, DNS
	ErrFirstByte       ErrorType = "first_byte_timeout" // no headers, or no stream content, in time
	ErrIdle            ErrorType = "idle_timeout"       // a stream stalled before any content
	ErrPreludeTooLarge ErrorType = "prelude_too_large"  // more than 1 MiB of opening events before any content
	ErrStatus          ErrorType = "upstream_status"    // a non-2xx status
	ErrQuota           ErrorType = "quota_exhausted"    // the account's credit or quota is spent
	ErrRateLimit       ErrorType = "rate_limited"       // a 429
	ErrStreamErr       ErrorType = "stream_error"       // an error event in a 2xx stream
	ErrStreamEnd       ErrorType = "stream_ended_early" // the body or stream ended or broke too soon
	ErrClientGone      ErrorType = "client_gone"        // the client went away
	ErrTranslation     ErrorType = "translation"        // the request cannot be carried in the endpoint's protocol
	ErrHedgeCancelled  ErrorType = "hedge_cancelled"    // stopped because the racing attempt answered first
	ErrModelMismatch   ErrorType = "model_mismatch"     // answered by another model, on an endpoint set to fail then
)

// HedgePart is an attempt's part in a first-token race
// (docs/BEHAVIOUR.md#hedging); "" when it ran in none.
type HedgePart string

const (
	HedgeWon       HedgePart = "won"       // it answered first
	HedgeCancelled HedgePart = "cancelled" // stopped because the other side answered first
	HedgeFailed    HedgePart = "failed"    // it failed on its own during the race
)

// Adjustment names how a request was changed for a second try on the same
// endpoint after it refused the first (retry.go, refused.go).
type Adjustment string

const (
	AdjustStripThinking Adjustment = "strip_thinking"   // reasoning parts and their signatures left out
	AdjustStepEffort    Adjustment = "step_down_effort" // the reasoning effort one level lower
	AdjustDropEffort    Adjustment = "drop_effort"      // no reasoning effort at all
	AdjustMaxTokens     Adjustment = "lower_max_tokens" // no output limit, or a small one where required
	AdjustDropRefused   Adjustment = "drop_refused"     // without the parts the endpoint refused
)

// Translation names a translation, client protocol to endpoint protocol:
// "anthropic→openai-chat" (docs/BEHAVIOUR.md#translation).
type Translation string

// TranslationOf is the translation of a request from protocol from to
// protocol to; "" when they are the same.
func TranslationOf(from, to Protocol) Translation {
	if from == to {
		return ""
	}
	return Translation(string(from) + "→" + string(to))
}

// Translations lists every Translation: each ordered pair of Protocols.
func Translations() []Translation {
	var out []Translation
	for _, from := range Protocols {
		for _, to := range Protocols {
			if from != to {
				out = append(out, TranslationOf(from, to))
			}
		}
	}
	return out
}
