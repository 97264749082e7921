package breaker

import "time"

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
// ≤ 0, a NaN or non-positive rate) falls back to the default too: the store
// validates overrides, but a zero threshold here would open the breaker on
// every failure, so the breaker does not trust it.
func Resolve(cfg Config, p Profile, o Overrides) Settings {
	s := cfg.Claude
	if p == OpenAI {
		s = cfg.OpenAI
	}
	applyOverrides(&s, o)
	fillDefaults(&s, Defaults(p))
	return s
}

func applyOverrides(s *Settings, o Overrides) {
	if o.FailureThreshold != nil {
		s.FailureThreshold = *o.FailureThreshold
	}
	if o.SuccessThreshold != nil {
		s.SuccessThreshold = *o.SuccessThreshold
	}
	if o.Timeout != nil {
		s.Timeout = *o.Timeout
	}
	if o.ErrorRateThreshold != nil {
		s.ErrorRateThreshold = *o.ErrorRateThreshold
	}
	if o.MinRequests != nil {
		s.MinRequests = *o.MinRequests
	}
	if o.RateLimitTimeout != nil {
		s.RateLimitTimeout = *o.RateLimitTimeout
	}
	if o.MaxRateLimitTimeout != nil {
		s.MaxRateLimitTimeout = *o.MaxRateLimitTimeout
	}
	if o.QuotaTimeout != nil {
		s.QuotaTimeout = *o.QuotaTimeout
	}
	if o.Disabled != nil {
		s.Disabled = *o.Disabled
	}
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
