// Package probe is the admin side's own calls to an upstream
// (docs/BEHAVIOUR.md#health): the Test probe, the model list with its
// pages, and the last Test of each endpoint and key. It reaches an
// endpoint the way the proxy does, through the port Host, and never
// follows a redirect with the endpoint's key.
package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/store"
)

// Host is the app as the probe needs it.
type Host interface {
	// Upstream is e as the proxy sends to it: its URL rules and auth.
	Upstream(e store.Endpoint) proxy.Endpoint
	// Transport reaches e the way the proxy's requests do
	// (docs/BEHAVIOUR.md#upstream-proxy).
	Transport(e store.Endpoint) http.RoundTripper
	// ClientToken is ccmesh's client token, masked wherever an upstream
	// echoes it.
	ClientToken() string
}

// Result is the outcome of the Test action (docs/BEHAVIOUR.md#health).
type Result struct {
	OK        bool      `json:"ok"`
	Status    int       `json:"status"`
	LatencyMs int64     `json:"latency_ms"`
	Message   string    `json:"message"`
	At        time.Time `json:"at"`
}

// Timeout bounds one admin action's calls to an upstream.
const Timeout = 20 * time.Second

// client carries the admin side's upstream calls. It never follows a
// redirect: the request holds the endpoint's key, which must not go to the
// host a Location names (docs/BEHAVIOUR.md#safety); a 3xx is the answer.
func client(h Host, e store.Endpoint) *http.Client {
	return &http.Client{
		Transport:     h.Transport(e),
		Timeout:       Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// reply is what call returns of an upstream's answer.
type reply struct {
	status   int
	location string // of a 3xx
	body     []byte // at most 1 MiB
}

// call sends one request to endpoint e the way the proxy would (URL rules,
// auth injection) and returns its answer.
func call(ctx context.Context, h Host, e store.Endpoint, method, path string, query url.Values, body []byte) (reply, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := proxy.NewUpstreamRequest(ctx, h.Upstream(e), method, path, rd)
	if err != nil {
		return reply{}, err
	}
	req.URL.RawQuery = query.Encode()
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client(h, e).Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	if err := proxy.ProxyAnswered(e.ProxyURL, resp.StatusCode); err != nil {
		return reply{}, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return reply{status: resp.StatusCode, location: resp.Header.Get("Location"), body: b}, err
}

// redirected says a 3xx was not followed, naming where it pointed.
func (r reply) redirected() (string, bool) {
	if r.status < 300 || r.status > 399 {
		return "", false
	}
	where := "elsewhere"
	if u, err := url.Parse(r.location); err == nil && u.Host != "" {
		where = "to " + u.Scheme + "://" + u.Host
	} else if r.location != "" {
		where = "to another path on the same host"
	}
	return fmt.Sprintf("the endpoint answered %d, a redirect %s; ccmesh does not follow redirects with your key: set base_url to the address that answers", r.status, where), true
}

// redact masks e's key and the client token in text an upstream may have
// echoed them in, before the admin side shows or stores it.
func redact(h Host, e store.Endpoint, text string) string {
	secrets := []string{e.APIKey, proxy.ProxyPassword(e.ProxyURL), h.ClientToken()}
	for _, k := range e.Keys {
		secrets = append(secrets, k.Key)
	}
	return proxy.Redact(text, secrets...)
}

// Test sends GET /v1/models to e, or a 1-token message where the upstream
// does not serve the model list, and says how it went, with upstream text
// masked (docs/BEHAVIOUR.md#health). Keeping the result is the caller's.
func Test(ctx context.Context, h Host, e store.Endpoint) Result {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	start := time.Now()
	rep, err := call(ctx, h, e, http.MethodGet, specOf(e).Models(), nil, nil)
	if err == nil && (rep.status == http.StatusNotFound || rep.status == http.StatusMethodNotAllowed) {
		path, msg := minimalRequest(e)
		start = time.Now()
		rep, err = call(ctx, h, e, http.MethodPost, path, nil, msg)
	}
	res := Result{At: start, LatencyMs: time.Since(start).Milliseconds(), Status: rep.status}
	redirect, isRedirect := rep.redirected()
	switch {
	case errors.As(err, new(*proxy.ProxyError)):
		res.Message = proxyFailure(err)
	case err != nil:
		res.Message = "could not reach the endpoint: " + err.Error()
	case isRedirect:
		res.Message = redirect
	case rep.status >= 200 && rep.status < 300:
		res.OK = true
		res.Message = "ok"
	default:
		res.Message = fmt.Sprintf("the endpoint answered %d: %s", rep.status, Head(rep.body, 300))
	}
	res.Message = redact(h, e, res.Message)
	return res
}

// WithKey is e sending only key kid of its pool, as Test's ?key=<id> asks;
// false when the pool holds no such key.
func WithKey(e store.Endpoint, kid int64) (store.Endpoint, bool) {
	for _, k := range e.Keys {
		if k.ID == kid {
			e.APIKey, e.Keys = k.Key, []store.EndpointKey{k}
			return e, true
		}
	}
	return e, false
}

// proxyFailure says that e's proxy, not e, failed.
func proxyFailure(err error) string {
	var pe *proxy.ProxyError
	errors.As(err, &pe)
	return pe.Error()
}

// minimalRequest is the Test probe's path and body in e's protocol
// (conv.Spec.Probe): its first model without a '*', or the protocol's own.
func minimalRequest(e store.Endpoint) (string, []byte) {
	spec := specOf(e)
	model := spec.ProbeModel
	for _, m := range e.Models {
		if !strings.Contains(m, "*") {
			model = m
			break
		}
	}
	return spec.Probe(model)
}

// specOf is e's protocol's entry in the table. One the table does not
// know gets the first protocol's, never used: call refuses such an
// endpoint before anything is sent.
func specOf(e store.Endpoint) *conv.Spec {
	if s := proxy.Protocol(e.Protocol).Spec(); s != nil {
		return s
	}
	return proxy.Protocols[0].Spec()
}

// Head is at most n bytes of a text a message quotes (an upstream's
// answer), cut on a character boundary (proxy.Head), marked when cut.
func Head(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	s := proxy.Head(b, n)
	if len(s) < len(b) {
		s += "…"
	}
	return s
}
