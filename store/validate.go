package store

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"unicode"
)

// Validation codes (ValidationError.Code). They are stable: the admin API
// returns them and the UI keys its messages on them.
const (
	CodeRequired               = "required"
	CodeInvalidName            = "invalid_name"
	CodeDuplicateName          = "duplicate_name"
	CodeInvalidURL             = "invalid_url"
	CodeInvalidProtocol        = "invalid_protocol"
	CodeInvalidAuth            = "invalid_auth"
	CodeInvalidAPIKey          = "invalid_api_key"
	CodeInvalidModelPattern    = "invalid_model_pattern"
	CodeInvalidModelMap        = "invalid_model_map"
	CodeInvalidBreakerOverride = "invalid_breaker_override"
	CodeUnknownID              = "unknown_id"
	CodeDuplicateID            = "duplicate_id"
	CodeNotPermutation         = "not_permutation"
)

var namePattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func invalid(field, code, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Code: code, Message: fmt.Sprintf(format, args...)}
}

// validateEndpoint checks a complete endpoint (a create's input with
// defaults applied, or an update's result). Uniqueness is checked by the
// caller inside the write transaction.
func validateEndpoint(e *Endpoint) *ValidationError {
	checks := []func(*Endpoint) *ValidationError{
		checkName, checkBaseURL, checkProtocol, checkAuth, checkAPIKey,
		checkModels, checkModelMap,
	}
	for _, check := range checks {
		if err := check(e); err != nil {
			return err
		}
	}
	return validateBreakerParams("breaker_overrides", e.BreakerOverrides)
}

func checkName(e *Endpoint) *ValidationError {
	if e.Name == "" {
		return invalid("name", CodeRequired, "name is required")
	}
	if !namePattern.MatchString(e.Name) {
		return invalid("name", CodeInvalidName,
			"name %q must be 1 to 64 characters of letters, digits, '.', '_' or '-' (it is used in @name/model)", e.Name)
	}
	return nil
}

// checkBaseURL also normalises: surrounding spaces and trailing slashes go,
// so that appending "/v1/messages" never makes "//". Messages never quote
// the URL: a pasted one may carry a key in its query or user info, and
// errors end up in logs.
func checkBaseURL(e *Endpoint) *ValidationError {
	e.BaseURL = strings.TrimRight(strings.TrimSpace(e.BaseURL), "/")
	if e.BaseURL == "" {
		return invalid("base_url", CodeRequired, "base_url is required, e.g. https://api.anthropic.com")
	}
	u, err := url.Parse(e.BaseURL)
	if err != nil {
		return invalid("base_url", CodeInvalidURL, "base_url is not a valid URL, e.g. https://relay.example/api")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return invalid("base_url", CodeInvalidURL, "base_url must start with http:// or https://")
	case u.Hostname() == "":
		return invalid("base_url", CodeInvalidURL, "base_url has no host name, e.g. https://relay.example")
	case strings.ContainsAny(e.BaseURL, "?#"):
		return invalid("base_url", CodeInvalidURL,
			"base_url must not have a query (?) or fragment (#); the request path is appended to it")
	case u.User != nil:
		// The URL is shown in the UI and logs; a key must live in api_key.
		return invalid("base_url", CodeInvalidURL,
			"base_url must not contain a user name or password; put the key in api_key")
	}
	return nil
}

func checkProtocol(e *Endpoint) *ValidationError {
	switch e.Protocol {
	case ProtocolAnthropic, ProtocolOpenAIChat, ProtocolOpenAIResponses:
		return nil
	case "":
		return invalid("protocol", CodeRequired, "protocol is required: %s, %s or %s",
			ProtocolAnthropic, ProtocolOpenAIChat, ProtocolOpenAIResponses)
	}
	return invalid("protocol", CodeInvalidProtocol, "protocol %q is not one of %s, %s, %s",
		e.Protocol, ProtocolAnthropic, ProtocolOpenAIChat, ProtocolOpenAIResponses)
}

