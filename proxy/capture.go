package proxy

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/translate"
)

// Request capture (docs/BEHAVIOUR.md#capture-and-resend). On the request
// path the proxy only keeps what it already has: the client's headers and
// body (read once anyway), and a bounded copy of what it writes to the
// client. Removing secrets, compressing and storing happen later, off the
// request path, on the log writer's side (Capture.Redact).

// CaptureMode says which requests keep a capture (the capture setting).
type CaptureMode string

const (
	CaptureOff    CaptureMode = "off"    // nothing is captured
	CaptureErrors CaptureMode = "errors" // failed requests, and those with a failed attempt
	CaptureAll    CaptureMode = "all"    // every request
)

// CaptureModes lists every CaptureMode, in the order the UI offers them.
var CaptureModes = []CaptureMode{CaptureOff, CaptureErrors, CaptureAll}

// Valid reports whether m is one of CaptureModes.
func (m CaptureMode) Valid() bool { return slices.Contains(CaptureModes, m) }

// on reports whether requests are teed at all ("" is off).
func (m CaptureMode) on() bool { return m == CaptureErrors || m == CaptureAll }

// DefaultCaptureBody caps each captured body, before compression; more is
// cut and marked truncated.
const DefaultCaptureBody = 1 << 20

// Capture is what one client sent and got, as the proxy saw it. The proxy
// fills it raw; whoever stores it calls Redact first, off the request
// path. RequestBody may share memory with the request's body: it is only
// ever read.
type Capture struct {
	Method           string
	Query            string // the inbound query string, as sent
	RequestHeader    http.Header
	RequestBody      []byte
	RequestTruncated bool
	// Status is the status the client got (the record's when nothing was
	// written: 499 for a client that left).
	Status            int
	ResponseHeader    http.Header // as sent with the status; nil when nothing was
	ResponseBody      []byte      // the bytes written to the client: a stream's raw SSE
	ResponseTruncated bool

	secrets []string // the snapshot's endpoint keys and client token
	limit   int      // the body cap it was taken with
}

// Size is the memory the capture holds.
func (c *Capture) Size() int { return len(c.RequestBody) + len(c.ResponseBody) + 1024 }

// secretHeaders never reach storage, whatever they hold.
var secretHeaders = []string{"X-Api-Key", "Authorization", "Cookie", "Set-Cookie", "Proxy-Authorization"}

// Redact removes, in place, what must never be stored
// (docs/BEHAVIOUR.md#capture-and-resend): the credential headers and
// query parameters, and every endpoint key, the client token, the
// client's own credential and extra (the admin token, which the proxy
// does not know), wherever else they occur in the query, headers or
// bodies, are masked as MaskKey shows them. A body cut at the cap is also
// cleared of a secret's first characters left at its end. A response body
// the client got compressed is decoded first (and its Content-Encoding
// left out), so that it can be searched and read. Call it once, off the
// request path.
func (c *Capture) Redact(extra ...string) {
	secrets := slices.Concat(c.secrets, extra)
	for _, v := range c.RequestHeader.Values("X-Api-Key") {
		secrets = append(secrets, strings.TrimSpace(v))
	}
	if b := BearerToken(c.RequestHeader); b != "" {
		secrets = append(secrets, b)
	}
	// Longest first: a secret that contains another is masked whole.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	secrets = slices.Compact(secrets)

	if ce := c.ResponseHeader.Get("Content-Encoding"); ce != "" && len(c.ResponseBody) > 0 {
		limit := c.limit // the capture_body_bytes setting holds for the decoded body too
		if limit <= 0 {
			limit = DefaultCaptureBody
		}
		if dec := decodeBody(ce, c.ResponseBody, int64(limit)+1); !bytes.Equal(dec, c.ResponseBody) {
			if len(dec) > limit {
				dec, c.ResponseTruncated = dec[:limit], true
			}
			c.ResponseBody = dec
			c.ResponseHeader.Del("Content-Encoding")
			c.ResponseHeader.Del("Content-Length")
		}
	}
	c.Query = RedactQuery(c.Query, secrets...)
	c.RequestHeader = redactHeader(c.RequestHeader, secrets)
	c.ResponseHeader = redactHeader(c.ResponseHeader, secrets)
	c.RequestBody = redactBody(c.RequestBody, c.RequestTruncated, secrets)
	c.ResponseBody = redactBody(c.ResponseBody, c.ResponseTruncated, secrets)
}

func redactHeader(h http.Header, secrets []string) http.Header {
	if h == nil {
		return nil
	}
	h = h.Clone()
	for _, k := range secretHeaders {
		h.Del(k)
	}
	for _, s := range translate.Specs {
		if s.KeyHeader != "" {
			h.Del(s.KeyHeader) // every protocol's key header: a Gemini client's x-goog-api-key, …
		}
	}
	for _, vv := range h {
		for i, v := range vv {
			// A URL's query may carry a credential (a page's /ui/?token=…
			// in a Referer, an upstream's Location): redacted as the
			// request's own query is.
			if isURL(v) {
				v = redactURL(v, secrets)
			}
			vv[i] = Redact(v, secrets...)
		}
	}
	return h
}

