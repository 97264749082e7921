package app

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A key that names no field is refused with its path and a likely fix,
// everywhere the admin API takes JSON, and changes nothing
// (docs/BEHAVIOUR.md#bad-input-and-faults).
func TestUnknownFieldsRefused(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	ep := fmt.Sprintf("/api/endpoints/%d", e.ID)
	endpointsBefore := h.do("GET", "/api/endpoints", "")
	settingsBefore := h.do("GET", "/api/settings", "")
	tests := []struct {
		method, path, body string
		field, suggest     string // suggest "": no suggestion
	}{
		{"PUT", ep, `{"enabeld":false}`, "enabeld", "enabled"},
		{"PUT", ep, `{"Enabled":false}`, "Enabled", "enabled"},
		{"PUT", ep, `{"models":[],"breaker_overrides":{"timeout":5}}`, "breaker_overrides.timeout", ""},
		{"PUT", ep, `{"breaker_overrides":{"failure_treshold":3}}`, "breaker_overrides.failure_treshold", "failure_threshold"},
		{"POST", "/api/endpoints", `{"name":"b","base_url":"https://b.example","protocol":"anthropic","api_keys":"sk-x"}`, "api_keys", "api_key"},
		{"PUT", "/api/settings", `{"strategyy":"priority"}`, "strategyy", "strategy"},
		{"PUT", "/api/settings", `{"breaker":{"claude":{"failure_treshold":3}}}`, "breaker.claude.failure_treshold", "failure_threshold"},
		{"PUT", "/api/settings", `{"breaker":{"gemini":{}}}`, "breaker.gemini", ""},
		{"POST", "/api/import", `{"version":1,"setings":{},"endpoints":[]}`, "setings", "settings"},
		{"POST", "/api/import", `{"version":1,"endpoints":[{"name":"a"},{"name":"c","base_url":"https://c.example","protocol":"anthropic","enabeld":true}]}`,
			"endpoints[1].enabeld", "enabled"},
		{"POST", "/api/import", `{"version":1,"endpoints":[{"name":"c","breaker_overrides":{"x":1}}]}`, "endpoints[0].breaker_overrides.x", ""},
		{"PUT", "/api/order", fmt.Sprintf(`{"ids":[%d],"idz":[]}`, e.ID), "idz", "ids"},
	}
	for _, tc := range tests {
		r := h.do(tc.method, tc.path, tc.body)
		got := r.apiErr(t)
		if r.status != 400 || got.Code != "unknown_field" || got.Field != tc.field {
			t.Errorf("%s %s %s: %d %s, want 400 unknown_field at %s", tc.method, tc.path, tc.body, r.status, r.body, tc.field)
			continue
		}
		if tc.suggest != "" && !strings.Contains(got.Message, fmt.Sprintf("did you mean %q?", tc.suggest)) {
			t.Errorf("%s: message %q does not suggest %q", tc.body, got.Message, tc.suggest)
		}
	}
	if now := h.do("GET", "/api/endpoints", ""); string(now.body) != string(endpointsBefore.body) {
		t.Errorf("refused calls changed the endpoints:\nbefore %s\nafter  %s", endpointsBefore.body, now.body)
	}
	if now := h.do("GET", "/api/settings", ""); string(now.body) != string(settingsBefore.body) {
		t.Errorf("refused calls changed the settings:\nbefore %s\nafter  %s", settingsBefore.body, now.body)
	}
	// Keys of a map are the user's: any is fine.
	if r := h.do("PUT", ep, `{"model_map":{"claude-*":"x","anything at all":"y"}}`); r.status != 200 {
		t.Errorf("model_map with free keys: %d %s", r.status, r.body)
	}
}

// Values that used to be stored and then broke something get a clear
// answer naming the field (docs/BEHAVIOUR.md#bad-input-and-faults).
func TestBadValuesRefused(t *testing.T) {
	h := newHarness(t)
	h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	before := h.do("GET", "/api/endpoints", "")
	ep := func(fields string) string {
		return `{"name":"n","base_url":"https://n.example","protocol":"anthropic",` + fields + `}`
	}
	tests := []struct {
		name, path, body string
		status           int
		code, field      string
	}{
		{"name .", "/api/endpoints", ep(`"name":"."`), 422, "invalid_name", "name"},
		{"name ..", "/api/endpoints", ep(`"name":".."`), 422, "invalid_name", "name"},
		{"port above 65535", "/api/endpoints", ep(`"base_url":"http://127.0.0.1:99999"`), 422, "invalid_url", "base_url"},
		{"port not a number", "/api/endpoints", ep(`"base_url":"http://127.0.0.1:80x"`), 422, "invalid_url", "base_url"},
		{"key not UTF-8", "/api/endpoints", ep("\"api_key\":\"sk-\xff\xfe-abc\""), 400, "invalid_utf8", "api_key"},
		{"name not UTF-8", "/api/endpoints", ep("\"name\":\"n\xc3\""), 400, "invalid_utf8", "name"},
		{"model not UTF-8", "/api/endpoints", ep("\"models\":[\"ok\",\"claude-\xff\"]"), 400, "invalid_utf8", "models[1]"},
		{"model_map key not UTF-8", "/api/endpoints", ep("\"model_map\":{\"\xff\":\"x\"}"), 400, "invalid_utf8", "model_map.\uFFFD"},
		// An escape that is no character decodes to U+FFFD: the key is damaged all the same.
		{"key with a lone surrogate", "/api/endpoints", ep(`"api_key":"sk-\ud800abc"`), 422, "invalid_api_key", "api_key"},
		{"import naming one endpoint twice", "/api/import",
			`{"version":1,"endpoints":[{"name":"b","base_url":"https://b.example","protocol":"anthropic"},{"name":"b","base_url":"https://c.example"}]}`,
			409, "duplicate_name", "endpoints[1].name"},
		{"import with a key not UTF-8", "/api/import",
			"{\"version\":1,\"endpoints\":[{\"name\":\"b\",\"base_url\":\"https://b.example\",\"protocol\":\"anthropic\",\"api_key\":\"\xff\"}]}",
			400, "invalid_utf8", "endpoints[0].api_key"},
	}
	for _, tc := range tests {
		r := h.do("POST", tc.path, tc.body)
		got := r.apiErr(t)
		if r.status != tc.status || got.Code != tc.code || got.Field != tc.field || got.Message == "" {
			t.Errorf("%s: %d %s, want %d %s at %s", tc.name, r.status, r.body, tc.status, tc.code, tc.field)
		}
	}
	if after := h.do("GET", "/api/endpoints", ""); string(after.body) != string(before.body) {
		t.Errorf("refused calls changed the endpoints:\nbefore %s\nafter  %s", before.body, after.body)
	}
}

