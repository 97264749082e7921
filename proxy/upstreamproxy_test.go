package proxy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

const proxyPass = "pr0xy-s3cret-pass"

// newTLSHarness is newHarness whose upstream transport trusts the test
// certificate of proxytest.NewTLS upstreams.
func newTLSHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{t: t, sink: &memSink{ch: make(chan *Record, 1024)}, breakers: breaker.NewSet(breaker.Config{}, nil)}
	tr := NewTransport()
	certs := httptest.NewTLSServer(http.NotFoundHandler())
	tr.TLSClientConfig = certs.Client().Transport.(*http.Transport).TLSClientConfig
	certs.Close()
	t.Cleanup(tr.CloseIdleConnections)
	h.srv = New(Options{Breakers: h.breakers, Sink: h.sink, Logger: zerolog.Nop(), Transport: tr})
	cfg.RetryDelay = cmpOr(cfg.RetryDelay, time.Millisecond)
	h.srv.Update(cfg)
	h.front = httptest.NewServer(h.srv)
	t.Cleanup(h.front.Close)
	ctr := &http.Transport{DisableCompression: true}
	t.Cleanup(ctr.CloseIdleConnections)
	h.client = &http.Client{Transport: ctr}
	return h
}

func cmpOr(a, b time.Duration) time.Duration {
	if a != 0 {
		return a
	}
	return b
}

// withCreds puts user and proxyPass into a proxy's URL.
func withCreds(raw, user string) string {
	u, _ := url.Parse(raw)
	u.User = url.UserPassword(user, proxyPass)
	return u.String()
}

func hostOf(raw string) string {
	u, _ := url.Parse(raw)
	return u.Host
}

// TestEndpointProxies: one endpoint's requests go through an HTTP CONNECT
// proxy, another's through SOCKS5, a third's directly, for plain answers
// and streams; no credential of a proxy reaches the record.
func TestEndpointProxies(t *testing.T) {
	httpP := proxytest.NewHTTPProxy(t, "alice", proxyPass)
	socksP := proxytest.NewSOCKS5(t, "bob", proxyPass)
	socksH := proxytest.NewSOCKS5(t, "", "")
	ups := map[string]*proxytest.Upstream{}
	var eps []Endpoint
	for i, name := range []string{"via-http", "via-socks", "via-socksh", "direct"} {
		ups[name] = proxytest.NewTLS(t, okClaude())
		eps = append(eps, ep(int64(i+1), name, ups[name].URL))
	}
	eps[0].ProxyURL = withCreds(httpP.URL, "alice")
	eps[1].ProxyURL = withCreds(socksP.URL, "bob")
	eps[2].ProxyURL = strings.Replace(socksH.URL, "socks5://", "socks5h://", 1)
	h := newTLSHarness(t, Config{Endpoints: eps})
	for _, name := range []string{"via-http", "via-socks", "via-socksh", "direct"} {
		for _, stream := range []bool{false, true} {
			ups[name].Push(map[bool]proxytest.Response{false: okClaude(), true: okClaudeStream()}[stream])
			body := map[bool]string{false: claudeBody, true: claudeStreamBody}[stream]
			got := h.post("/v1/messages", body, "x-ccmesh-endpoint", name)
			rec := h.record()
			if got.status != http.StatusOK || !strings.Contains(got.body, "hel") {
				t.Errorf("%s stream=%v: got %d %.200s, want 200 with the answer", name, stream, got.status, got.body)
			}
			b, _ := json.Marshal(rec)
			if strings.Contains(string(b), proxyPass) {
				t.Errorf("%s: the record holds the proxy's password: %s", name, b)
			}
		}
	}
	want := map[*proxytest.Proxy][]string{
		httpP:  {hostOf(ups["via-http"].URL), hostOf(ups["via-http"].URL)},
		socksP: {hostOf(ups["via-socks"].URL), hostOf(ups["via-socks"].URL)},
		socksH: {hostOf(ups["via-socksh"].URL), hostOf(ups["via-socksh"].URL)},
	}
	for p, w := range want {
		// A kept-alive tunnel carries the second request: at least one
		// tunnel, each to the endpoint's own upstream.
		got := p.Targets()
		if len(got) == 0 || len(got) > len(w) {
			t.Errorf("proxy %s: targets %v, want 1–2 tunnels to %s", p.URL, got, w[0])
		}
		for _, g := range got {
			if g != w[0] {
				t.Errorf("proxy %s carried %s, want only %s", p.URL, g, w[0])
			}
		}
	}
	for name, u := range ups {
		if got := u.Count(); got != 2 {
			t.Errorf("upstream %s: got %d requests, want 2", name, got)
		}
	}
}

