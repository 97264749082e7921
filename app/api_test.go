package app

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

const secretKey = "sk-ant-secret-0123456789abcdef"

func TestCreateEndpointDefaultsAndMask(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"main","base_url":"https://api.example.com/","protocol":"anthropic","api_key":"` + secretKey + `"}`)
	if !e.Enabled || e.Auth != "auto" || e.Fast || len(e.Models) != 0 {
		t.Errorf("defaults: got enabled=%v auth=%q fast=%v models=%v, want true auto false []", e.Enabled, e.Auth, e.Fast, e.Models)
	}
	if e.BaseURL != "https://api.example.com" {
		t.Errorf("base_url = %q, want trailing slash trimmed", e.BaseURL)
	}
	if want := "sk-…cdef"; e.APIKeyMasked != want || !e.HasKey {
		t.Errorf("mask = %q has_key=%v, want %q true", e.APIKeyMasked, e.HasKey, want)
	}
	second := h.mustCreate(`{"name":"second","base_url":"http://127.0.0.1:9","protocol":"openai-chat"}`)
	if second.SortOrder <= e.SortOrder {
		t.Errorf("sort_order of second = %d, want after %d", second.SortOrder, e.SortOrder)
	}
}

func TestEndpointBadInputs(t *testing.T) {
	h := newHarness(t)
	h.mustCreate(`{"name":"taken","base_url":"https://a.example","protocol":"anthropic"}`)
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"bad name", "POST", "/api/endpoints", `{"name":"has space","base_url":"https://a.example","protocol":"anthropic"}`, 422, "invalid_name"},
		{"duplicate name", "POST", "/api/endpoints", `{"name":"taken","base_url":"https://b.example","protocol":"anthropic"}`, 409, "duplicate_name"},
		{"non-http url", "POST", "/api/endpoints", `{"name":"x","base_url":"ftp://a.example","protocol":"anthropic"}`, 422, "invalid_url"},
		{"unknown protocol", "POST", "/api/endpoints", `{"name":"x","base_url":"https://a.example","protocol":"gemini"}`, 422, "invalid_protocol"},
		{"missing name", "POST", "/api/endpoints", `{"base_url":"https://a.example","protocol":"anthropic"}`, 422, "required"},
		{"malformed json", "POST", "/api/endpoints", `{"name":`, 400, "bad_json"},
		{"wrong type", "POST", "/api/endpoints", `{"name":7}`, 400, "bad_json"},
		{"unknown id get", "GET", "/api/endpoints/999", "", 404, "not_found"},
		{"unknown id put", "PUT", "/api/endpoints/999", `{"enabled":false}`, 404, "not_found"},
		{"unknown id delete", "DELETE", "/api/endpoints/999", "", 404, "not_found"},
		{"unknown id force-open", "POST", "/api/endpoints/999/force-open", "", 404, "not_found"},
		{"bad id", "GET", "/api/endpoints/abc", "", 400, "bad_id"},
		{"fast queue unknown id", "PUT", "/api/fast-queue", `{"ids":[999]}`, 422, "unknown_id"},
		{"fast queue no ids", "PUT", "/api/fast-queue", `{}`, 400, "required"},
		{"order not permutation", "PUT", "/api/order", `{"ids":[]}`, 422, "not_permutation"},
		{"bad strategy", "PUT", "/api/settings", `{"strategy":"random"}`, 422, "invalid_setting"},
		{"bad breaker default", "PUT", "/api/settings", `{"breaker":{"claude":{"failure_threshold":0}}}`, 422, "invalid_breaker_override"},
		{"bad log limit", "GET", "/api/logs?limit=0", "", 400, "bad_query"},
		{"unknown route", "GET", "/api/nope", "", 404, "not_found"},
	}
	before := h.do("GET", "/api/endpoints", "")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, tc.path, tc.body)
			if r.status != tc.status || r.errCode() != tc.code {
				t.Errorf("got %d %q, want %d %q (body %s)", r.status, r.errCode(), tc.status, tc.code, r.body)
			}
		})
	}
	if after := h.do("GET", "/api/endpoints", ""); string(after.body) != string(before.body) {
		t.Errorf("rejected calls changed the endpoints:\nbefore %s\nafter  %s", before.body, after.body)
	}
}

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

func TestUpdateFastQueueOrder(t *testing.T) {
	h := newHarness(t)
	a := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	b := h.mustCreate(`{"name":"b","base_url":"https://b.example","protocol":"anthropic","fast":true}`)
	c := h.mustCreate(`{"name":"c","base_url":"https://c.example","protocol":"anthropic"}`)

	r := h.do("PUT", fmt.Sprintf("/api/endpoints/%d", a.ID), `{"enabled":false,"models":["claude-*"]}`)
	var upd EndpointReply
	r.decode(t, &upd)
	if r.status != 200 || upd.Enabled || !slices.Equal(upd.Models, []string{"claude-*"}) || upd.Name != "a" {
		t.Errorf("update: got %d %+v", r.status, upd)
	}

	if r := h.do("PUT", "/api/fast-queue", fmt.Sprintf(`{"ids":[%d,%d]}`, c.ID, b.ID)); r.status != 200 {
		t.Fatalf("fast-queue: %d %s", r.status, r.body)
	}
	if r := h.do("PUT", "/api/order", fmt.Sprintf(`{"ids":[%d,%d,%d]}`, c.ID, a.ID, b.ID)); r.status != 200 {
		t.Fatalf("order: %d %s", r.status, r.body)
	}
	var list []EndpointReply
	h.do("GET", "/api/endpoints", "").decode(t, &list)
	var names, fast []string
	for _, e := range list {
		names = append(names, e.Name)
	}
	slices.SortFunc(list, func(x, y EndpointReply) int { return x.FastSortOrder - y.FastSortOrder })
	for _, e := range list {
		if e.Fast {
			fast = append(fast, e.Name)
		}
	}
	if want := []string{"c", "a", "b"}; !slices.Equal(names, want) {
		t.Errorf("list order = %v, want %v", names, want)
	}
	if want := []string{"c", "b"}; !slices.Equal(fast, want) {
		t.Errorf("fast queue = %v, want %v", fast, want)
	}

	if r := h.do("DELETE", fmt.Sprintf("/api/endpoints/%d", b.ID), ""); r.status != http.StatusNoContent {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	if r := h.do("GET", fmt.Sprintf("/api/endpoints/%d", b.ID), ""); r.status != 404 {
		t.Errorf("deleted endpoint: got %d, want 404", r.status)
	}
}

func TestSettingsMerge(t *testing.T) {
	h := newHarness(t)
	r := h.do("PUT", "/api/settings", `{"strategy":"priority","breaker":{"openai":{"failure_threshold":9}}}`)
	if r.status != 200 {
		t.Fatalf("put settings: %d %s", r.status, r.body)
	}
	r = h.do("PUT", "/api/settings", `{"idle_timeout_ms":1234}`)
	var s map[string]any
	h.do("GET", "/api/settings", "").decode(t, &s)
	if s["strategy"] != "priority" || s["idle_timeout_ms"] != float64(1234) || s["first_byte_timeout_ms"] != float64(60000) {
		t.Errorf("settings after two merges = %v", s)
	}
	ft := s["breaker"].(map[string]any)["openai"].(map[string]any)["failure_threshold"]
	if ft != float64(9) {
		t.Errorf("breaker.openai.failure_threshold = %v, want 9", ft)
	}
}

// The key must never leave ccmesh through the API or the log.
func TestKeyNeverShown(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"k","base_url":"https://a.example","protocol":"anthropic","api_key":"` + secretKey + `"}`)
	h.do("PUT", fmt.Sprintf("/api/endpoints/%d", e.ID), `{"api_key":"`+secretKey+`-2"}`)
	var bodies []string
	for _, p := range []string{"/api/endpoints", fmt.Sprintf("/api/endpoints/%d", e.ID), "/api/health", "/api/export", "/api/settings"} {
		bodies = append(bodies, string(h.do("GET", p, "").body))
	}
	bodies = append(bodies, h.logs.String())
	for i, b := range bodies {
		if strings.Contains(b, "secret-0123") {
			t.Errorf("reply/log %d contains the key: %s", i, b)
		}
	}
	// Asked for explicitly, the export carries it (for a backup).
	if b := h.do("GET", "/api/export?keys=1", "").body; !strings.Contains(string(b), secretKey+"-2") {
		t.Errorf("export?keys=1 lacks the key: %s", b)
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	h := newHarness(t)
	h.mustCreate(`{"name":"one","base_url":"https://a.example","protocol":"anthropic","api_key":"k1-abcdefghijkl","models":["claude-*"]}`)
	exp := h.do("GET", "/api/export?keys=1", "")
	other := newHarness(t)
	if r := other.do("POST", "/api/import", string(exp.body)); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	var list []EndpointReply
	other.do("GET", "/api/endpoints", "").decode(t, &list)
	if len(list) != 1 || list[0].Name != "one" || !list[0].HasKey || !slices.Equal(list[0].Models, []string{"claude-*"}) {
		t.Errorf("imported = %+v", list)
	}
	bad := `{"version":1,"endpoints":[{"name":"ok","base_url":"https://a.example","protocol":"anthropic"},{"name":"bad name","base_url":"https://a.example","protocol":"anthropic"}]}`
	if r := other.do("POST", "/api/import", bad); r.status != 422 {
		t.Errorf("bad import: got %d, want 422", r.status)
	}
	other.do("GET", "/api/endpoints", "").decode(t, &list)
	if len(list) != 1 {
		t.Errorf("a rejected import changed the endpoints: %d now", len(list))
	}
}
