package store

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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
	CodeInvalidTag          = "invalid_tag"
	CodeUnknownID           = "unknown_id"
	CodeDuplicateID         = "duplicate_id"
	CodeNotPermutation      = "not_permutation"
)

var namePattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// tagPattern is an endpoint tag (docs/BEHAVIOUR.md#routing-rules): short,
// and with no character that would need quoting in tag:<tag>.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,32}$`)

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
		checkName, checkBaseURL, checkAPIKey, checkModels, checkModelMap, checkTags,
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
	if e.Name == "." || e.Name == ".." {
		// They read as path segments: @../model is no endpoint name.
		return invalid("name", CodeInvalidName,
			"name %q cannot be used: . and .. read as paths in @name/model; add a letter or digit", e.Name)
	}
	return nil
}

// checkBaseURL also normalises: surrounding spaces and trailing slashes go,
// so that appending "/v1/messages" never makes "//". Messages never quote
// the URL: a pasted one may carry a key in its query or user info, and
// errors end up in logs.
func checkBaseURL(e *Endpoint) *ValidationError {
	// Spaces and slashes in any mix, so that normalising twice changes
	// nothing more ("https://a/ /" is "https://a" at once).
	e.BaseURL = strings.TrimRightFunc(strings.TrimSpace(e.BaseURL), func(r rune) bool {
		return r == '/' || unicode.IsSpace(r)
	})
	if e.BaseURL == "" {
		return invalid("base_url", CodeRequired, "base_url is required, e.g. https://api.anthropic.com")
	}
	msg := map[URLFault]string{
		URLNotUTF8:   "base_url is not valid UTF-8 text; type or paste it again",
		URLMalformed: "base_url is not a valid URL, e.g. https://relay.example/api",
		URLBadPort:   "base_url's port must be a number from 1 to 65535",
		URLNotHTTP:   "base_url must start with http:// or https://",
		URLNoHost:    "base_url has no host name, e.g. https://relay.example",
		URLQuery:     "base_url must not have a query (?) or fragment (#); the request path is appended to it",
		// The URL is shown in the UI and logs; a key must live in api_key.
		URLUserInfo: "base_url must not contain a user name or password; put the key in api_key",
	}
	if f := CheckHTTPURL(e.BaseURL); f != URLOK {
		return invalid("base_url", CodeInvalidURL, "%s", msg[f])
	}
	return nil
}

// URLFault is what CheckHTTPURL found wrong with an address; each field
// words it its own way.
type URLFault int

// The faults of an http(s) address, in the order CheckHTTPURL looks.
const (
	URLOK        URLFault = iota
	URLNotUTF8            // not UTF-8 text
	URLMalformed          // not a URL
	URLBadPort            // a port that is no number from 1 to 65535
	URLNotHTTP            // a scheme other than http and https
	URLNoHost             // no host name
	URLQuery              // a ? or # anywhere
	URLUserInfo           // a user name or password in it
)

// CheckHTTPURL is base_url's rule for an http:// or https:// address
// without query, fragment or credentials, for any field that holds one
// (the sync folder's URL too). s is not empty.
func CheckHTTPURL(s string) URLFault {
	if !utf8.ValidString(s) {
		return URLNotUTF8
	}
	u, err := url.Parse(s)
	if err != nil {
		if strings.Contains(err.Error(), "invalid port") {
			return URLBadPort
		}
		return URLMalformed
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return URLBadPort
		}
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return URLNotHTTP
	case u.Hostname() == "":
		return URLNoHost
	case strings.ContainsAny(s, "?#"):
		return URLQuery
	case u.User != nil:
		return URLUserInfo
	}
	return URLOK
}

// checkAPIKey trims a pasted key's stray spaces and newlines and rejects
// other control characters, which could never be sent in a header, and
// text that is not UTF-8 or holds U+FFFD, the mark of bytes lost on the way.
func checkAPIKey(e *Endpoint) *ValidationError {
	e.APIKey = strings.TrimSpace(e.APIKey)
	if strings.ContainsFunc(e.APIKey, unicode.IsControl) {
		return invalid("api_key", CodeInvalidAPIKey, "api_key contains control characters; paste the key alone")
	}
	if !utf8.ValidString(e.APIKey) || strings.ContainsRune(e.APIKey, utf8.RuneError) {
		return invalid("api_key", CodeInvalidAPIKey, "api_key is not valid UTF-8 text (it was damaged when copied); paste the key again")
	}
	return nil
}

// CheckModelPattern says what is wrong with model pattern p, or "" when it
// is one: the same rule as an endpoint's models and model_map keys, for the
// app's other patterns (docs/BEHAVIOUR.md#cost).
func CheckModelPattern(p string) string { return checkModelPattern(p) }

// checkModelPattern allows '*' as the only wildcard: path.Match also knows
// '?', '[...]' and '\', which model names never mean.
func checkModelPattern(p string) string {
	switch {
	case !utf8.ValidString(p):
		return "is not valid UTF-8 text"
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

func checkTags(e *Endpoint) *ValidationError {
	seen := make(map[string]bool, len(e.Tags))
	for i, t := range e.Tags {
		field := fmt.Sprintf("tags[%d]", i)
		if !tagPattern.MatchString(t) {
			return invalid(field, CodeInvalidTag, "tag %q must be 1 to 32 characters of letters, digits, '.', '_' or '-'", t)
		}
		if seen[t] {
			return invalid(field, CodeInvalidTag, "tag %q is given twice", t)
		}
		seen[t] = true
	}
	return nil
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
		if !utf8.ValidString(to) {
			return invalid("model_map", CodeInvalidModelMap, "model_map %q maps to a name that is not valid UTF-8 text", from)
		}
	}
	return nil
}
