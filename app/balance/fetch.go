package balance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Limits of one read (docs/BEHAVIOUR.md#balance).
const (
	Timeout  = 5 * time.Second
	MaxBytes = 64 << 10
)

// Target is the endpoint a connector reads for.
type Target struct {
	BaseURL string
	APIKey  string
}

// origin is the scheme and host of the target's base URL.
func (t Target) origin() string {
	u, err := url.Parse(t.BaseURL)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// Reader reads balances through one transport. The zero Reader uses
// http.DefaultTransport.
type Reader struct {
	Transport http.RoundTripper
	// Now is the clock readings are dated with; nil is time.Now.
	Now func() time.Time
}

func (rd Reader) now() time.Time {
	if rd.Now != nil {
		return rd.Now()
	}
	return time.Now()
}

// Read reads t's balance with c; a failure is an unknown Reading that says
// why, never an error and never 0.
func (rd Reader) Read(ctx context.Context, c Connector, t Target) Reading {
	var r Reading
	if c.Template != "" {
		tpl, ok := Lookup(c.Template)
		if !ok {
			return failed(rd.now(), 0, "no template %q", c.Template)
		}
		r = tpl.read(ctx, rd, t)
		if r.Error == "" && r.Template == "" {
			r.Template = tpl.Name
		}
	} else {
		r = rd.custom(ctx, c, t)
	}
	r.At = rd.now()
	if r.Error == "" {
		r.complete()
		if !r.Known() {
			r = failed(r.At, 0, "the answer gave neither remaining nor used and total")
		}
	}
	return r
}

// call is one request of a read.
type call struct {
	method string
	url    string
	header http.Header
	body   string
	// otherHost: the user confirmed a host other than the target's.
	otherHost bool
}

// answer is a successful (2xx) answer's JSON, decoded with numbers kept
// as json.Number.
type answer struct {
	doc    any
	status int
}

// fail is why a call gave no answer; status is the HTTP status when there
// was one.
type fail struct {
	status int
	msg    string
}

func (f *fail) Error() string { return f.msg }

// do sends cl and decodes a JSON answer. The key goes only to the target's
// origin unless the user confirmed another; redirects are not followed;
// Timeout and MaxBytes bound the read.
func (rd Reader) do(ctx context.Context, t Target, cl call) (answer, error) {
	u, err := url.Parse(cl.url)
	if err != nil {
		return answer{}, &fail{msg: fmt.Sprintf("bad URL: %v", err)}
	}
	if !cl.otherHost && !sameOrigin(u, t.BaseURL) {
		return answer{}, &fail{msg: fmt.Sprintf("refused to send the key to %s: not the endpoint's own host", u.Host)}
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	var body io.Reader
	if cl.body != "" {
		body = strings.NewReader(cl.body)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, u.String(), body)
	if err != nil {
		return answer{}, &fail{msg: fmt.Sprintf("build request: %v", err)}
	}
	for k, vs := range cl.header {
		req.Header[k] = vs
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	if cl.body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{
		Transport: rd.Transport,
		// A redirect could carry the key's answer, or the next request,
		// anywhere: never followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return answer{}, &fail{msg: fmt.Sprintf("no answer within %s", Timeout)}
		}
		return answer{}, &fail{msg: fmt.Sprintf("request failed: %v", errors.Unwrap(err))}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxBytes+1))
	if err != nil {
		return answer{}, &fail{status: resp.StatusCode, msg: fmt.Sprintf("reading the answer: %v", err)}
	}
	if len(raw) > MaxBytes {
		return answer{}, &fail{status: resp.StatusCode, msg: fmt.Sprintf("the answer is over %d KiB", MaxBytes>>10)}
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return answer{}, &fail{status: resp.StatusCode, msg: fmt.Sprintf("%d: a redirect, not followed", resp.StatusCode)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return answer{}, &fail{status: resp.StatusCode, msg: fmt.Sprintf("%d: %s", resp.StatusCode, errorText(raw))}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return answer{}, &fail{status: resp.StatusCode, msg: "the answer is not JSON"}
	}
	return answer{doc: doc, status: resp.StatusCode}, nil
}

// errorText is what an error answer says, from the message fields relays
// and providers use, cut short; the body itself is never logged.
func errorText(raw []byte) string {
	var doc any
	if json.Unmarshal(raw, &doc) == nil {
		for _, p := range []string{"error.message", "message", "msg", "error", "detail"} {
			if v, ok := lookup(doc, p); ok {
				if s, ok := v.(string); ok && s != "" {
					return clip(s)
				}
			}
		}
	}
	return "an error answer"
}

func clip(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return s
}

// sameOrigin reports whether u is on the scheme, host and port of baseURL.
func sameOrigin(u *url.URL, baseURL string) bool {
	b, err := url.Parse(baseURL)
	if err != nil || b.Host == "" {
		return false
	}
	return strings.EqualFold(u.Scheme, b.Scheme) && strings.EqualFold(u.Host, b.Host)
}

// expand fills a custom connector's placeholders.
func expand(s, baseURL, key string) string {
	origin := Target{BaseURL: baseURL}.origin()
	return strings.NewReplacer("{{base_url}}", strings.TrimRight(baseURL, "/"), "{{origin}}", origin, "{{key}}", key).Replace(s)
}

// custom reads with a connector the user described.
func (rd Reader) custom(ctx context.Context, c Connector, t Target) Reading {
	now := rd.now()
	h := http.Header{}
	for k, v := range c.Headers {
		h.Set(k, expand(v, t.BaseURL, t.APIKey))
	}
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	// The URL never takes the key (Check refuses {{key}} there).
	a, err := rd.do(ctx, t, call{method: method, url: expand(c.URL, t.BaseURL, ""), header: h,
		body: expand(c.Body, t.BaseURL, t.APIKey), otherHost: c.OtherHost})
	if err != nil {
		return failedCall(now, err)
	}
	return fromPaths(now, a.doc, c.Paths, c.Unit, c.Multiplier)
}

func failedCall(now time.Time, err error) Reading {
	var f *fail
	status := 0
	if errors.As(err, &f) {
		status = f.status
	}
	return failed(now, status, "%v", err)
}

// fromPaths reads a reading out of doc at paths. A path that is given but
// missing, or not a number, makes the reading unknown and names it.
func fromPaths(now time.Time, doc any, p Paths, unit Unit, mult float64) Reading {
	if mult == 0 {
		mult = 1
	}
	r := Reading{Unit: unit}
	for _, f := range []struct {
		path string
		dst  **float64
	}{{p.Remaining, &r.Remaining}, {p.Used, &r.Used}, {p.Total, &r.Total}} {
		if f.path == "" {
			continue
		}
		v, err := number(doc, f.path)
		if err != nil {
			return failed(now, 0, "%v", err)
		}
		*f.dst = ptr(v * mult)
	}
	if p.Unit != "" {
		if v, ok := lookup(doc, p.Unit); ok {
			u, ok := parseUnit(v)
			if !ok {
				return failed(now, 0, "%s: %v is not a unit (%s)", p.Unit, v, unitList())
			}
			r.Unit = u
		} else if unit == "" {
			return failed(now, 0, "%s: missing in the answer", p.Unit)
		}
	}
	if p.ResetAt != "" {
		if v, ok := lookup(doc, p.ResetAt); ok && v != nil {
			t, err := timeOf(v)
			if err != nil {
				return failed(now, 0, "%s: %v", p.ResetAt, err)
			}
			r.ResetAt = t
		}
	}
	return r
}

// parseUnit reads a unit word as answers spell it.
func parseUnit(v any) (Unit, bool) {
	s, _ := v.(string)
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "usd", "$":
		return USD, true
	case "cny", "rmb", "¥":
		return CNY, true
	case "tokens", "token":
		return Tokens, true
	case "percent", "%":
		return Percent, true
	}
	return "", false
}
