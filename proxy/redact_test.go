package proxy

import (
	"net/http"
	"strings"
	"testing"
)

// TestRedactQuery: parameters named like credentials go whatever their
// case or escaping, secrets are masked in the others, and every other
// byte stays as it came (docs/BEHAVIOUR.md#capture-and-resend).
func TestRedactQuery(t *testing.T) {
	const (
		key   = "sk-endpoint-key-0123456789"
		admin = "0123456789abcdef0123456789abcdef"
	)
	tests := []struct {
		name, raw, want string
	}{
		{"empty", "", ""},
		{"nothing secret", "beta=true&ccmesh_endpoint=a", "beta=true&ccmesh_endpoint=a"},
		{"key", "beta=true&key=AIzaSyQueryKey000111", "beta=true"},
		{"upper case", "API_KEY=abc&beta=true", "beta=true"},
		{"dashes", "x-goog-api-key=abc", ""},
		{"tokens", "access_token=a&Token=b&refresh_token=c&beta=1", "beta=1"},
		{"client secret", "client_secret=s&x=1", "x=1"},
		{"admin cookie name", "ccmesh_admin=" + admin, ""},
		{"escaped name", "%6Bey=abc&beta=true", "beta=true"},
		{"no value", "token&beta", "beta"},
		{"a key under another name", "note=" + key, "note=" + strings.ReplaceAll(MaskKey(key), "…", "%E2%80%A6")},
		{"the admin token under another name", "q=x+" + admin, "q=" + "x+" + strings.ReplaceAll(MaskKey(admin), "…", "%E2%80%A6")},
		{"escaped secret", "q=" + strings.ReplaceAll(key, "-", "%2D"), "q=" + strings.ReplaceAll(MaskKey(key), "…", "%E2%80%A6")},
		{"repeated separators kept", "a=1&&b=2", "a=1&&b=2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RedactQuery(tc.raw, key, admin); got != tc.want {
				t.Errorf("RedactQuery(%q) = %q, want %q", tc.raw, got, tc.want)
			}
		})
	}
}

// TestCaptureRedactQueryAndAdminToken: Redact clears the query, and the
// admin token it is given is masked wherever it appears — a Referer's
// query, any header, the bodies — and the Cookie that carries it goes.
func TestCaptureRedactQueryAndAdminToken(t *testing.T) {
	const (
		key   = "sk-endpoint-key-0123456789"
		admin = "0123456789abcdef0123456789abcdef"
	)
	c := &Capture{
		Query: "beta=true&key=AIzaSyQueryKey000111&note=" + admin,
		RequestHeader: http.Header{
			"Referer":  {"http://127.0.0.1:3457/ui/?token=" + admin + "&tab=logs"},
			"Cookie":   {"ccmesh_admin=" + admin},
			"X-Debug":  {"admin " + admin},
			"X-Origin": {"http://127.0.0.1:3457/ui/?key=AIzaSyQueryKey000111"},
		},
		RequestBody:    []byte(`{"model":"m","note":"` + admin + `"}`),
		ResponseHeader: http.Header{"Location": {"https://up.example/next?api_key=AIzaSyLocation0000"}},
		ResponseBody:   []byte(`{"echo":"` + admin + `"}`),
		secrets:        []string{key},
	}
	c.Redact(admin)
	if c.Query != "beta=true&note="+strings.ReplaceAll(MaskKey(admin), "…", "%E2%80%A6") {
		t.Errorf("query = %q", c.Query)
	}
	if got, want := c.RequestHeader.Get("Referer"), "http://127.0.0.1:3457/ui/?tab=logs"; got != want {
		t.Errorf("Referer = %q, want %q", got, want)
	}
	if got, want := c.ResponseHeader.Get("Location"), "https://up.example/next"; got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
	if c.RequestHeader.Get("Cookie") != "" {
		t.Error("Cookie kept")
	}
	var all strings.Builder
	all.WriteString(c.Query)
	for _, h := range []http.Header{c.RequestHeader, c.ResponseHeader} {
		for _, vv := range h {
			all.WriteString(strings.Join(vv, " "))
		}
	}
	all.Write(c.RequestBody)
	all.Write(c.ResponseBody)
	for _, s := range []string{admin, "AIzaSyQueryKey000111", "AIzaSyLocation0000"} {
		if strings.Contains(all.String(), s) {
			t.Errorf("%q left in %s", s, all.String())
		}
	}
}

// TestCaptureBodyCapSetting: the body cap the configuration gives
// (capture_body_bytes) holds for each side, a compressed answer's decoded
// body included.
func TestCaptureBodyCapSetting(t *testing.T) {
	const limit = 1024
	long := `{"type":"message","content":[],"note":"` + strings.Repeat("z", 4*limit) + `"}`
	for _, enc := range []string{"", "gzip"} {
		t.Run("encoding "+enc, func(t *testing.T) {
			msg := okClaude()
			msg.Body, msg.Encoding = long, enc
			a := upstream(t, msg)
			h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL)}, Capture: CaptureAll, CaptureBodyCap: limit})
			req := strings.Replace(claudeBody, `"model"`, `"pad":"`+strings.Repeat("p", 2*limit)+`","model"`, 1)
			h.post("/v1/messages", req, "Accept-Encoding", "gzip")
			c := h.record().Capture
			c.Redact()
			if len(c.RequestBody) != limit || !c.RequestTruncated {
				t.Errorf("request body %d bytes, truncated %v; want %d, true", len(c.RequestBody), c.RequestTruncated, limit)
			}
			if len(c.ResponseBody) != limit || !c.ResponseTruncated || c.ResponseBody[0] != '{' {
				t.Errorf("response body %d bytes, truncated %v; want %d decoded, true", len(c.ResponseBody), c.ResponseTruncated, limit)
			}
		})
	}
}
