package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// TestForwardedHeaders: docs/BEHAVIOUR.md#headers on what an upstream receives.
func TestForwardedHeaders(t *testing.T) {
	clientHeaders := []string{
		"x-api-key", "client-key",
		"Authorization", "Bearer client-token",
		"anthropic-beta", "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27",
		"anthropic-dangerous-direct-browser-access", "true",
		"user-agent", "claude-cli/2.1.3 (external, cli)",
		"x-app", "cli",
		"x-stainless-retry-count", "0",
		"accept-encoding", "gzip, deflate, br, zstd",
		"x-ccmesh-endpoint", "",
		"x-ccmesh-debug", "1",
		"Connection", "keep-alive, x-hop",
		"x-hop", "drop me",
		"Cookie", "ccmesh_admin=the-admin-token",
	}
	tests := []struct {
		name       string
		edit       func(*Endpoint)
		wantKey    string // x-api-key upstream
		wantAuth   string // Authorization upstream
		clientTok  string
		clientHdrs []string
	}{
		{name: "anthropic auto → x-api-key", wantKey: "key-a"},
		{name: "bearer", edit: func(e *Endpoint) { e.Auth = "bearer" }, wantAuth: "Bearer key-a"},
		{name: "openai auto → bearer", edit: func(e *Endpoint) { e.Protocol = ProtocolOpenAIChat }, wantAuth: "Bearer key-a"},
		{name: "no key passes the client's auth", edit: func(e *Endpoint) { e.APIKey = "" }, wantKey: "client-key", wantAuth: "Bearer client-token"},
		{name: "no key never passes the client token", edit: func(e *Endpoint) { e.APIKey = "" }, clientTok: "client-key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := upstream(t, okClaude())
			e := ep(1, "a", a.URL)
			if tc.edit != nil {
				tc.edit(&e)
			}
			h := newHarness(t, Config{Endpoints: []Endpoint{e}, ClientToken: tc.clientTok})
			path := "/v1/messages?beta=true"
			if e.Protocol == ProtocolOpenAIChat {
				path = "/v1/chat/completions"
			}
			got := h.post(path, claudeBody, clientHeaders...)
			h.record()
			if got.status != 200 {
				t.Fatalf("status %d: %s", got.status, got.body)
			}
			r := a.Requests()[0]
			if g := r.Header.Get("X-Api-Key"); g != tc.wantKey {
				t.Errorf("x-api-key upstream = %q, want %q", g, tc.wantKey)
			}
			if g := r.Header.Get("Authorization"); g != tc.wantAuth {
				t.Errorf("authorization upstream = %q, want %q", g, tc.wantAuth)
			}
			for _, k := range []string{"X-Ccmesh-Debug", "X-Hop", "Connection", "Cookie"} {
				if v := r.Header.Get(k); v != "" {
					t.Errorf("%s reached the upstream: %q", k, v)
				}
			}
			for i := 4; i < 16; i += 2 {
				if g := r.Header.Get(clientHeaders[i]); g != clientHeaders[i+1] {
					t.Errorf("%s upstream = %q, want %q", clientHeaders[i], g, clientHeaders[i+1])
				}
			}
			if string(r.Body) != claudeBody {
				t.Errorf("body changed:\n got %s\nwant %s", r.Body, claudeBody)
			}
			if strings.HasPrefix(path, "/v1/messages") && r.RawQuery != "beta=true" {
				t.Errorf("query = %q, want beta=true", r.RawQuery)
			}
		})
	}
}

// TestResponseSafetyHeaders: nothing an upstream sends may act as a page or
// set a cookie on the origin the admin UI shares; ccmesh's own answers
// carry the same headers.
func TestResponseSafetyHeaders(t *testing.T) {
	page := proxytest.Response{Status: 200, Body: "<script>fetch('/api/export?keys=1')</script>"}.
		WithHeader("Content-Type", "text/html").WithHeader("Set-Cookie", "relay=1; Path=/")
	neutral := proxytest.AnthropicError(400, "invalid_request_error", "bad").WithHeader("Set-Cookie", "relay=2")
	for _, tc := range []struct {
		name string
		up   proxytest.Response
		path string
	}{
		{"html page from an upstream", page, "/v1/messages"},
		{"neutral error from an upstream", neutral, "/v1/messages"},
		{"ccmesh's own 404", okClaude(), "/v1/nowhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := upstream(t, tc.up)
			h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL)}})
			got := h.post(tc.path, claudeBody)
			h.record()
			if v := got.header.Get("Set-Cookie"); v != "" {
				t.Errorf("Set-Cookie reached the client: %q", v)
			}
			if v := got.header.Get("X-Content-Type-Options"); v != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff", v)
			}
			if v := got.header.Get("Content-Security-Policy"); v != "sandbox" {
				t.Errorf("Content-Security-Policy = %q, want sandbox", v)
			}
		})
	}
}

