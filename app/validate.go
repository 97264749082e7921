package app

import (
	"errors"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ccmesh/ccmesh/app/apierr"
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
	codeInvalidMismatch = "invalid_on_model_mismatch"
	codeInvalidProxyURL = "invalid_proxy_url"
	codeInvalidSetting  = apierr.CodeInvalidSetting
	codeOutOfRange      = "out_of_range"
)

// numRange is the range of one number the admin API takes: the field's
// range tag, "min,max" or "min,max,the range in words"
// (docs/BEHAVIOUR.md#bad-input-and-faults). Every integer field of the
// admin API's inputs has one (TestRangesCoverEveryNumber), beside the
// field it bounds: settings here, endpoint orders and the price
// multiplier in the store, breaker parameters in breaker.Overrides. A
// float field's range has decimal ends.
type numRange struct {
	min, max   int64   // an integer field's
	fmin, fmax float64 // a float field's
	words      string  // the range as a person says it, or ""
}

// isFloat reports whether t, or what it points to, is a float.
func isFloat(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64
}

// rangeOf parses f's range tag; ok is false when it has none.
func rangeOf(f reflect.StructField) (r numRange, ok bool, err error) {
	tag, ok := f.Tag.Lookup("range")
	if !ok {
		return numRange{}, false, nil
	}
	parts := strings.SplitN(tag, ",", 3)
	if len(parts) < 2 {
		return numRange{}, true, fmt.Errorf("range tag of %s: %q is not min,max[,words]", f.Name, tag)
	}
	if isFloat(f.Type) {
		if r.fmin, err = strconv.ParseFloat(parts[0], 64); err == nil {
			r.fmax, err = strconv.ParseFloat(parts[1], 64)
		}
		if err != nil || !(r.fmin <= r.fmax) {
			return numRange{}, true, fmt.Errorf("range tag of %s: %q is not min,max[,words]", f.Name, tag)
		}
	} else {
		if r.min, err = strconv.ParseInt(parts[0], 10, 64); err == nil {
			r.max, err = strconv.ParseInt(parts[1], 10, 64)
		}
		if err != nil || r.min > r.max {
			return numRange{}, true, fmt.Errorf("range tag of %s: %q is not min,max[,words]", f.Name, tag)
		}
	}
	if len(parts) == 3 {
		r.words = parts[2]
	}
	return r, true, nil
}

// checkRanges checks each number field that v, a struct, sets (a nil
// pointer sets nothing) against its range tag, in field order. A rejection has
// code and the field prefix + its JSON name. Every integer field of the
// admin API's inputs has a range (TestRangesCoverEveryNumber); a float
// field is checked when it has one.
func checkRanges(code, prefix string, v any) *apiError {
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		f, fv := rv.Type().Field(i), rv.Field(i)
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				continue
			}
			fv = fv.Elem()
		}
		if !fv.CanInt() && !fv.CanFloat() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		r, ok, err := rangeOf(f)
		if err != nil {
			panic(err) // a tag written wrong; TestRangesCoverEveryNumber reads them all
		}
		if !ok {
			continue
		}
		words := ""
		if r.words != "" {
			words = " (" + r.words + ")"
		}
		if fv.CanFloat() {
			// Written so that NaN fails too (JSON has none, but a Go caller might).
			if x := fv.Float(); !(x >= r.fmin && x <= r.fmax) {
				return rejected(code, prefix+name, "%s must be from %g to %g%s, got %g", name, r.fmin, r.fmax, words, x)
			}
			continue
		}
		if n := fv.Int(); n < r.min || n > r.max {
			return rejected(code, prefix+name, "%s must be from %d to %d%s, got %d", name, r.min, r.max, words, n)
		}
	}
	return nil
}

// rejected is a 422 reply for a bad field value (apierr.Rejected).
func rejected(code, field, format string, args ...any) *apiError {
	return (*apiError)(apierr.Rejected(code, field, format, args...))
}

