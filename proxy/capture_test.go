package proxy

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// docs/BEHAVIOUR.md#capture-and-resend, the proxy's side: what it tees,
// which requests keep it, and what Redact leaves.

// TestCaptureModes: off captures nothing; errors keeps a failed request
// and one that failed over, not a plain success; all keeps every one.
func TestCaptureModes(t *testing.T) {
	for _, tc := range []struct {
		mode                        CaptureMode
		ok, failedOver, failed, bad bool // captured?
	}{
		{CaptureOff, false, false, false, false},
		{"", false, false, false, false},
		{CaptureErrors, false, true, true, true},
		{CaptureAll, true, true, true, true},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			a := upstream(t, okClaude())
			b := upstream(t, okClaude())
			h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL), ep(2, "b", b.URL)}, Capture: tc.mode})
			check := func(what string, want bool, status int) {
				t.Helper()
				rec := h.record()
				if rec.Status != status {
					t.Fatalf("%s: status %d, want %d", what, rec.Status, status)
				}
				if got := rec.Capture != nil; got != want {
					t.Errorf("%s: captured %v, want %v", what, got, want)
				}
			}
			h.post("/v1/messages", claudeBody)
			check("success", tc.ok, 200)

			a.Push(proxytest.AnthropicError(500, "api_error", "boom"), proxytest.AnthropicError(500, "api_error", "boom"))
			h.post("/v1/messages", claudeBody)
			check("failover", tc.failedOver, 200)

			// The cursor moved on to b after a failed.
			b.Push(proxytest.AnthropicError(400, "invalid_request_error", "bad"))
			h.post("/v1/messages", claudeBody)
			check("returned 400", tc.failed, 400)

			h.post("/v1/nowhere", claudeBody)
			check("404", tc.bad, 404)
		})
	}
}

// TestCaptureStreamRaw: a stream's capture is the raw SSE the client got,
// byte for byte, with the status and headers it was sent with, and the
// client's request as it came.
func TestCaptureStreamRaw(t *testing.T) {
	a := upstream(t, okClaudeStream())
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL)}, Capture: CaptureAll})
	got := h.post("/v1/messages?beta=true", claudeStreamBody, "x-api-key", "client-key-123456")
	rec := h.record()
	c := rec.Capture
	if c == nil {
		t.Fatal("no capture")
	}
	if string(c.ResponseBody) != got.body || c.ResponseTruncated {
		t.Errorf("captured body %q (truncated %v), want what the client got %q", c.ResponseBody, c.ResponseTruncated, got.body)
	}
	if c.Status != 200 || c.ResponseHeader.Get("Content-Type") != "text/event-stream" || c.ResponseHeader.Get("X-Ccmesh-Endpoint") != "a" {
		t.Errorf("status %d headers %v", c.Status, c.ResponseHeader)
	}
	if string(c.RequestBody) != claudeStreamBody || c.Query != "beta=true" || c.Method != "POST" || c.RequestHeader.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("request %s %q %q %v", c.Method, c.Query, c.RequestBody, c.RequestHeader)
	}
	if rec.StreamEnd != StreamComplete {
		t.Errorf("stream_end %q", rec.StreamEnd)
	}
}

// TestCaptureBodyCap: a body over the cap is cut there and marked, on
// both sides; the request still goes upstream whole, the answer reaches
// the client whole.
func TestCaptureBodyCap(t *testing.T) {
	big := `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"` + strings.Repeat("x", 2<<20) + `"}]}`
	a := upstream(t, okClaude()) // with usage: no estimate of the 2 MiB
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL)}, Capture: CaptureAll})
	h.post("/v1/messages", big)
	c := h.record().Capture
	if len(a.Requests()[0].Body) != len(big) {
		t.Fatalf("upstream got %d bytes", len(a.Requests()[0].Body))
	}
	if len(c.RequestBody) != DefaultCaptureBody || !c.RequestTruncated || string(c.RequestBody) != big[:DefaultCaptureBody] {
		t.Errorf("request body %d bytes, truncated %v", len(c.RequestBody), c.RequestTruncated)
	}
	if c.ResponseTruncated {
		t.Error("a small answer marked truncated")
	}

	// The answer's side, with a small cap.
	answer := okClaude()
	answer.Body = strings.Replace(answer.Body, `"hello"`, `"`+strings.Repeat("y", 5000)+`"`, 1)
	a.SetDefault(answer)
	h = newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL)}, Capture: CaptureAll, CaptureBodyCap: 1024})
	got := h.post("/v1/messages", claudeBody)
	c = h.record().Capture
	if got.body != answer.Body || string(c.ResponseBody) != answer.Body[:1024] || !c.ResponseTruncated {
		t.Errorf("client got %d bytes; captured %d, truncated %v", len(got.body), len(c.ResponseBody), c.ResponseTruncated)
	}
	if string(c.RequestBody) != claudeBody || c.RequestTruncated {
		t.Errorf("request body %q, truncated %v", c.RequestBody, c.RequestTruncated)
	}
}