// TestUpstreamURL: base_url joining with and without a version segment.
func TestUpstreamURL(t *testing.T) {
	tests := []struct{ base, path, query, want string }{
		{"https://api.anthropic.com", "/v1/messages", "beta=true", "https://api.anthropic.com/v1/messages?beta=true"},
		{"https://relay.example/api/", "/v1/messages", "", "https://relay.example/api/v1/messages"},
		{"https://open.bigmodel.cn/api/paas/v4", "/v1/chat/completions", "", "https://open.bigmodel.cn/api/paas/v4/chat/completions"},
		{"https://relay.example/v1", "/v1/messages/count_tokens", "beta=true", "https://relay.example/v1/messages/count_tokens?beta=true"},
		{"https://generativelanguage.googleapis.com/v1beta/openai/", "/v1/chat/completions", "", "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions"},
		{"https://api.deepseek.com/anthropic", "/v1/messages", "", "https://api.deepseek.com/anthropic/v1/messages"},
		{"https://relay.example/video", "/v1/messages", "", "https://relay.example/video/v1/messages"},
	}
	for _, tc := range tests {
		t.Run(tc.base, func(t *testing.T) {
			e, err := compileEndpoint(Endpoint{Name: "x", BaseURL: tc.base, Protocol: ProtocolAnthropic})
			if err != nil {
				t.Fatal(err)
			}
			if got := e.upstreamURL(tc.path, tc.query); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestEncodedErrorBodies: error bodies are read whatever the encoding; the
// client still gets the raw bytes.
func TestEncodedErrorBodies(t *testing.T) {
	quotaJSON := `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}`
	badJSON := `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}`
	for _, enc := range []string{"gzip", "br", "zstd"} {
		t.Run(enc+" quota fails over", func(t *testing.T) {
			a := upstream(t, proxytest.Response{Status: 400, Body: quotaJSON, Encoding: enc})
			b := upstream(t, okClaude())
			h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL), ep(2, "b", b.URL)}})
			got := h.post("/v1/messages", claudeBody, "accept-encoding", "gzip, deflate, br, zstd")
			rec := h.record()
			if got.status != 200 || rec.Attempts[0].ErrorType != ErrQuota {
				t.Errorf("status %d first attempt %q, want 200 after a quota failure", got.status, rec.Attempts[0].ErrorType)
			}
			if rec.Attempts[0].BodyHead != quotaJSON {
				t.Errorf("body_head = %q, want the decoded body", rec.Attempts[0].BodyHead)
			}
		})
		t.Run(enc+" neutral passes raw", func(t *testing.T) {
			a := upstream(t, proxytest.Response{Status: 400, Body: badJSON, Encoding: enc})
			h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL)}})
			got := h.post("/v1/messages", claudeBody, "accept-encoding", "gzip, deflate, br, zstd")
			h.record()
			if got.status != 400 || got.header.Get("Content-Encoding") != enc {
				t.Fatalf("status %d encoding %q", got.status, got.header.Get("Content-Encoding"))
			}
			if want := string(proxytest.Encode(enc, []byte(badJSON))); got.body != want {
				t.Error("client did not get the upstream's raw encoded bytes")
			}
		})
	}
}

