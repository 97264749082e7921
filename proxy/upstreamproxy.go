package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	xproxy "golang.org/x/net/proxy"
)

// An endpoint may reach its upstream through a proxy of its own
// (docs/BEHAVIOUR.md#upstream-proxy): proxy_url, http, https, socks5 or
// socks5h, with optional credentials. Each distinct proxy_url gets one
// transport, built when a config naming it is compiled and closed when no
// config names it any more; the environment's proxies stay ignored.

// ProxySchemes are the proxy_url schemes ccmesh can use.
var ProxySchemes = []string{"http", "https", "socks5", "socks5h"}

// ParseProxyURL checks a proxy_url: one of ProxySchemes, a host, a port if
// any in 1–65535, nothing but the credentials besides. Its errors never
// quote the URL, which may hold a password.
func ParseProxyURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if uerr := (*url.Error)(nil); errors.As(err, &uerr) {
		err = uerr.Err
	}
	if err != nil {
		return nil, fmt.Errorf("parse proxy_url: %w", err)
	}
	if !slices.Contains(ProxySchemes, u.Scheme) {
		return nil, errors.New("proxy_url must be an http://, https://, socks5:// or socks5h:// URL")
	}
	if u.Hostname() == "" {
		return nil, errors.New("proxy_url needs a host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, errors.New("proxy_url's port must be 1–65535")
		}
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("proxy_url takes no path, query or fragment")
	}
	return u, nil
}

// MaskedPassword stands for a proxy_url's password wherever it is shown;
// sent back unchanged, it keeps the stored one.
const MaskedPassword = "***"

// MaskProxyURL is raw with its password replaced by MaskedPassword: what
// the admin API shows. A URL that does not parse is shown as nothing.
func MaskProxyURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), MaskedPassword)
		}
	}
	return strings.Replace(u.String(), url.QueryEscape(MaskedPassword), MaskedPassword, 1)
}

// ProxyPassword is raw's password, "" when it has none or does not parse:
// a secret captures mask.
func ProxyPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// proxyAddr names a proxy in messages: scheme, host and port, never the
// credentials.
func proxyAddr(u *url.URL) string { return u.Scheme + "://" + u.Host }

// ProxyError is a failure of an endpoint's proxy rather than of the
// endpoint: the proxy could not be reached, refused the tunnel, or refused
// its credentials.
type ProxyError struct {
	Proxy  string // proxyAddr
	What   string // what failed, in a user's words
	Status int    // the proxy's answer to CONNECT, when it answered one
	Err    error
}

func (e *ProxyError) Error() string {
	msg := "the endpoint's proxy " + e.Proxy + " failed: " + e.What
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *ProxyError) Unwrap() error { return e.Err }

// ProxyAnswered is the failure a 407 stands for when it comes back through
// proxyURL: only a proxy answers 407, so it is the proxy's, not the
// endpoint's; nil for any other status or without a proxy.
func ProxyAnswered(proxyURL string, status int) error {
	if status != http.StatusProxyAuthRequired || proxyURL == "" {
		return nil
	}
	u, err := ParseProxyURL(proxyURL)
	if err != nil {
		return nil
	}
	return &ProxyError{Proxy: proxyAddr(u), Status: status, What: connectRefusal(status)}
}

// transports holds the transport of each proxy_url in use.
type transports struct {
	base func() *http.Transport // a fresh transport to build a proxied one from
	mu   sync.Mutex
	by   map[string]*http.Transport
}

// get is the transport of proxyURL, built if need be; nil for a URL that
// does not parse (compile refuses those first).
func (ts *transports) get(proxyURL string) *http.Transport {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t, ok := ts.by[proxyURL]; ok {
		return t
	}
	u, err := ParseProxyURL(proxyURL)
	if err != nil {
		return nil
	}
	t := proxiedTransport(ts.base(), u)
	if ts.by == nil {
		ts.by = map[string]*http.Transport{}
	}
	ts.by[proxyURL] = t
	return t
}

// keep drops the transports of proxy URLs not in use, closing their idle
// connections; requests in flight on them finish.
func (ts *transports) keep(use map[string]bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for k, t := range ts.by {
		if !use[k] {
			t.CloseIdleConnections()
			delete(ts.by, k)
		}
	}
}

// proxiedTransport makes t reach its upstreams through u.
func proxiedTransport(t *http.Transport, u *url.URL) *http.Transport {
	addr := proxyAddr(u)
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	// Whatever a transport dials is the proxy: a failure there is the
	// proxy's, not the endpoint's.
	toProxy := func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := dial(ctx, network, address)
		if err != nil {
			return nil, &ProxyError{Proxy: addr, What: "could not connect to the proxy", Err: err}
		}
		return c, nil
	}
	switch u.Scheme {
	case "http", "https":
		t.Proxy = http.ProxyURL(u)
		t.DialContext = toProxy
		t.OnProxyConnectResponse = func(_ context.Context, _ *url.URL, _ *http.Request, res *http.Response) error {
			if res.StatusCode == http.StatusOK {
				return nil
			}
			return &ProxyError{Proxy: addr, Status: res.StatusCode, What: connectRefusal(res.StatusCode)}
		}
	default:
		t.Proxy = nil
		t.DialContext = socksDial(u, toProxy)
	}
	return t
}

// connectRefusal says why a proxy refused a CONNECT (or, for a plain
// http:// upstream, answered 407 itself).
func connectRefusal(status int) string {
	what := fmt.Sprintf("it refused to connect: %d %s", status, http.StatusText(status))
	if status == http.StatusProxyAuthRequired {
		what += " (check the user and password in proxy_url)"
	}
	return what
}

// socksDial dials through the SOCKS5 proxy u. socks5 resolves the
// upstream's name here, socks5h leaves it to the proxy.
func socksDial(u *url.URL, toProxy func(context.Context, string, string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	addr := proxyAddr(u)
	var auth *xproxy.Auth
	if u.User != nil {
		p, _ := u.User.Password()
		auth = &xproxy.Auth{User: u.User.Username(), Password: p}
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "1080")
	}
	d, _ := xproxy.SOCKS5("tcp", host, auth, contextDialer(toProxy)) // never fails
	cd := d.(xproxy.ContextDialer)
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		addrs := []string{address}
		if u.Scheme == "socks5" {
			// Resolved here; each address is tried in turn, as a direct
			// dial would.
			h, port, err := net.SplitHostPort(address)
			if err == nil && net.ParseIP(h) == nil {
				ips, err := net.DefaultResolver.LookupIPAddr(ctx, h)
				if err != nil {
					return nil, err
				}
				addrs = addrs[:0]
				for _, ip := range ips {
					addrs = append(addrs, net.JoinHostPort(ip.IP.String(), port))
				}
			}
		}
		err := errors.New("no address for " + address)
		for _, a := range addrs {
			var c net.Conn
			if c, err = cd.DialContext(ctx, network, a); err == nil {
				return c, nil
			}
		}
		if pe := (*ProxyError)(nil); errors.As(err, &pe) {
			return nil, pe
		}
		what := "it could not open a connection to the endpoint"
		if strings.Contains(err.Error(), "authentication") {
			what = "it refused the credentials (check the user and password in proxy_url)"
		}
		return nil, &ProxyError{Proxy: addr, What: what, Err: err}
	}
}

type contextDialer func(context.Context, string, string) (net.Conn, error)

func (d contextDialer) Dial(network, address string) (net.Conn, error) {
	return d(context.Background(), network, address)
}

func (d contextDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return d(ctx, network, address)
}