// TestCaptureRedact: the credential headers go, and every endpoint key,
// the client token and the client's own key are masked wherever they
// are, a secret's head left at a cut body's end too; the request's own
// body is never written into.
func TestCaptureRedact(t *testing.T) {
	const (
		key   = "sk-endpoint-key-0123456789"
		other = "sk-other-endpoint-abcdefgh"
		token = "client-token-zyxwvutsrq"
		own   = "sk-client-own-key-55555"
	)
	reqBody := []byte(`{"model":"m","note":"` + key + " " + token + " " + own + `"}`)
	orig := bytes.Clone(reqBody)
	c := &Capture{
		RequestHeader: http.Header{
			"X-Api-Key": {own}, "Authorization": {"Bearer " + token}, "Cookie": {"ccmesh_admin=abc"},
			"Proxy-Authorization": {"Basic xyz"}, "X-Note": {"carries " + other},
		},
		RequestBody:       reqBody,
		ResponseHeader:    http.Header{"Set-Cookie": {"s=1"}, "Content-Type": {"application/json"}},
		ResponseBody:      []byte(`{"echo":"` + key + `","cut":"` + other[:12]),
		ResponseTruncated: true,
		secrets:           []string{key, other, token},
	}
	c.Redact()
	if !bytes.Equal(reqBody, orig) {
		t.Fatal("Redact wrote into the request's body")
	}
	for _, k := range secretHeaders {
		if c.RequestHeader.Get(k) != "" || c.ResponseHeader.Get(k) != "" {
			t.Errorf("header %s kept", k)
		}
	}
	all := string(c.RequestBody) + string(c.ResponseBody) + c.RequestHeader.Get("X-Note")
	for _, s := range []string{key, other, token, own, other[:12]} {
		if strings.Contains(all, s) {
			t.Errorf("%q left in %s", s, all)
		}
	}
	if !strings.Contains(all, MaskKey(key)) || !strings.HasSuffix(string(c.ResponseBody), `"cut":"…`) {
		t.Errorf("masks missing: %s", all)
	}
}

// TestCaptureCompressedResponse: a body the client got compressed is
// stored decoded, so it can be read and searched for secrets.
func TestCaptureCompressedResponse(t *testing.T) {
	msg := okClaude()
	msg.Body = `{"echo":"key-a"}` + msg.Body[:0] + `{"type":"message","content":[],"note":"sk-secret-in-body-000"}`
	msg.Encoding = "gzip"
	a := upstream(t, msg)
	e := ep(1, "a", a.URL)
	e.APIKey = "sk-secret-in-body-000"
	h := newHarness(t, Config{Endpoints: []Endpoint{e}, Capture: CaptureAll})
	h.post("/v1/messages", claudeBody, "Accept-Encoding", "gzip")
	c := h.record().Capture
	c.Redact()
	if c.ResponseHeader.Get("Content-Encoding") != "" || !strings.Contains(string(c.ResponseBody), `"note":"sk-…-000"`) {
		t.Errorf("headers %v body %q", c.ResponseHeader, c.ResponseBody)
	}
}

// TestInternalRequest: a request marked Internal passes the client-token
// check and carries its resent-from row; the same header from a client
// is ignored, and never reaches the upstream either way.
func TestInternalRequest(t *testing.T) {
	a := upstream(t, okClaude())
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL)}, ClientToken: "client-token-0123456789"})
	if r := h.post("/v1/messages", claudeBody, ResentFromHeader, "7"); r.status != 401 {
		t.Fatalf("client without the token: %d", r.status)
	}
	h.record()
	r := h.post("/v1/messages", claudeBody, ResentFromHeader, "7", "x-api-key", "client-token-0123456789")
	if rec := h.record(); r.status != 200 || rec.ResentFrom != 0 || rec.Tag != nil {
		t.Fatalf("client's header believed: status %d resent_from %d", r.status, rec.ResentFrom)
	}

	tag := new(int)
	req, err := http.NewRequestWithContext(Internal(context.Background(), tag), http.MethodPost, "http://127.0.0.1/v1/messages", strings.NewReader(claudeBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(ResentFromHeader, "7")
	w := &recorder{header: http.Header{}}
	h.srv.ServeHTTP(w, req)
	rec := h.record()
	if w.status != 200 || rec.ResentFrom != 7 || rec.Tag != tag {
		t.Fatalf("internal: status %d resent_from %d tag %v", w.status, rec.ResentFrom, rec.Tag)
	}
	for _, up := range a.Requests() {
		if up.Header.Get(ResentFromHeader) != "" {
			t.Errorf("%s reached the upstream", ResentFromHeader)
		}
	}
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(200)
	return r.body.Write(p)
}
