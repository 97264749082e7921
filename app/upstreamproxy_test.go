package app

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

const proxySecret = "pr0xy-s3cret-pass"

func proxyWithCreds(raw, user, pass string) string {
	u, _ := url.Parse(raw)
	u.User = url.UserPassword(user, pass)
	return u.String()
}

// TestEndpointProxyURLMasked: proxy_url's password is write-only: every
// answer shows it as ***, an edit that sends *** back keeps it, an export
// without keys leaves the URL out, and the process log never holds it.
func TestEndpointProxyURLMasked(t *testing.T) {
	h := newHarness(t)
	p := proxytest.NewHTTPProxy(t, "alice", proxySecret)
	up, _ := fakeAnthropic(t)
	withPass := proxyWithCreds(p.URL, "alice", proxySecret)
	masked := strings.Replace(withPass, proxySecret, "***", 1)
	body, _ := json.Marshal(map[string]any{"name": "a", "base_url": up.URL, "api_key": secretKey, "protocol": "anthropic", "proxy_url": withPass})
	e := h.mustCreate(string(body))
	id := jsonID(e.ID)
	edit := map[string]string{
		"kept by ***":          `{"proxy_url":"` + masked + `"}`,
		"kept by another edit": `{"price_multiplier":2}`,
	}
	for name, b := range edit {
		t.Run(name, func(t *testing.T) {
			r := h.do("PUT", "/api/endpoints/"+id, b)
			got := okAs[EndpointReply](t, r)
			if got.ProxyURL != masked {
				t.Errorf("reply proxy_url %q, want %q", got.ProxyURL, masked)
			}
			if st, _ := h.app.endpointByID(e.ID); st.ProxyURL != withPass {
				t.Errorf("stored proxy_url lost its password: %q", strings.Replace(st.ProxyURL, proxySecret, "<secret>", 1))
			}
		})
	}
	// Test goes through the proxy, with the stored password.
	res := okAs[TestResult](t, h.do("POST", "/api/endpoints/"+id+"/test", ""))
	if !res.OK || len(p.Targets()) == 0 || p.Refused() != 0 {
		t.Errorf("test %+v; proxy targets %v refused %d, want ok through the proxy", res, p.Targets(), p.Refused())
	}
	models := h.do("POST", "/api/endpoints/"+id+"/fetch-models", "")
	if models.status != http.StatusOK || len(p.Targets()) < 2 {
		t.Errorf("fetch models %d %s; proxy targets %v, want 200 through the proxy", models.status, models.body, p.Targets())
	}
	var all []byte
	for _, path := range []string{"/api/endpoints", "/api/endpoints/" + id, "/api/export"} {
		r := h.do("GET", path, "")
		all = append(all, r.body...)
	}
	if strings.Contains(string(all)+h.logs.String(), proxySecret) {
		t.Errorf("the proxy password shows in an answer or the log")
	}
	if !strings.Contains(string(all), masked) {
		t.Errorf("the answers never show the masked proxy_url %q", masked)
	}
}

func jsonID(id int64) string { b, _ := json.Marshal(id); return string(b) }

// TestProxyURLRefused: proxy_url is checked before it is stored, with an
// error that never quotes it.
func TestProxyURLRefused(t *testing.T) {
	h := newHarness(t)
	tests := []struct{ url, want string }{
		{"ftp://p.example", "http://, https://, socks5:// or socks5h://"},
		{"socks5://", "needs a host"},
		{"http://u:" + proxySecret + "@p.example:0", "port must be 1–65535"},
		{"http://p.example/x", "no path"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{"name": "a", "base_url": "http://127.0.0.1:9", "protocol": "anthropic", "proxy_url": tc.url})
			r := h.do("POST", "/api/endpoints", string(body))
			if r.status != http.StatusUnprocessableEntity || r.errCode() != config.CodeInvalidProxyURL || !strings.Contains(string(r.body), tc.want) {
				t.Errorf("got %d %s, want 422 %s saying %q", r.status, r.body, config.CodeInvalidProxyURL, tc.want)
			}
			if strings.Contains(string(r.body), proxySecret) {
				t.Errorf("the error quotes the password: %s", r.body)
			}
		})
	}
}

// TestProxyFailureNamed: Test through a proxy that refuses says the proxy
// failed, not the endpoint.
func TestProxyFailureNamed(t *testing.T) {
	h := newHarness(t)
	p := proxytest.NewHTTPProxy(t, "alice", "right")
	up, keys := fakeAnthropic(t)
	body, _ := json.Marshal(map[string]any{"name": "a", "base_url": up.URL, "api_key": secretKey, "protocol": "anthropic",
		"proxy_url": proxyWithCreds(p.URL, "alice", proxySecret)})
	e := h.mustCreate(string(body))
	res := okAs[TestResult](t, h.do("POST", "/api/endpoints/"+jsonID(e.ID)+"/test", ""))
	if res.OK || !strings.HasPrefix(res.Message, "the endpoint's proxy "+p.URL+" failed: ") || !strings.Contains(res.Message, "407") {
		t.Errorf("got %+v, want a failure naming the proxy and its 407", res)
	}
	if len(*keys) != 0 {
		t.Errorf("the upstream got %d requests past the refusing proxy", len(*keys))
	}
}

// TestBalanceThroughProxy: a balance read goes through the endpoint's
// proxy, as its requests do.
func TestBalanceThroughProxy(t *testing.T) {
	h := newHarness(t)
	p := proxytest.NewSOCKS5(t, "bob", proxySecret)
	rl := newBalanceRelay(t, 2_500_000)
	body, _ := json.Marshal(map[string]any{"name": "relay", "base_url": rl.srv.URL, "api_key": secretKey, "protocol": "anthropic",
		"proxy_url": proxyWithCreds(p.URL, "bob", proxySecret), "balance": map[string]any{"template": "newapi"}})
	e := h.mustCreate(string(body))
	rl.waitRead(t, "read on save")
	got := h.balanceOf(e.ID, "POST")
	if got.Reading == nil || got.Reading.Remaining == nil {
		t.Fatalf("reading %+v, want what is left", got.Reading)
	}
	if n := len(p.Targets()); n == 0 {
		t.Errorf("the SOCKS5 proxy carried no balance read; its targets %v", p.Targets())
	}
	for _, tg := range p.Targets() {
		if tg != strings.TrimPrefix(rl.srv.URL, "http://") {
			t.Errorf("the proxy carried %s, want only the relay %s", tg, rl.srv.URL)
		}
	}
}
