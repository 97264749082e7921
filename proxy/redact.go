package proxy

import (
	"bytes"
	"net/url"
	"slices"
	"strings"
)

// MaskKey shows enough of a secret to recognise it and never enough to use
// it: nothing of one under 8 characters, the last 4 of one under 20, and
// the first 3 and last 4 of a longer one ("sk-…a1b2").
func MaskKey(k string) string {
	switch n := len(k); {
	case n == 0:
		return ""
	case n < 8:
		return "…"
	case n < 20:
		return "…" + k[n-4:]
	}
	return k[:3] + "…" + k[len(k)-4:]
}

// minSecretLen: shorter values are not searched for in upstream text; they
// would match ordinary words, and a key that short protects nothing.
const minSecretLen = 8

// redact returns b with every occurrence of each secret replaced by its
// mask, and whether anything was replaced; b itself is never modified.
// Upstreams echo keys in errors ("Invalid API key provided: sk-…"), and
// that text is shown to the client, logged and stored.
func redact(b []byte, secrets ...string) ([]byte, bool) {
	changed := false
	for _, s := range secrets {
		if len(s) < minSecretLen || !bytes.Contains(b, []byte(s)) {
			continue
		}
		b = bytes.ReplaceAll(b, []byte(s), []byte(MaskKey(s)))
		changed = true
	}
	return b, changed
}

// redact masks, in upstream text of an attempt on e, what must never leave
// ccmesh: the endpoint's key and the client token.
func (q *request) redact(e *endpoint, b []byte) ([]byte, bool) {
	return redact(b, e.APIKey, q.snap.cfg.ClientToken)
}

// Redact is redact for text the admin side shows (Test results, health's
// last error): every secret of at least 8 characters is replaced by its
// mask.
func Redact(s string, secrets ...string) string {
	b, changed := redact([]byte(s), secrets...)
	if !changed {
		return s
	}
	return string(b)
}

// secretParams are query parameters that carry credentials, as
// secretHeaders are headers: whatever they hold, they are never stored.
// Names compare in lower case with '-' read as '_'; secretParam also takes
// any name ending in one of secretParamSuffixes (x-goog-api-key,
// refresh_token, client_secret).
var (
	secretParams = []string{"key", "apikey", "api_key", "token", "access_token", "auth", "authorization",
		"secret", "password", "passwd", "pwd", "sig", "signature", "session", "sessionid", "ccmesh_admin"}
	secretParamSuffixes = []string{"_key", "_token", "_secret", "_password"}
)

func secretParam(name string) bool {
	n := strings.ReplaceAll(strings.ToLower(name), "-", "_")
	if slices.Contains(secretParams, n) {
		return true
	}
	for _, suf := range secretParamSuffixes {
		if strings.HasSuffix(n, suf) {
			return true
		}
	}
	return false
}

// RedactQuery is a raw query string as it may be stored and sent again
// (docs/BEHAVIOUR.md#capture-and-resend): the parameters named like
// credentials (secretParam) left out, as credential headers are, and
// each secret masked in the others. Every other byte stays as it came.
func RedactQuery(raw string, secrets ...string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	out := parts[:0]
	for _, p := range parts {
		name, val, hasVal := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); secretParam(name) || err == nil && secretParam(n) {
			continue
		}
		p = redactQueryPart(name, secrets)
		if hasVal {
			p += "=" + redactQueryPart(val, secrets)
		}
		out = append(out, p)
	}
	return strings.Join(out, "&")
}

// redactQueryPart masks the secrets in one escaped name or value: looked
// for in its decoded text, which is escaped again only when it changed.
func redactQueryPart(s string, secrets []string) string {
	dec, err := url.QueryUnescape(s)
	if err != nil {
		return Redact(s, secrets...)
	}
	if red := Redact(dec, secrets...); red != dec {
		return url.QueryEscape(red)
	}
	return s
}

// redactURL is a URL header's value (Referer, Location) with its query
// redacted as RedactQuery does; a value that is no URL is left to the
// header's own masking.
func redactURL(v string, secrets []string) string {
	u, err := url.Parse(v)
	if err != nil || u.RawQuery == "" {
		return v
	}
	u.RawQuery = RedactQuery(u.RawQuery, secrets...)
	u.ForceQuery = false
	return u.String()
}

// isURL reports whether a header value is an absolute http(s) URL.
func isURL(v string) bool {
	return len(v) > 8 && (strings.EqualFold(v[:7], "http://") || strings.EqualFold(v[:8], "https://"))
}