// TestGuards: docs/BEHAVIOUR.md#safety's Host, Origin and client token checks.
func TestGuards(t *testing.T) {
	tests := []struct {
		name     string
		host     string
		hdr      []string
		token    string
		allowed  []string
		public   bool
		wantCode int
	}{
		{name: "loopback ip", wantCode: 200},
		{name: "localhost host", host: "localhost:3457", wantCode: 200},
		{name: "ipv6 loopback", host: "[::1]:3457", wantCode: 200},
		{name: "rebinding host", host: "evil.example:3457", wantCode: 403},
		{name: "lan ip host", host: "192.168.1.5:3457", wantCode: 403},
		{name: "lan ip host it listens on", host: "192.168.1.5:3457", allowed: []string{"192.168.1.5:3457"}, wantCode: 200},
		{name: "foreign origin", hdr: []string{"Origin", "https://evil.example"}, wantCode: 403},
		{name: "null origin", hdr: []string{"Origin", "null"}, wantCode: 403},
		// A page on another local port is a web page like any other
		// (docs/BEHAVIOUR.md#safety): refused without the client token.
		{name: "loopback origin of another port", hdr: []string{"Origin", "http://localhost:5173"}, wantCode: 403},
		{name: "local page, text/plain", hdr: []string{"Origin", "http://localhost:8080", "Content-Type", "text/plain"}, wantCode: 403},
		{name: "own origin", hdr: []string{"Origin", "http://{host}"}, wantCode: 200},
		{name: "own origin, https", hdr: []string{"Origin", "https://{host}"}, wantCode: 200},
		{name: "own origin with a path is not an origin", hdr: []string{"Origin", "http://{host}/x"}, wantCode: 403},
		{name: "fetch metadata cross-site", hdr: []string{"Sec-Fetch-Site", "cross-site"}, wantCode: 403},
		{name: "fetch metadata same-site", hdr: []string{"Sec-Fetch-Site", "same-site"}, wantCode: 403},
		{name: "fetch metadata same-origin", hdr: []string{"Sec-Fetch-Site", "same-origin"}, wantCode: 200},
		{name: "fetch metadata none (the user's own navigation)", hdr: []string{"Sec-Fetch-Site", "none"}, wantCode: 200},
		{name: "local page with the client token", token: "s3cret", hdr: []string{"Origin", "http://localhost:8080", "x-api-key", "s3cret"}, wantCode: 200},
		{name: "cross-site with the client token", token: "s3cret", hdr: []string{"Sec-Fetch-Site", "cross-site", "Authorization", "Bearer s3cret"}, wantCode: 200},
		{name: "local page with a wrong token", token: "s3cret", hdr: []string{"Origin", "http://localhost:8080", "x-api-key", "nope"}, wantCode: 403},
		{name: "token missing", token: "s3cret", wantCode: 401},
		{name: "token wrong", token: "s3cret", hdr: []string{"x-api-key", "nope"}, wantCode: 401},
		{name: "token as x-api-key", token: "s3cret", hdr: []string{"x-api-key", "s3cret"}, wantCode: 200},
		{name: "token as bearer", token: "s3cret", hdr: []string{"Authorization", "Bearer s3cret"}, wantCode: 200},
		{name: "token as lower-case bearer", token: "s3cret", hdr: []string{"Authorization", "bearer s3cret"}, wantCode: 200},
		{name: "lan listener: any host with the token", host: "my-pc.lan:3457", public: true, token: "s3cret", hdr: []string{"x-api-key", "s3cret"}, wantCode: 200},
		{name: "lan listener: foreign host without the token", host: "evil.example:3457", public: true, token: "s3cret", wantCode: 403},
		{name: "lan listener: foreign host with a wrong token", host: "evil.example:3457", public: true, token: "s3cret", hdr: []string{"x-api-key", "nope"}, wantCode: 403},
		{name: "loopback listener: the token does not open other hosts", host: "evil.example:3457", token: "s3cret", hdr: []string{"x-api-key", "s3cret"}, wantCode: 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := upstream(t, okClaude())
			h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL)}, ClientToken: tc.token, AllowedHosts: tc.allowed, PublicListener: tc.public})
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, h.front.URL+"/v1/messages", strings.NewReader(claudeBody))
			req.Header.Set("anthropic-version", "2023-06-01")
			if tc.host != "" {
				req.Host = tc.host
			}
			for i := 0; i < len(tc.hdr); i += 2 {
				req.Header.Set(tc.hdr[i], strings.ReplaceAll(tc.hdr[i+1], "{host}", req.Host))
			}
			resp, err := h.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			h.record()
			if resp.StatusCode != tc.wantCode {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.wantCode)
			}
			if resp.Header.Get("X-Ccmesh-Attempts") == "" {
				t.Error("x-ccmesh-attempts missing")
			}
			if wantCalls := map[bool]int{true: 1, false: 0}[tc.wantCode == 200]; a.Count() != wantCalls {
				t.Errorf("upstream calls = %d, want %d", a.Count(), wantCalls)
			}
			if tc.token != "" && tc.wantCode == 200 {
				r := a.Requests()[0]
				if strings.Contains(r.Header.Get("Authorization")+r.Header.Get("X-Api-Key"), tc.token) {
					t.Error("the client token reached the upstream")
				}
			}
		})
	}
}