// starveListener serves connections that report, once, when the server
// reads for more than the first want bytes a client sent: the handler is
// then waiting for the rest of a body.
type starveListener struct {
	net.Listener
	want    int
	starved chan struct{}
	once    sync.Once
}

func (l *starveListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &starveConn{Conn: c, l: l}, nil
}

type starveConn struct {
	net.Conn
	l    *starveListener
	read int
}

func (c *starveConn) Read(p []byte) (int, error) {
	if c.read >= c.l.want {
		c.l.once.Do(func() { close(c.l.starved) })
	}
	n, err := c.Conn.Read(p)
	c.read += n
	return n, err
}

// A settings body that trickles in holds no lock: another write goes
// through while the server waits for the rest, and the slow one then
// merges onto it.
func TestSlowBodyBlocksNoWrite(t *testing.T) {
	h := newHarness(t)
	const body = `{"strategy":"priority"}`
	head := "PUT /api/settings HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + testToken +
		"\r\nContent-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n"
	sent := head + body[:12] // `{"strategy":`

	slow := httptest.NewUnstartedServer(h.app.Handler())
	ln := &starveListener{Listener: slow.Listener, want: len(sent), starved: make(chan struct{})}
	slow.Listener = ln
	slow.Start()
	t.Cleanup(slow.Close)
	conn, err := net.Dial("tcp", slow.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	// Before the servers close (cleanups run last first): frees a handler
	// stuck in the body, which Close would wait for.
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, sent); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ln.starved:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never read the body")
	}

	other := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("PUT", h.srv.URL+"/api/settings", strings.NewReader(`{"idle_timeout_ms":4321}`))
		req.Header.Set("Authorization", "Bearer "+testToken)
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode != 200 {
				err = fmt.Errorf("status %d", res.StatusCode)
			}
		}
		other <- err
	}()
	select {
	case err := <-other:
		if err != nil {
			t.Fatalf("the other write: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a settings write waited behind a body that is still arriving")
	}

	if _, err := io.WriteString(conn, body[12:]); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("the slow write: %d", res.StatusCode)
	}
	s := h.app.Snapshot().Settings
	if s.Strategy != "priority" || s.IdleTimeoutMs != 4321 {
		t.Errorf("settings after both writes: strategy %q idle %d, want priority and 4321", s.Strategy, s.IdleTimeoutMs)
	}
}

// pipeListener is a listener of in-memory connections, so that a server
// runs inside a synctest bubble.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.UnixAddr{Name: "pipe", Net: "pipe"} }

func (l *pipeListener) dial() net.Conn {
	client, server := net.Pipe()
	l.conns <- server
	return client
}

// An admin body gets adminBodyTimeout to arrive, then a 408; the proxy's
// uploads are not the admin API's and have no such limit.
func TestAdminBodyDeadline(t *testing.T) {
	h := newHarness(t)
	synctest.Test(t, func(t *testing.T) {
		ln := newPipeListener()
		srv := &http.Server{Handler: h.app.Handler()}
		go srv.Serve(ln) //nolint:errcheck // ends with Close
		defer srv.Close()

		conn := ln.dial()
		defer conn.Close()
		start := time.Now()
		if _, err := io.WriteString(conn, "PUT /api/settings HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+
			testToken+"\r\nContent-Length: 100\r\n\r\n{\"strategy\":"); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if waited := time.Since(start); res.StatusCode != http.StatusRequestTimeout || waited != adminBodyTimeout ||
			!strings.Contains(string(b), `"code":"body_timeout"`) {
			t.Errorf("a body that stopped arriving: %d %s after %v, want 408 body_timeout after %v", res.StatusCode, b, waited, adminBodyTimeout)
		}
	})
	if s := h.app.Snapshot().Settings; s.Strategy != DefaultSettings().Strategy {
		t.Errorf("strategy = %q after a body that never arrived", s.Strategy)
	}
}