func checkAuth(e *Endpoint) *ValidationError {
	switch e.Auth {
	case AuthAuto, AuthXAPIKey, AuthBearer:
		return nil
	}
	return invalid("auth", CodeInvalidAuth, "auth %q is not one of %s, %s, %s",
		e.Auth, AuthAuto, AuthXAPIKey, AuthBearer)
}

// checkAPIKey trims a pasted key's stray spaces and newlines and rejects
// other control characters, which could never be sent in a header.
func checkAPIKey(e *Endpoint) *ValidationError {
	e.APIKey = strings.TrimSpace(e.APIKey)
	if strings.ContainsFunc(e.APIKey, unicode.IsControl) {
		return invalid("api_key", CodeInvalidAPIKey, "api_key contains control characters; paste the key alone")
	}
	return nil
}

// checkModelPattern allows '*' as the only wildcard: path.Match also knows
// '?', '[...]' and '\', which model names never mean.
func checkModelPattern(p string) string {
	switch {
	case strings.TrimSpace(p) == "":
		return "is empty"
	case strings.ContainsAny(p, `?[]\`):
		return "may use only * as a wildcard"
	}
	if _, err := path.Match(p, ""); err != nil {
		return "is not a valid pattern"
	}
	return ""
}

func checkModels(e *Endpoint) *ValidationError {
	for i, p := range e.Models {
		if why := checkModelPattern(p); why != "" {
			return invalid("models", CodeInvalidModelPattern, "model pattern %d (%q) %s", i+1, p, why)
		}
	}
	return nil
}

func checkModelMap(e *Endpoint) *ValidationError {
	for from, to := range e.ModelMap {
		if why := checkModelPattern(from); why != "" {
			return invalid("model_map", CodeInvalidModelMap, "model_map key %q %s", from, why)
		}
		if strings.TrimSpace(to) == "" {
			return invalid("model_map", CodeInvalidModelMap, "model_map %q maps to an empty model name", from)
		}
	}
	return nil
}

// ValidateBreakerParams checks breaker parameters (an endpoint's overrides or
// a settings profile): thresholds at least 1, error rate in (0, 1],
// durations above 0. field prefixes the reported field, e.g.
// "breaker.claude" gives "breaker.claude.timeout_ms". A rejection is a
// *ValidationError with code invalid_breaker_override.
func ValidateBreakerParams(field string, p BreakerParams) error {
	if err := validateBreakerParams(field, p); err != nil {
		return err
	}
	return nil
}

func validateBreakerParams(field string, p BreakerParams) *ValidationError {
	bad := func(name, format string, args ...any) *ValidationError {
		return invalid(field+"."+name, CodeInvalidBreakerOverride, name+" "+format, args...)
	}
	ints := []struct {
		name string
		v    *int
	}{
		{"failure_threshold", p.FailureThreshold},
		{"success_threshold", p.SuccessThreshold},
		{"min_requests", p.MinRequests},
	}
	for _, c := range ints {
		if c.v != nil && *c.v < 1 {
			return bad(c.name, "must be at least 1, got %d", *c.v)
		}
	}
	durations := []struct {
		name string
		v    *int64
	}{
		{"timeout_ms", p.TimeoutMs},
		{"rate_limit_timeout_ms", p.RateLimitTimeoutMs},
		{"max_rate_limit_timeout_ms", p.MaxRateLimitTimeoutMs},
		{"quota_timeout_ms", p.QuotaTimeoutMs},
	}
	for _, c := range durations {
		if c.v != nil && *c.v <= 0 {
			return bad(c.name, "must be more than 0 milliseconds, got %d", *c.v)
		}
	}
	// Written as !(in range) so that NaN is rejected too.
	if r := p.ErrorRateThreshold; r != nil && !(*r > 0 && *r <= 1) {
		return bad("error_rate_threshold", "must be more than 0 and at most 1, got %v", *r)
	}
	return nil
}
