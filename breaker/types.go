// Package breaker is the per-endpoint circuit breaker of docs/BEHAVIOUR.md#circuit-breaker.
//
// It is pure: no I/O, no logging, no goroutines, no timers. Every transition
// happens when a request asks (Available, Allow) or reports (Permit.Done);
// reading (View, Snapshot) never changes a breaker.
// Time comes from time.Now, so tests run inside testing/synctest.
package breaker

import (
	"errors"
	"fmt"
	"time"
)

// State is the breaker's state machine position.
type State uint8

const (
	Closed State = iota
	Open
	HalfOpen
)

func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half_open"
	}
	return "unknown"
}

// Reason says why a breaker is Open, or what kind of failure an outcome is.
type Reason uint8

const (
	ReasonNone Reason = iota
	Broken
	RateLimited
	QuotaExhausted
	Manual
)

func (r Reason) String() string {
	switch r {
	case ReasonNone:
		return ""
	case Broken:
		return "broken"
	case RateLimited:
		return "rate_limited"
	case QuotaExhausted:
		return "quota_exhausted"
	case Manual:
		return "manual"
	}
	return "unknown"
}

// Profile selects the defaults of docs/BEHAVIOUR.md#breaker-defaults by the inbound protocol of a request.
type Profile uint8

const (
	Claude Profile = iota
	OpenAI
)

func (p Profile) String() string {
	if p == OpenAI {
		return "openai"
	}
	return "claude"
}

// Settings are one profile's breaker parameters. A zero field means "use the
// profile default" (see Defaults), so the zero Settings is valid.
type Settings struct {
	FailureThreshold    int           // consecutive failures → Open
	SuccessThreshold    int           // HalfOpen successes → Closed
	Timeout             time.Duration // Open(Broken) cooldown
	ErrorRateThreshold  float64       // error rate over the 60 s window → Open
	MinRequests         int           // samples needed before the rate counts
	RateLimitTimeout    time.Duration // Open(RateLimited) cooldown without Retry-After
	MaxRateLimitTimeout time.Duration // cap on a Retry-After
	QuotaTimeout        time.Duration // Open(QuotaExhausted) cooldown
	Disabled            bool          // opt out: always Closed, outcomes still counted
}

// Overrides changes single parameters of a profile's Settings; nil fields
// keep the profile's value. It is the one optional-parameter type: an
// endpoint's overrides and the user's per-profile defaults, in the admin
// API and in the database alike, with the names of
// docs/BEHAVIOUR.md#breaker-defaults. Validate checks one; Resolve applies it.
// A new parameter is a field here and in Settings, and a line in each of
// the functions settings.go names. The range tag ("min,max[,in words]") is
// the admin API's bound on an integer parameter.
type Overrides struct {
	FailureThreshold    *int     `json:"failure_threshold,omitempty" range:"1,10000"`
	SuccessThreshold    *int     `json:"success_threshold,omitempty" range:"1,10000"`
	Timeout             *Millis  `json:"timeout_ms,omitempty" range:"1,604800000,1 ms to 7 days"`
	ErrorRateThreshold  *float64 `json:"error_rate_threshold,omitempty"`
	MinRequests         *int     `json:"min_requests,omitempty" range:"1,10000"`
	RateLimitTimeout    *Millis  `json:"rate_limit_timeout_ms,omitempty" range:"1,604800000,1 ms to 7 days"`
	MaxRateLimitTimeout *Millis  `json:"max_rate_limit_timeout_ms,omitempty" range:"1,604800000,1 ms to 7 days"`
	QuotaTimeout        *Millis  `json:"quota_timeout_ms,omitempty" range:"1,604800000,1 ms to 7 days"`
	Disabled            *bool    `json:"disabled,omitempty"`
}

// Millis is a duration in whole milliseconds: how Overrides hold durations,
// so that their JSON is in milliseconds.
type Millis int64

// Duration is m as a time.Duration.
func (m Millis) Duration() time.Duration { return time.Duration(m) * time.Millisecond }

// CodeInvalidOverride is the code of every OverrideError; the admin API
// returns it and the UI keys its message on it.
const CodeInvalidOverride = "invalid_breaker_override"

// OverrideError is a breaker parameter Overrides.Validate rejects.
type OverrideError struct {
	Field   string // JSON path of the parameter, e.g. "breaker.claude.timeout_ms"
	Code    string // CodeInvalidOverride
	Message string // words a user can act on
}

func (e *OverrideError) Error() string { return e.Field + ": " + e.Message }

// Config holds the defaults of both profiles. Zero fields take Defaults.
type Config struct {
	Claude Settings
	OpenAI Settings
}

// Kind is what an attempt's outcome means to the breaker.
type Kind uint8

