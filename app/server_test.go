package app

import (
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

func TestPauseAnswers503(t *testing.T) {
	h := newHarness(t)
	h.app.SetPaused(true)
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
	var info Info
	h.do("GET", "/api/info", "").decode(t, &info)
	if !info.Paused {
		t.Errorf("info.paused = false while paused")
	}
}
