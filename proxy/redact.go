package proxy

import "bytes"

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