// redactBody masks the secrets in b, never writing into b itself (it may
// be the request's own body); cut: b ends where the cap cut it.
func redactBody(b []byte, cut bool, secrets []string) []byte {
	b, _ = redact(b, secrets...)
	if !cut {
		return b
	}
	for _, s := range secrets {
		if len(s) < minSecretLen {
			continue
		}
		// A prefix of 4 or more characters is taken for the secret's
		// beginning; MaskKey shows the first 3 anyway.
		for k := len(s) - 1; k >= 4; k-- {
			if bytes.HasSuffix(b, []byte(s[:k])) {
				b = append(b[:len(b)-k:len(b)-k], "…"...)
				break
			}
		}
	}
	return b
}

// captureWriter tees what the proxy writes to the client into a buffer
// of at most limit bytes; the rest is only counted as truncated.
type captureWriter struct {
	http.ResponseWriter
	limit     int
	status    int
	header    http.Header
	body      []byte
	truncated bool
}

func (c *captureWriter) WriteHeader(code int) {
	if c.status == 0 && code >= 200 {
		c.status = code
		c.header = c.ResponseWriter.Header().Clone()
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	n, err := c.ResponseWriter.Write(p)
	if room := c.limit - len(c.body); room > 0 {
		c.body = append(c.body, p[:min(n, room)]...)
		c.truncated = c.truncated || n > room
	} else if n > 0 {
		c.truncated = true
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (flushes).
func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// capture is the request's Capture, or nil when the mode keeps only
// failed requests and this one did not fail. q is nil when the request
// was answered before its body was read.
func (c *captureWriter) capture(r *http.Request, q *request, rec *Record, mode CaptureMode, secrets []string) *Capture {
	if mode == CaptureErrors && !failed(rec) {
		return nil
	}
	out := &Capture{
		Method:            r.Method,
		Query:             r.URL.RawQuery,
		RequestHeader:     r.Header.Clone(),
		Status:            c.status,
		ResponseHeader:    c.header,
		ResponseBody:      c.body,
		ResponseTruncated: c.truncated,
		secrets:           secrets,
		limit:             c.limit,
	}
	if out.Status == 0 {
		out.Status = rec.Status
	}
	switch {
	case q != nil && len(q.body) > c.limit:
		// A copy: holding a slice of it would keep the whole body alive.
		out.RequestBody, out.RequestTruncated = bytes.Clone(q.body[:c.limit]), true
	case q != nil && q.body != nil:
		out.RequestBody = q.body
	case rec.Status == http.StatusRequestEntityTooLarge:
		out.RequestTruncated = true // refused unread: over max_body_bytes
	}
	return out
}

// failed is the errors mode's test: the client got a status ≥ 400 or a
// stream that did not end complete, or an attempt failed on the way (one
// the loop moved on from, or one the breaker counted as a failure).
func failed(rec *Record) bool {
	if rec.Status >= 400 || (rec.StreamEnd != "" && rec.StreamEnd != StreamComplete) {
		return true
	}
	for i, a := range rec.Attempts {
		if i < len(rec.Attempts)-1 || a.Outcome == breaker.Failure {
			return true
		}
	}
	return false
}

// captureSecrets lists what a capture of cfg's requests must mask: every
// endpoint's key, every key of every pool, and the client token.
func captureSecrets(cfg *Config) []string {
	var out []string
	for _, e := range cfg.Endpoints {
		if e.APIKey != "" {
			out = append(out, e.APIKey)
		}
		if p := ProxyPassword(e.ProxyURL); p != "" {
			out = append(out, p)
		}
		for _, k := range e.Keys {
			if k.Secret != "" && k.Secret != e.APIKey {
				out = append(out, k.Secret)
			}
		}
	}
	if cfg.ClientToken != "" {
		out = append(out, cfg.ClientToken)
	}
	return out
}

// internalKey is the context key of Internal's mark.
type internalKey struct{}

type internalMark struct{ tag any }

// Internal marks a request as ccmesh's own: a resend from the admin API,
// whose caller already passed the admin token
// (docs/BEHAVIOUR.md#capture-and-resend). Such a request passes the
// client-token check, its x-ccmesh-resent-from header is believed (from
// anyone else it is ignored), and tag is put on its Record so that the
// caller can tell its record from others in the sink. A remote client
// cannot set a context value: only code in this process marks a request.
func Internal(ctx context.Context, tag any) context.Context {
	return context.WithValue(ctx, internalKey{}, internalMark{tag: tag})
}

func internalOf(ctx context.Context) (internalMark, bool) {
	m, ok := ctx.Value(internalKey{}).(internalMark)
	return m, ok
}

// ResentFromHeader names the log row an internal request resends.
const ResentFromHeader = "X-Ccmesh-Resent-From"

func resentFrom(h http.Header) int64 {
	id, err := strconv.ParseInt(h.Get(ResentFromHeader), 10, 64)
	if err != nil || id < 0 {
		return 0
	}
	return id
}
