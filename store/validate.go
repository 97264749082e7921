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
	CodeRequired            = "required"
	CodeInvalidName         = "invalid_name"
	CodeDuplicateName       = "duplicate_name"
	CodeInvalidURL          = "invalid_url"
	CodeInvalidAPIKey       = "invalid_api_key"
	CodeInvalidModelPattern = "invalid_model_pattern"
	CodeInvalidModelMap     = "invalid_model_map"
	CodeUnknownID           = "unknown_id"
	CodeDuplicateID         = "duplicate_id"
	CodeNotPermutation      = "not_permutation"
)

var namePattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func invalid(field, code, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Code: code, Message: fmt.Sprintf(format, args...)}
}

// validateEndpoint checks what storing a complete endpoint (a create's
// input with defaults applied, or an update's result) relies on: the name,
// the URL, the key and the model patterns. Uniqueness is checked by the
// caller inside the write transaction. The app's fields (protocol, auth,
// breaker_overrides) are the admin API's to validate.
func validateEndpoint(e *Endpoint) *ValidationError {
	checks := []func(*Endpoint) *ValidationError{
		checkName, checkBaseURL, checkAPIKey, checkModels, checkModelMap,
	}
	for _, check := range checks {
		if err := check(e); err != nil {
			return err
		}
	}
	return nil
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