// invalid is a 422 reply for a bad setting (apierr.Invalid).
func invalid(field, format string, args ...any) *apiError {
	return (*apiError)(apierr.Invalid(field, format, args...))
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
		return checkRanges(breaker.CodeInvalidOverride, field+".", o)
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
	if err := checkRanges(codeOutOfRange, "", in.EndpointPatch); err != nil {
		return err
	}
	if in.BreakerOverrides != nil {
		if err := validOverrides("breaker_overrides", *in.BreakerOverrides); err != nil {
			return err
		}
	}
	if in.OnModelMismatch != nil && *in.OnModelMismatch != "" && !in.OnModelMismatch.Valid() {
		return rejected(codeInvalidMismatch, "on_model_mismatch", "on_model_mismatch %q is not one of %s", *in.OnModelMismatch, words(proxy.MismatchModes, ", "))
	}
	if in.Drops != nil {
		if err := validDrops(*in.Drops, time.Now()); err != nil {
			return err
		}
	}
	if in.BaseURL != nil {
		if err := in.checkBalance(*in.BaseURL); err != nil {
			return err
		}
	}
	if in.ProxyURL != nil {
		v := strings.TrimSpace(*in.ProxyURL)
		in.ProxyURL = &v
		if v != "" {
			if _, err := proxy.ParseProxyURL(v); err != nil {
				// The message never quotes the URL: it may hold a password.
				return rejected(codeInvalidProxyURL, "proxy_url", "%s (or leave it empty to connect directly)", err.Error())
			}
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

// Bounds of a client token's length (docs/BEHAVIOUR.md#safety).
const (
	minClientToken = 16
	maxClientToken = 256
)

// validClientToken checks a client token's form: 16 to 256 printable ASCII
// characters without spaces or quotes, which headers, shells and config
// files carry unchanged. Messages never quote the token.
func validClientToken(tok string) *apiError {
	bad := strings.IndexFunc(tok, func(r rune) bool {
		return r <= ' ' || r > '~' || r == '"' || r == '\'' || r == '`'
	})
	switch {
	case bad >= 0:
		return invalid("client_token", "client_token may hold only printable ASCII characters without spaces or quotes "+
			"(\", ', `); character %d is not one", utf8.RuneCountInString(tok[:bad])+1)
	case len(tok) < minClientToken || len(tok) > maxClientToken:
		return invalid("client_token", "client_token must be %d to %d characters long, not %d", minClientToken, maxClientToken, len(tok))
	}
	return nil
}

// validateSettings checks a whole settings document (a PUT's merge, or an
// import's). bound is the address ccmesh listens on now (the listen
// setting applies only at the next start).
func validateSettings(s Settings, bound string) error {
	if s.Listen != "" {
		host, port, err := net.SplitHostPort(s.Listen)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return invalid("listen", "listen must be host:port, e.g. 127.0.0.1:3457, not %q", s.Listen)
		}
		if !ListenerIsLoopback(s.Listen) && s.ClientToken == "" {
			return invalid("listen", "a non-loopback address (%s) needs a client token: set client_token first", s.Listen)
		}
	}
	if s.ClientToken != "" {
		if err := validClientToken(s.ClientToken); err != nil {
			return err
		}
	} else if bound != "" && !ListenerIsLoopback(bound) {
		return invalid("client_token", "client_token cannot be cleared while ccmesh listens on %s, which is not a loopback "+
			"address: anyone who reaches it could use your endpoints' keys. Restart ccmesh on 127.0.0.1 (the listen "+
			"setting, or --listen) first", bound)
	}
	if !s.Strategy.Valid() {
		return invalid("strategy", "strategy must be %s, not %q", words(proxy.Strategies, " or "), s.Strategy)
	}
	switch s.Language {
	case "en", "zh-CN":
	default:
		return invalid("language", "language must be en or zh-CN, not %q", s.Language)
	}
	if !s.Capture.Valid() {
		return invalid("capture", "capture must be %s, not %q", words(proxy.CaptureModes, " or "), s.Capture)
	}
	if err := checkRanges(codeInvalidSetting, "", s); err != nil {
		return err
	}
	if err := validUpdateFeed(s.UpdateFeedURL); err != nil {
		return err
	}
	for _, p := range []struct {
		field string
		o     breaker.Overrides
	}{{"breaker.claude", s.Breaker.Claude}, {"breaker.openai", s.Breaker.OpenAI}} {
		if err := validOverrides(p.field, p.o); err != nil {
			return err
		}
	}
	if err := validPriceRows("prices", s.Prices); err != nil {
		return err
	}
	return nil
}