const (
	Success Kind = iota
	Failure
	Neutral
)

// Outcome is reported through Permit.Done.
type Outcome struct {
	Kind Kind
	// Reason of a Failure: Broken, RateLimited or QuotaExhausted.
	Reason Reason
	// RetryAfter is the upstream's retry time for a RateLimited failure;
	// zero means none was given (the failure then counts toward thresholds).
	RetryAfter time.Duration
}

// Cause says what made a transition happen.
type Cause uint8

const (
	CauseRequest Cause = iota
	CauseForceOpen
	CauseForceClose
	CauseRestore
	// CauseBalance: a balance reading opened the breaker (nothing left)
	// or closed one it had opened (credit again).
	CauseBalance
)

func (c Cause) String() string {
	switch c {
	case CauseRequest:
		return "request"
	case CauseForceOpen:
		return "force_open"
	case CauseForceClose:
		return "force_close"
	case CauseRestore:
		return "restore"
	case CauseBalance:
		return "balance"
	}
	return "unknown"
}

// Snapshot is everything needed to persist a breaker and restore it so that a
// restart neither forgets nor extends a cooldown (times are absolute).
type Snapshot struct {
	State               State
	Reason              Reason
	OpenedAt            time.Time
	Until               time.Time // end of the Open cooldown; zero unless Open
	ConsecutiveFailures int
	HalfOpenSuccesses   int
	Reopens             int // probe failures in a row (docs/BEHAVIOUR.md#repeated-failure escalation)
	// Balance: a balance reading opened it (QuotaExhausted only); a zero
	// Until then holds it until a reading shows credit.
	Balance bool
}

// Transition is passed to the Set's OnTransition callback, outside any lock.
type Transition struct {
	ID       int64
	From, To State
	Reason   Reason
	Cause    Cause
	At       time.Time
	Snapshot Snapshot // the state after the transition
	// Generation is the breaker's generation after the transition; it grows
	// with every transition of one breaker. Callbacks run outside the lock,
	// so two transitions of one breaker can reach them in either order: a
	// consumer that persists Snapshot should drop one older than the last
	// it saved.
	Generation uint64
}

// Counts is a value snapshot of a breaker's counters, for display.
type Counts struct {
	ConsecutiveFailures int
	HalfOpenSuccesses   int
	WindowRequests      int // samples in the 60 s rolling window
	WindowFailures      int
	Reopens             int
	TotalSuccesses      uint64
	TotalFailures       uint64
}

// View is what routing and the UI see of a breaker at a moment. Taking it
// changes nothing and reserves nothing.
type View struct {
	State         State
	Reason        Reason
	OpenedAt      time.Time
	Until         time.Time // when an Open breaker may probe; zero otherwise
	ProbeInFlight bool      // HalfOpen permit taken
	// ProbeDue: Open, and its cooldown is over; the next request that
	// considers it turns it HalfOpen and probes.
	ProbeDue bool
	// Balance: a balance reading holds it Open (docs/BEHAVIOUR.md#balance).
	Balance bool
	Counts  Counts
}

var (
	// ErrOpen is returned by Allow while the breaker is Open.
	ErrOpen = errors.New("breaker: open")
	// ErrProbeInFlight is returned by Allow in HalfOpen while the single
	// probe permit is taken.
	ErrProbeInFlight = errors.New("breaker: half-open probe in flight")
)

// The words of State, Reason, Kind and Cause are what the request log, the
// admin API and the database hold; MarshalText and UnmarshalText make them
// the values' one spelling.

func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

func (s *State) UnmarshalText(b []byte) error {
	return parseWord(b, s, "state", Closed, Open, HalfOpen)
}

func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

func (r *Reason) UnmarshalText(b []byte) error {
	return parseWord(b, r, "reason", ReasonNone, Broken, RateLimited, QuotaExhausted, Manual)
}

func (k Kind) String() string {
	switch k {
	case Success:
		return "success"
	case Failure:
		return "failure"
	case Neutral:
		return "neutral"
	}
	return "unknown"
}

func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

func (k *Kind) UnmarshalText(b []byte) error {
	return parseWord(b, k, "outcome", Success, Failure, Neutral)
}

func (c Cause) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

func (c *Cause) UnmarshalText(b []byte) error {
	return parseWord(b, c, "cause", CauseRequest, CauseForceOpen, CauseForceClose, CauseRestore, CauseBalance)
}

// parseWord sets *dst to the value of values whose String is b.
func parseWord[T fmt.Stringer](b []byte, dst *T, what string, values ...T) error {
	for _, v := range values {
		if v.String() == string(b) {
			*dst = v
			return nil
		}
	}
	return fmt.Errorf("breaker: unknown %s %q", what, b)
}
