package app

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

const testToken = "test-admin-token"

// syncBuffer collects log output from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness is a real App on a real SQLite file in a temp dir, served over
// loopback HTTP.
type harness struct {
	t    *testing.T
	dir  string
	app  *App
	srv  *httptest.Server
	logs *syncBuffer
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return startHarness(t, t.TempDir())
}

// startHarness starts an App on dir; mods change its options first.
func startHarness(t *testing.T, dir string, mods ...func(*Options)) *harness {
	t.Helper()
	logs := &syncBuffer{}
	opts := Options{
		DataDir: dir, Listen: "127.0.0.1:3457", AdminToken: testToken,
		Logger: zerolog.New(logs), Headless: true, HomeDir: t.TempDir(),
	}
	for _, m := range mods {
		m(&opts)
	}
	a, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h := &harness{t: t, dir: dir, app: a, srv: httptest.NewServer(a.Handler()), logs: logs}
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	if h.srv == nil {
		return
	}
	h.srv.Close()
	h.srv = nil
	if err := h.app.Close(context.Background()); err != nil {
		h.t.Errorf("Close: %v", err)
	}
}

// restart closes the app and opens a new one on the same data dir.
func (h *harness) restart() *harness {
	h.t.Helper()
	h.stop()
	return startHarness(h.t, h.dir)
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// okAs fails the test unless the reply is a 200, and decodes it as a T.
func okAs[T any](t *testing.T, r resp) T {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var v T
	r.decode(t, &v)
	return v
}

// errCode returns the admin API error code of the reply, or "".
func (r resp) errCode() string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(r.body, &e)
	return e.Error.Code
}

func (h *harness) do(method, path, body string, mod ...func(*http.Request)) resp {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, m := range mod {
		m(req)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// mustCreate adds an endpoint and returns its reply.
func (h *harness) mustCreate(body string) EndpointReply {
	h.t.Helper()
	r := h.do("POST", "/api/endpoints", body)
	if r.status != http.StatusCreated {
		h.t.Fatalf("create %s: status %d %s", body, r.status, r.body)
	}
	var e EndpointReply
	r.decode(h.t, &e)
	return e
}

const secretKey = "sk-ant-secret-0123456789abcdef"

// fakeAnthropic answers /v1/models and /v1/messages like Anthropic, and
// records the key each request carried.
func fakeAnthropic(t *testing.T) (*httptest.Server, *[]string) {
	t.Helper()
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get("x-api-key"))
		w.Header().Set("content-type", "application/json")
		switch r.URL.Path {
		case "/v1/models":
			io.WriteString(w, `{"data":[{"id":"claude-sonnet-4-5","type":"model"},{"id":"claude-haiku-4-5","type":"model"}],"has_more":false}`)
		case "/v1/messages":
			io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"model":"claude-sonnet-4-5","stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":2}}`)
		default:
			w.WriteHeader(404)
			io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"no"}}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &keys
}

// watchLog starts listening for the next "log" event; the function it
// returns waits for it (the row is written in the writer's next batch,
// which announces it), failing the test after 5 s.
func (h *harness) watchLog() func() {
	h.t.Helper()
	events, unsubscribe := h.app.Events().Subscribe()
	logged := make(chan struct{})
	go func() {
		for ev := range events {
			if ev.Name == "log" {
				close(logged)
				return
			}
		}
	}()
	return func() {
		h.t.Helper()
		defer unsubscribe()
		select {
		case <-logged:
		case <-time.After(5 * time.Second):
			h.t.Fatal("no log event within 5s")
		}
	}
}

// failWrites makes every write to table in h's database fail until the
// returned func runs: a real SQLite error from the file the App uses, as a
// full disk would give, not a stand-in for the store.
func failWrites(t *testing.T, h *harness, table string) (restore func()) {
	t.Helper()
	// The App may be writing too (its persistence loop retries): wait for it.
	raw, err := sql.Open("sqlite", "file:"+h.app.db.Path()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	for _, op := range []string{"INSERT", "UPDATE"} {
		q := fmt.Sprintf(`CREATE TRIGGER fail_%s_%s BEFORE %s ON %s BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`,
			op, table, op, table)
		if _, err := raw.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		for _, op := range []string{"INSERT", "UPDATE"} {
			if _, err := raw.ExecContext(t.Context(), fmt.Sprintf(`DROP TRIGGER fail_%s_%s`, op, table)); err != nil {
				t.Fatal(err)
			}
		}
	}
}