// TestBadInput: errors ccmesh answers itself, before any upstream.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name, path, body string
		maxBody          int64
		wantCode         int
		wantIn           string
	}{
		{"not json", "/v1/messages", "model=claude", 0, 400, `"type":"invalid_request_error"`},
		{"truncated json", "/v1/messages", `{"model":"claude-x",`, 0, 400, "could not read the request"},
		{"no model", "/v1/messages", `{"messages":[]}`, 0, 400, `has no \"model\"`},
		{"openai shape", "/v1/chat/completions", `[1]`, 0, 400, `"code":"invalid_request"`},
		{"too large", "/v1/messages", claudeBody, 64, 413, "max_body"},
		{"wrong method", "/v1/messages", "", 0, 405, "use POST"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := upstream(t, okClaude())
			h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL), chatEp(2, "c", a.URL)}, MaxBody: tc.maxBody})
			method := http.MethodPost
			if tc.wantCode == 405 {
				method = http.MethodGet
			}
			got := h.do(t.Context(), method, tc.path, tc.body)
			rec := h.record()
			if got.status != tc.wantCode || !strings.Contains(got.body, tc.wantIn) {
				t.Errorf("got %d %s, want %d containing %s", got.status, got.body, tc.wantCode, tc.wantIn)
			}
			if a.Count() != 0 || rec.SentUpstream {
				t.Errorf("upstream called %d times", a.Count())
			}
			if got.header.Get("X-Fallback-Triggered") != "false" {
				t.Error("x-fallback-triggered missing")
			}
		})
	}
}

// TestLogRecord: one record per request with routing and history.
func TestLogRecord(t *testing.T) {
	a := upstream(t, proxytest.AnthropicError(500, "api_error", "a broke"))
	b := upstream(t, okClaude())
	c := upstream(t, okClaude())
	ec := ep(3, "c", c.URL)
	ec.Models = []string{"claude-opus-*"}
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL), ep(2, "b", b.URL), ec}})
	h.post("/v1/messages?beta=true", claudeBody)
	rec := h.record()
	checks := []struct {
		name      string
		got, want any
	}{
		{"protocol", rec.Protocol, ProtocolAnthropic},
		{"path", rec.Path, "/v1/messages"},
		{"model asked", rec.ModelAsked, "claude-sonnet-4-5"},
		{"endpoint", rec.Endpoint, "b"},
		{"endpoint id", rec.EndpointID, int64(2)},
		{"status", rec.Status, 200},
		{"attempt count", rec.AttemptCount, 3},
		{"tokens in", rec.TokensIn, int64(12)},
		{"tokens out", rec.TokensOut, int64(34)},
		{"sent upstream", rec.SentUpstream, true},
		{"stream", rec.Stream, false},
		{"candidates", len(rec.Routing.Candidates), 2},
		{"excluded", len(rec.Routing.Excluded), 1},
		{"excluded reason", rec.Routing.Excluded[0].Reason, ExcludedModel},
		{"strategy", rec.Routing.Strategy, StrategySticky},
		{"attempt 0 status", rec.Attempts[0].Status, 500},
		{"attempt 0 message", rec.Attempts[0].Message, "HTTP 500 api_error: a broke"},
		{"attempt 0 body head", strings.Contains(rec.Attempts[0].BodyHead, "a broke"), true},
		{"attempt 1 endpoint", rec.Attempts[1].Endpoint, "a"},
		{"attempt 2 outcome", rec.Attempts[2].Outcome, breaker.Success},
		{"attempt 2 error type", rec.Attempts[2].ErrorType, ErrorType("")},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !rec.Attempts[1].StartedAt.After(rec.Attempts[0].StartedAt) {
		t.Error("attempt start times not increasing")
	}
	select {
	case extra := <-h.sink.ch:
		t.Errorf("a second record for one request: %+v", extra)
	default:
	}
}

// TestWebPageRefusedInTheProtocolsShape: a web page's request to /v1
// without the client token is a 403 in the shape of the path's protocol
// (a browser's text/plain POST carries no anthropic-version), saying what
// to do, and nothing reaches an upstream.
func TestWebPageRefusedInTheProtocolsShape(t *testing.T) {
	tests := []struct {
		path, wantShape string
	}{
		{"/v1/messages", `"type":"error","error":{"type":"permission_error"`},
		{"/v1/messages/count_tokens", `"type":"permission_error"`},
		{"/v1/chat/completions", `"code":"forbidden"`},
		{"/v1/responses", `"code":"forbidden"`},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			a := upstream(t, okClaude())
			h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL)}})
			got := h.post(tc.path, claudeBody, "anthropic-version", "", "Content-Type", "text/plain", "Origin", "http://localhost:8080")
			h.record()
			if got.status != http.StatusForbidden {
				t.Fatalf("status = %d, want 403", got.status)
			}
			if !strings.Contains(got.body, tc.wantShape) {
				t.Errorf("body %s, want it to contain %s", got.body, tc.wantShape)
			}
			for _, want := range []string{`origin \"http://localhost:8080\"`, "set a client token", "x-api-key"} {
				if !strings.Contains(got.body, want) {
					t.Errorf("body %s, want it to say %q", got.body, want)
				}
			}
			if a.Count() != 0 {
				t.Errorf("upstream calls = %d, want 0", a.Count())
			}
		})
	}
}
