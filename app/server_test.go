package app

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestGuards(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name   string
		mod    func(*http.Request)
		status int
		code   string
	}{
		{"no token", func(r *http.Request) { r.Header.Del("Authorization") }, 401, "unauthorized"},
		{"wrong token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, 401, "unauthorized"},
		{"foreign host", func(r *http.Request) { r.Host = "evil.example:3457" }, 403, "forbidden_host"},
		{"foreign origin", func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, 403, "forbidden_origin"},
		{"cookie works", func(r *http.Request) {
			r.Header.Del("Authorization")
			r.AddCookie(&http.Cookie{Name: adminCookie, Value: testToken})
		}, 200, ""},
		{"own origin works", func(r *http.Request) { r.Header.Set("Origin", "http://"+r.Host) }, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("GET", "/api/endpoints", "", tc.mod)
			if r.status != tc.status || r.errCode() != tc.code {
				t.Errorf("got %d %q, want %d %q", r.status, r.errCode(), tc.status, tc.code)
			}
		})
	}
}

func TestUILinkSetsCookie(t *testing.T) {
	h := newHarness(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(h.srv.URL + "/ui/?token=" + testToken)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/ui/" {
		t.Fatalf("got %d to %q, want 302 to /ui/", res.StatusCode, res.Header.Get("Location"))
	}
	var got string
	for _, c := range res.Cookies() {
		if c.Name == adminCookie {
			got = c.Value
		}
	}
	if got != testToken {
		t.Errorf("cookie %q = %q, want the admin token", adminCookie, got)
	}
}

func TestFavicon(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/favicon.ico", "")
	if r.status != 200 || r.header.Get("Content-Type") != "image/png" {
		t.Errorf("favicon: %d %q", r.status, r.header.Get("Content-Type"))
	}
}

// While paused, /v1/ gets a 503 in the client's shape with the headers
// every proxy answer carries, and the request is logged
// (docs/BEHAVIOUR.md#request-log).
func TestPauseAnswers503(t *testing.T) {
	h := newHarness(t)
	h.app.SetPaused(true)
	logged := h.watchLog()
	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/messages", strings.NewReader(`{"model":"m"}`))
	req.Header.Set("anthropic-version", "2023-06-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Type  string `json:"type"`
		Error struct{ Type, Message string }
	}
	json.NewDecoder(res.Body).Decode(&body)
	if res.StatusCode != 503 || body.Type != "error" || !strings.Contains(body.Error.Message, "paused") {
		t.Errorf("paused proxy: %d %+v", res.StatusCode, body)
	}
	for name, want := range map[string]string{
		"X-Ccmesh-Endpoint": "", "X-Ccmesh-Attempts": "0", "X-Fallback-Triggered": "false",
		"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox",
	} {
		if got, ok := res.Header[name]; !ok || len(got) != 1 || got[0] != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	var info Info
	h.do("GET", "/api/info", "").decode(t, &info)
	if !info.Paused {
		t.Errorf("info.paused = false while paused")
	}

	logged()
	var page struct {
		Items []map[string]any `json:"items"`
	}
	h.do("GET", "/api/logs", "").decode(t, &page)
	if len(page.Items) != 1 || page.Items[0]["status"] != float64(503) || page.Items[0]["path"] != "/v1/messages" ||
		!strings.Contains(page.Items[0]["error"].(string), "ccmesh is paused") || page.Items[0]["attempts"] != float64(0) {
		t.Errorf("logs = %+v, want one 503 row saying ccmesh is paused", page.Items)
	}
}

// The admin token's Bearer scheme is case-insensitive, as the client
// token's is (docs/BEHAVIOUR.md#admin-api).
func TestAdminTokenBearerAnyCase(t *testing.T) {
	h := newHarness(t)
	for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
		r := h.do("GET", "/api/info", "", func(r *http.Request) { r.Header.Set("Authorization", scheme+" "+testToken) })
		if r.status != 200 {
			t.Errorf("Authorization: %s <token>: %d %s, want 200", scheme, r.status, r.body)
		}
	}
}

// A given admin token must be 16–256 printable ASCII characters without
// spaces; start-up names the flag otherwise (docs/BEHAVIOUR.md#admin-api).
func TestAdminTokenFormat(t *testing.T) {
	cases := []struct {
		name, token string
		ok          bool
	}{
		{"one character", "x", false},
		{"15 characters", strings.Repeat("a", 15), false},
		{"16 characters", strings.Repeat("a", 16), true},
		{"256 characters", strings.Repeat("a", 256), true},
		{"257 characters", strings.Repeat("a", 257), false},
		{"a space", "abcdefgh ijklmnop", false},
		{"a tab", "abcdefgh\tijklmnop", false},
		{"not ASCII", "abcdefghijklmnopé", false},
		{"punctuation", "a-b_c.d~e!f@g#h$i%j", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := New(context.Background(), Options{DataDir: t.TempDir(), Listen: "127.0.0.1:3457",
				AdminToken: tc.token, Headless: true, HomeDir: t.TempDir()})
			if err == nil {
				defer a.Close(context.Background())
			}
			if tc.ok && err != nil {
				t.Errorf("token %q refused: %v", tc.token, err)
			}
			if !tc.ok && (err == nil || !strings.Contains(err.Error(), "--admin-token")) {
				t.Errorf("token %q: err = %v, want a refusal naming --admin-token", tc.token, err)
			}
		})
	}
}

// The UI and the admin API carry a strict CSP and refuse to be framed or
// sniffed (docs/BEHAVIOUR.md#safety); refusals by the guard too.
func TestAdminSecurityHeaders(t *testing.T) {
	h := newHarness(t)
	noToken := func(r *http.Request) { r.Header.Del("Authorization") }
	for _, tc := range []struct {
		path string
		mod  []func(*http.Request)
	}{
		{"/ui/", nil},
		{"/ui/assets/none.js", nil},
		{"/api/info", nil},
		{"/api/info", []func(*http.Request){noToken}},
		{"/api/nowhere", nil},
	} {
		r := h.do("GET", tc.path, "", tc.mod...)
		csp := r.header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'",
			"form-action 'self'", "connect-src 'self'", "img-src 'self' data:"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s (%d): CSP %q lacks %q", tc.path, r.status, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "script-src 'self' 'unsafe-inline'") {
			t.Errorf("GET %s: CSP %q allows inline or eval'd script", tc.path, csp)
		}
		if got := r.header.Get("X-Frame-Options"); got != "DENY" {
			t.Errorf("GET %s: X-Frame-Options %q, want DENY", tc.path, got)
		}
		if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q, want nosniff", tc.path, got)
		}
	}
}