// TestSOCKSNames: socks5 resolves the upstream's name here and hands the
// proxy an address; socks5h hands it the name.
func TestSOCKSNames(t *testing.T) {
	for _, tc := range []struct {
		scheme string
		byName bool
	}{{"socks5", false}, {"socks5h", true}} {
		t.Run(tc.scheme, func(t *testing.T) {
			p := proxytest.NewSOCKS5(t, "", "")
			up := upstream(t, okClaude())
			_, port, _ := strings.Cut(hostOf(up.URL), ":")
			e := ep(1, "a", "http://localhost:"+port)
			e.ProxyURL = strings.Replace(p.URL, "socks5://", tc.scheme+"://", 1)
			h := newHarness(t, Config{Endpoints: []Endpoint{e}})
			if got := h.post("/v1/messages", claudeBody); got.status != http.StatusOK {
				t.Fatalf("got %d %s, want 200", got.status, got.body)
			}
			h.record()
			targets := p.Targets()
			for _, tg := range targets {
				if named := strings.HasPrefix(tg, "localhost:"); named != tc.byName {
					t.Errorf("the proxy was asked for %s (all: %v), want by name %v", tg, targets, tc.byName)
				}
			}
			if len(targets) == 0 {
				t.Error("nothing went through the proxy")
			}
		})
	}
}

// TestProxyFailures: a proxy that cannot be reached or refuses is a
// transport failure of the endpoint whose message names the proxy, not
// the endpoint, and never its password.
func TestProxyFailures(t *testing.T) {
	httpP := proxytest.NewHTTPProxy(t, "alice", "right")
	socksP := proxytest.NewSOCKS5(t, "bob", "right")
	tests := []struct {
		name, proxy string
		tls         bool
		want        string
	}{
		{"connect refused 407", withCreds(httpP.URL, "alice"), true, "refused to connect: 407 Proxy Authentication Required"},
		{"plain http 407", withCreds(httpP.URL, "alice"), false, "refused to connect: 407 Proxy Authentication Required"},
		{"socks credentials", withCreds(socksP.URL, "bob"), true, "refused the credentials"},
		{"http proxy down", withCreds(proxytest.ClosedURL(t), "alice"), true, "could not connect to the proxy"},
		{"socks proxy down", strings.Replace(withCreds(proxytest.ClosedURL(t), "bob"), "http://", "socks5://", 1), false, "could not connect to the proxy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := upstream(t, okClaude())
			if tc.tls {
				up = proxytest.NewTLS(t, okClaude())
			}
			e := ep(1, "a", up.URL)
			e.ProxyURL = tc.proxy
			h := newTLSHarness(t, Config{Endpoints: []Endpoint{e}})
			got := h.post("/v1/messages", claudeBody)
			rec := h.record()
			if got.status < 500 {
				t.Errorf("got status %d, want a 5xx", got.status)
			}
			if len(rec.Attempts) == 0 {
				t.Fatalf("no attempts recorded")
			}
			at := rec.Attempts[0]
			wantPrefix := "the endpoint's proxy " + proxyAddr(mustURL(tc.proxy)) + " failed: "
			if at.ErrorType != ErrTransport || !strings.HasPrefix(at.Message, wantPrefix) || !strings.Contains(at.Message, tc.want) {
				t.Errorf("got %s %q, want transport %q…%q", at.ErrorType, at.Message, wantPrefix, tc.want)
			}
			if strings.Contains(got.body+at.Message, proxyPass) {
				t.Errorf("the password shows: %s / %s", got.body, at.Message)
			}
			if up.Count() != 0 {
				t.Errorf("the upstream got %d requests past a failing proxy, want 0", up.Count())
			}
		})
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// TestProxyPasswordCaptured: an upstream that echoes the proxy's password
// gets it masked in the capture, as an endpoint key would be.
func TestProxyPasswordCaptured(t *testing.T) {
	p := proxytest.NewHTTPProxy(t, "", "")
	up := upstream(t, proxytest.AnthropicMessage("your proxy password is "+proxyPass, 1, 1))
	e := ep(1, "a", up.URL)
	e.ProxyURL = withCreds(p.URL, "alice")
	h := newHarness(t, Config{Endpoints: []Endpoint{e}, Capture: CaptureAll})
	h.post("/v1/messages", claudeBody)
	c := h.record().Capture
	if c == nil {
		t.Fatal("no capture")
	}
	c.Redact()
	if strings.Contains(string(c.ResponseBody), proxyPass) {
		t.Errorf("capture keeps the proxy password: %s", c.ResponseBody)
	}
}

func TestParseProxyURL(t *testing.T) {
	tests := []struct {
		in, err string
	}{
		{"http://127.0.0.1:3128", ""},
		{"https://user:pw@proxy.example", ""},
		{"socks5://u:p@10.0.0.1:1080", ""},
		{"socks5h://proxy.example:1080", ""},
		{"ftp://proxy.example", "must be an http://, https://, socks5:// or socks5h:// URL"},
		{"socks5://", "needs a host"},
		{"http://p.example:0", "port must be 1–65535"},
		{"http://p.example/path", "no path, query or fragment"},
		{"http://u:" + proxyPass + "@p.example:99999", "port"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseProxyURL(tc.in)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("got %v, want nil", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("got %v, want %q", err, tc.err)
			case err != nil && strings.Contains(err.Error(), proxyPass):
				t.Errorf("the error quotes the password: %v", err)
			}
		})
	}
}

func TestMaskProxyURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"http://127.0.0.1:3128", "http://127.0.0.1:3128"},
		{"socks5://bob:" + proxyPass + "@10.0.0.1:1080", "socks5://bob:***@10.0.0.1:1080"},
		{"http://bob@p.example", "http://bob@p.example"},
	}
	for _, tc := range tests {
		if got := MaskProxyURL(tc.in); got != tc.want {
			t.Errorf("MaskProxyURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
