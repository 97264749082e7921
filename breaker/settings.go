package breaker

import (
	"fmt"
	"time"
)

// Defaults returns docs/BEHAVIOUR.md#breaker-defaults's parameters for p. An unknown profile gets the
// Claude defaults, as Profile.String names it.
//
//	parameter             Claude  OpenAI
//	FailureThreshold           8       4
//	SuccessThreshold           3       2
//	Timeout                  90s     60s
//	ErrorRateThreshold       0.7     0.6
//	MinRequests               15      10
//	RateLimitTimeout          5s      5s
//	MaxRateLimitTimeout      60s     60s
//	QuotaTimeout              1h      1h
func Defaults(p Profile) Settings {
	if p == OpenAI {
		return Settings{
			FailureThreshold:    4,
			SuccessThreshold:    2,
			Timeout:             60 * time.Second,
			ErrorRateThreshold:  0.6,
			MinRequests:         10,
			RateLimitTimeout:    5 * time.Second,
			MaxRateLimitTimeout: 60 * time.Second,
			QuotaTimeout:        time.Hour,
		}
	}
	return Settings{
		FailureThreshold:    8,
		SuccessThreshold:    3,
		Timeout:             90 * time.Second,
		ErrorRateThreshold:  0.7,
		MinRequests:         15,
		RateLimitTimeout:    5 * time.Second,
		MaxRateLimitTimeout: 60 * time.Second,
		QuotaTimeout:        time.Hour,
	}
}

// Resolve returns the effective settings for profile p: cfg's profile
// settings with zero fields filled from Defaults, then o applied.
//
// A field that is still unusable after o is applied (a threshold or duration
// ≤ 0, a NaN or non-positive rate) falls back to the default too: the admin
// API rejects such overrides (Validate), but a zero threshold here would
// open the breaker on every failure, so the breaker does not trust it.
func Resolve(cfg Config, p Profile, o Overrides) Settings {
	s := cfg.Claude
	if p == OpenAI {
		s = cfg.OpenAI
	}
	o.apply(&s)
	fillDefaults(&s, Defaults(p))
	return s
}

// Defaults, apply, Clone, Validate and fillDefaults list every parameter; a
// new parameter adds a line to each (and a field to Settings and Overrides in
// types.go).

// apply sets the parameters o sets in s.
func (o Overrides) apply(s *Settings) {
	if o.FailureThreshold != nil {
		s.FailureThreshold = *o.FailureThreshold
	}
	if o.SuccessThreshold != nil {
		s.SuccessThreshold = *o.SuccessThreshold
	}
	if o.Timeout != nil {
		s.Timeout = o.Timeout.Duration()
	}
	if o.ErrorRateThreshold != nil {
		s.ErrorRateThreshold = *o.ErrorRateThreshold
	}
	if o.MinRequests != nil {
		s.MinRequests = *o.MinRequests
	}
	if o.RateLimitTimeout != nil {
		s.RateLimitTimeout = o.RateLimitTimeout.Duration()
	}
	if o.MaxRateLimitTimeout != nil {
		s.MaxRateLimitTimeout = o.MaxRateLimitTimeout.Duration()
	}
	if o.QuotaTimeout != nil {
		s.QuotaTimeout = o.QuotaTimeout.Duration()
	}
	if o.Disabled != nil {
		s.Disabled = *o.Disabled
	}
}

// Clone returns o with its own copies of the pointed-to values, so that
// neither changes through the other (decoding JSON onto a value writes
// through its pointers).
func (o Overrides) Clone() Overrides {
	return Overrides{
		FailureThreshold:    clonePtr(o.FailureThreshold),
		SuccessThreshold:    clonePtr(o.SuccessThreshold),
		Timeout:             clonePtr(o.Timeout),
		ErrorRateThreshold:  clonePtr(o.ErrorRateThreshold),
		MinRequests:         clonePtr(o.MinRequests),
		RateLimitTimeout:    clonePtr(o.RateLimitTimeout),
		MaxRateLimitTimeout: clonePtr(o.MaxRateLimitTimeout),
		QuotaTimeout:        clonePtr(o.QuotaTimeout),
		Disabled:            clonePtr(o.Disabled),
	}
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Validate checks the parameters o sets (docs/BEHAVIOUR.md#breaker-defaults):
// thresholds at least 1, durations above 0, the error rate in (0, 1]. field
// is where o sits in the input and prefixes the reported field: "breaker.claude"
// gives "breaker.claude.timeout_ms". A rejection is an *OverrideError.
func (o Overrides) Validate(field string) error {
	bad := func(name, format string, args ...any) error {
		return &OverrideError{Field: field + "." + name, Code: CodeInvalidOverride,
			Message: name + " " + fmt.Sprintf(format, args...)}
	}
	ints := []struct {
		name string
		v    *int
	}{
		{"failure_threshold", o.FailureThreshold},
		{"success_threshold", o.SuccessThreshold},
		{"min_requests", o.MinRequests},
	}
	for _, c := range ints {
		if c.v != nil && *c.v < 1 {
			return bad(c.name, "must be at least 1, got %d", *c.v)
		}
	}
	durations := []struct {
		name string
		v    *Millis
	}{
		{"timeout_ms", o.Timeout},
		{"rate_limit_timeout_ms", o.RateLimitTimeout},
		{"max_rate_limit_timeout_ms", o.MaxRateLimitTimeout},
		{"quota_timeout_ms", o.QuotaTimeout},
	}
	for _, c := range durations {
		if c.v != nil && *c.v <= 0 {
			return bad(c.name, "must be more than 0 milliseconds, got %d", *c.v)
		}
	}
	// Written as !(in range) so that NaN is rejected too.
	if r := o.ErrorRateThreshold; r != nil && !(*r > 0 && *r <= 1) {
		return bad("error_rate_threshold", "must be more than 0 and at most 1, got %v", *r)
	}
	return nil
}

func fillDefaults(s *Settings, d Settings) {
	if s.FailureThreshold <= 0 {
		s.FailureThreshold = d.FailureThreshold
	}
	if s.SuccessThreshold <= 0 {
		s.SuccessThreshold = d.SuccessThreshold
	}
	if s.Timeout <= 0 {
		s.Timeout = d.Timeout
	}
	// Written as a negated comparison so that NaN takes the default as well.
	if !(s.ErrorRateThreshold > 0) {
		s.ErrorRateThreshold = d.ErrorRateThreshold
	}
	if s.MinRequests <= 0 {
		s.MinRequests = d.MinRequests
	}
	if s.RateLimitTimeout <= 0 {
		s.RateLimitTimeout = d.RateLimitTimeout
	}
	if s.MaxRateLimitTimeout <= 0 {
		s.MaxRateLimitTimeout = d.MaxRateLimitTimeout
	}
	if s.QuotaTimeout <= 0 {
		s.QuotaTimeout = d.QuotaTimeout
	}
}

// profileIndex maps a profile to its slot in a Breaker's resolved settings.
func profileIndex(p Profile) int {
	if p == OpenAI {
		return 1
	}
	return 0
}
