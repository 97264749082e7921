package app

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// The admin API validates the words and parameters the store keeps without
// knowing them, here and once: an endpoint's protocol, auth mode and breaker
// overrides (create, update, import) and the settings (PUT, import). What
// storage relies on (names, URLs, keys, model patterns) the store checks.
// Rejections are 422 with a stable code the UI keys its messages on.

// Codes of the rejections made here; the store's are store.Code*.
const (
	codeInvalidProtocol = "invalid_protocol"
	codeInvalidAuth     = "invalid_auth"
	codeInvalidSetting  = "invalid_setting"
)

// rejected is a 422 reply for a bad field value.
func rejected(code, field, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusUnprocessableEntity, Code: code, Field: field,
		Message: fmt.Sprintf(format, args...)}
}

func invalid(field, format string, args ...any) *apiError {
	return rejected(codeInvalidSetting, field, format, args...)
}

// words lists vs for a message: "a, b, c", or "a, b or c" with last " or ".
func words[T ~string](vs []T, last string) string {
	var b strings.Builder
	for i, v := range vs {
		switch {
		case i == 0:
		case i == len(vs)-1:
			b.WriteString(last)
		default:
			b.WriteString(", ")
		}
		b.WriteString(string(v))
	}
	return b.String()
}

// validOverrides checks breaker parameters found at field of the input.
func validOverrides(field string, o breaker.Overrides) *apiError {
	err := o.Validate(field)
	if err == nil {
		return nil
	}
	var oe *breaker.OverrideError
	if !errors.As(err, &oe) { // not so today: Validate's rejections are all OverrideErrors
		return rejected(breaker.CodeInvalidOverride, field, "%v", err)
	}
	return rejected(oe.Code, oe.Field, "%s", oe.Message)
}

// validate checks the fields of an endpoint input that the app owns, in the
// order the admin API has always reported them. create says whether the
// input makes a new endpoint: its protocol is then required, and a left-out
// auth mode becomes the default (docs/BEHAVIOUR.md#endpoints).
func (in *endpointInput) validate(create bool) *apiError {
	switch {
	case in.Protocol != nil && in.Protocol.Valid():
	case in.Protocol == nil && !create:
	case in.Protocol == nil || *in.Protocol == "":
		return rejected(store.CodeRequired, "protocol", "protocol is required: %s", words(proxy.Protocols, " or "))
	default:
		return rejected(codeInvalidProtocol, "protocol", "protocol %q is not one of %s", *in.Protocol, words(proxy.Protocols, ", "))
	}
	if in.Auth == nil && create {
		auth := proxy.AuthModes[0]
		in.Auth = &auth
	}
	if in.Auth != nil && !in.Auth.Valid() {
		return rejected(codeInvalidAuth, "auth", "auth %q is not one of %s", *in.Auth, words(proxy.AuthModes, ", "))
	}
	if in.BreakerOverrides != nil {
		if err := validOverrides("breaker_overrides", *in.BreakerOverrides); err != nil {
			return err
		}
	}
	return nil
}

// validateImport validates an import's endpoints as the store will apply
// them, in order: one whose name exists updates it, any other is a create.
// existing names the endpoints stored now. A name given twice passes here
// as an update, for the store to refuse as a duplicate with both places.
func validateImport(eps []endpointInput, existing []store.Endpoint) *apiError {
	names := make(map[string]bool, len(existing)+len(eps))
	for _, e := range existing {
		names[e.Name] = true
	}
	for i := range eps {
		in := &eps[i]
		var name string
		if in.Name != nil {
			name = *in.Name
		}
		create := in.Name == nil || !names[name]
		if err := in.validate(create); err != nil {
			return &apiError{Status: err.Status, Code: err.Code, Field: fmt.Sprintf("endpoints[%d].%s", i, err.Field),
				Message: fmt.Sprintf("endpoint %d (%s): %s", i+1, name, err.Message)}
		}
		if in.Name != nil {
			names[name] = true
		}
	}
	return nil
}

// validateSettings checks a whole settings document (a PUT's merge, or an
// import's).
func validateSettings(s Settings) error {
	if s.Listen != "" {
		host, port, err := net.SplitHostPort(s.Listen)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return invalid("listen", "listen must be host:port, e.g. 127.0.0.1:3457, not %q", s.Listen)
		}
		if !ListenerIsLoopback(s.Listen) && s.ClientToken == "" {
			return invalid("listen", "a non-loopback address (%s) needs a client token: set client_token first", s.Listen)
		}
	}
	if !s.Strategy.Valid() {
		return invalid("strategy", "strategy must be %s, not %q", words(proxy.Strategies, " or "), s.Strategy)
	}
	switch s.Language {
	case "en", "zh-CN":
	default:
		return invalid("language", "language must be en or zh-CN, not %q", s.Language)
	}
	positive := []struct {
		field string
		v     int64
	}{
		{"first_byte_timeout_ms", s.FirstByteTimeoutMs},
		{"idle_timeout_ms", s.IdleTimeoutMs},
		{"max_body_bytes", s.MaxBodyBytes},
		{"log_retention_rows", int64(s.LogRetentionRows)},
		{"log_retention_days", int64(s.LogRetentionDays)},
	}
	for _, p := range positive {
		if p.v <= 0 {
			return invalid(p.field, "%s must be greater than 0", p.field)
		}
	}
	for _, p := range []struct {
		field string
		o     breaker.Overrides
	}{{"breaker.claude", s.Breaker.Claude}, {"breaker.openai", s.Breaker.OpenAI}} {
		if err := validOverrides(p.field, p.o); err != nil {
			return err
		}
	}
	return nil
}
