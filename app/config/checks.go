package config

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/ccmesh/ccmesh/app/apierr"
	"github.com/ccmesh/ccmesh/breaker"
)

// Checks shared by the settings (the app's validateSettings) and the
// endpoint input (endpoint.go), and the words their messages list.

// Words lists vs for a message: "a, b, c", or "a, b or c" with last " or ".
func Words[T ~string](vs []T, last string) string {
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

// ValidOverrides checks breaker parameters found at field of the input.
func ValidOverrides(field string, o breaker.Overrides) *apierr.Error {
	err := o.Validate(field)
	if err == nil {
		return CheckRanges(breaker.CodeInvalidOverride, field+".", o)
	}
	var oe *breaker.OverrideError
	if !errors.As(err, &oe) { // not so today: Validate's rejections are all OverrideErrors
		return apierr.Rejected(breaker.CodeInvalidOverride, field, "%v", err)
	}
	return apierr.Rejected(oe.Code, oe.Field, "%s", oe.Message)
}

// Bounds of a client token's length (docs/BEHAVIOUR.md#safety).
const (
	minClientToken = 16
	maxClientToken = 256
)

// ValidClientToken checks a client token's form: 16 to 256 printable ASCII
// characters without spaces or quotes, which headers, shells and config
// files carry unchanged. Messages never quote the token.
func ValidClientToken(tok string) *apierr.Error {
	bad := strings.IndexFunc(tok, func(r rune) bool {
		return r <= ' ' || r > '~' || r == '"' || r == '\'' || r == '`'
	})
	switch {
	case bad >= 0:
		return apierr.Invalid("client_token", "client_token may hold only printable ASCII characters without spaces or quotes "+
			"(\", ', `); character %d is not one", utf8.RuneCountInString(tok[:bad])+1)
	case len(tok) < minClientToken || len(tok) > maxClientToken:
		return apierr.Invalid("client_token", "client_token must be %d to %d characters long, not %d", minClientToken, maxClientToken, len(tok))
	}
	return nil
}
