package proxytest

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strconv"
	"sync"
	"testing"
)

// Proxy is a loopback upstream proxy for tests: an HTTP proxy (CONNECT
// tunnels and absolute-form requests) or a SOCKS5 one, optionally asking
// for a user and password. It records the target of everything that went
// through it.
type Proxy struct {
	// URL is the proxy's address without credentials (http://… or
	// socks5://…).
	URL        string
	user, pass string

	mu      sync.Mutex
	targets []string
	refused int
}

// Targets are the host:port (or URL, for an absolute-form request) each
// request through the proxy asked for, in order; refused ones left out.
func (p *Proxy) Targets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...)
}

// Refused counts the requests refused for their credentials.
func (p *Proxy) Refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

func (p *Proxy) note(target string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ok {
		p.targets = append(p.targets, target)
	} else {
		p.refused++
	}
}

// NewHTTPProxy starts an HTTP proxy; user "" asks for no credentials.
func NewHTTPProxy(t testing.TB, user, pass string) *Proxy {
	t.Helper()
	p := &Proxy{user: user, pass: pass}
	fwd := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.Out.URL = r.In.URL; r.Out.Header.Del("Proxy-Authorization") },
		FlushInterval: -1,
		Transport:     &http.Transport{Proxy: nil},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.authorized(r.Header.Get("Proxy-Authorization")) {
			p.note("", false)
			w.Header().Set("Proxy-Authenticate", `Basic realm="test"`)
			w.WriteHeader(http.StatusProxyAuthRequired)
			return
		}
		if r.Method != http.MethodConnect {
			p.note(r.URL.String(), true)
			fwd.ServeHTTP(w, r)
			return
		}
		p.note(r.Host, true)
		tunnel(w, r.Host)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

func (p *Proxy) authorized(h string) bool {
	if p.user == "" {
		return true
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(p.user+":"+p.pass))
	return h == want
}

// tunnel answers a CONNECT by piping the client's connection to target.
func tunnel(w http.ResponseWriter, target string) {
	up, err := net.Dial("tcp", target)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.WriteHeader(http.StatusOK)
	c, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		return
	}
	pipe(c, up, rw.Reader)
}

// pipe copies both ways until either side closes; buffered holds what the
// client sent past the handshake.
func pipe(c, up net.Conn, buffered io.Reader) {
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, buffered); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	<-done
}

// NewSOCKS5 starts a SOCKS5 proxy (RFC 1928, user/password RFC 1929);
// user "" asks for no credentials. Its targets are as the client named
// them: a host name for socks5h, an IP address for socks5.
func NewSOCKS5(t testing.TB, user, pass string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	p := &Proxy{URL: "socks5://" + l.Addr().String(), user: user, pass: pass}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { p.serveSOCKS(c) })
		}
	})
	return p
}

func (p *Proxy) serveSOCKS(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	target, err := p.socksHandshake(br, c)
	if err != nil {
		return
	}
	up, err := net.Dial("tcp", target)
	if err != nil {
		_, _ = c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0}) // connection refused
		return
	}
	if _, err := c.Write([]byte{5, 0, 0, 1, 127, 0, 0, 1, 0, 0}); err != nil {
		up.Close()
		return
	}
	pipe(c, up, br)
}

// socksHandshake runs the method choice, authentication and request, and
// returns the address asked for.
func (p *Proxy) socksHandshake(br *bufio.Reader, c net.Conn) (string, error) {
	head := make([]byte, 2)
	if _, err := io.ReadFull(br, head); err != nil || head[0] != 5 {
		return "", errors.New("not socks5")
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return "", err
	}
	if p.user == "" {
		_, err := c.Write([]byte{5, 0})
		if err != nil {
			return "", err
		}
	} else if err := p.socksAuth(br, c); err != nil {
		return "", err
	}
	req := make([]byte, 4)
	if _, err := io.ReadFull(br, req); err != nil || req[1] != 1 {
		return "", errors.New("not a CONNECT")
	}
	var host string
	switch req[3] {
	case 1, 4:
		ip := make([]byte, map[byte]int{1: 4, 4: 16}[req[3]])
		if _, err := io.ReadFull(br, ip); err != nil {
			return "", err
		}
		host = net.IP(ip).String()
	case 3:
		n, err := br.ReadByte()
		if err != nil {
			return "", err
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(br, name); err != nil {
			return "", err
		}
		host = string(name)
	default:
		return "", fmt.Errorf("address type %d", req[3])
	}
	port := make([]byte, 2)
	if _, err := io.ReadFull(br, port); err != nil {
		return "", err
	}
	target := net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port))))
	p.note(target, true)
	return target, nil
}

// socksAuth asks for and checks a user and password (RFC 1929).
func (p *Proxy) socksAuth(br *bufio.Reader, c net.Conn) error {
	if _, err := c.Write([]byte{5, 2}); err != nil {
		return err
	}
	field := func() (string, error) {
		n, err := br.ReadByte()
		if err != nil {
			return "", err
		}
		b := make([]byte, n)
		_, err = io.ReadFull(br, b)
		return string(b), err
	}
	if v, err := br.ReadByte(); err != nil || v != 1 {
		return errors.New("bad auth version")
	}
	user, err := field()
	if err != nil {
		return err
	}
	pass, err := field()
	if err != nil {
		return err
	}
	if user != p.user || pass != p.pass {
		p.note("", false)
		_, _ = c.Write([]byte{1, 1})
		return errors.New("bad credentials")
	}
	_, err = c.Write([]byte{1, 0})
	return err
}
