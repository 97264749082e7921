package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

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

func TestTestAndFetchModels(t *testing.T) {
	h := newHarness(t)
	up, keys := fakeAnthropic(t)
	e := h.mustCreate(`{"name":"up","base_url":"` + up.URL + `","protocol":"anthropic","api_key":"` + secretKey + `"}`)

	var res TestResult
	r := h.do("POST", fmt.Sprintf("/api/endpoints/%d/test", e.ID), "")
	r.decode(t, &res)
	if r.status != 200 || !res.OK || res.Status != 200 {
		t.Errorf("test: %d %+v", r.status, res)
	}
	var hs []Health
	h.do("GET", "/api/health", "").decode(t, &hs)
	if hs[0].LastTest == nil || !hs[0].LastTest.OK {
		t.Errorf("health lacks the test result: %+v", hs[0])
	}

	var fm struct {
		Models   []string      `json:"models"`
		Endpoint EndpointReply `json:"endpoint"`
	}
	r = h.do("POST", fmt.Sprintf("/api/endpoints/%d/fetch-models", e.ID), "")
	r.decode(t, &fm)
	want := []string{"claude-sonnet-4-5", "claude-haiku-4-5"}
	if r.status != 200 || !slices.Equal(fm.Models, want) || !slices.Equal(fm.Endpoint.Models, want) {
		t.Errorf("fetch-models: %d %+v, want %v", r.status, fm, want)
	}
	for i, k := range *keys {
		if k != secretKey {
			t.Errorf("upstream request %d carried key %q, want the endpoint's", i, k)
		}
	}

	dead := h.mustCreate(`{"name":"dead","base_url":"http://127.0.0.1:1","protocol":"anthropic"}`)
	r = h.do("POST", fmt.Sprintf("/api/endpoints/%d/test", dead.ID), "")
	r.decode(t, &res)
	if res.OK || !strings.Contains(res.Message, "could not reach") {
		t.Errorf("test of a dead endpoint: %+v", res)
	}
	if r := h.do("POST", fmt.Sprintf("/api/endpoints/%d/fetch-models", dead.ID), ""); r.status != 502 || r.errCode() != "upstream_unreachable" {
		t.Errorf("fetch-models of a dead endpoint: %d %q", r.status, r.errCode())
	}
}

// Traffic through the proxy makes a log row, figures in health and a stats
// point; the key appears in none of them nor in the process log.
func TestTrafficLogsAndStats(t *testing.T) {
	h := newHarness(t)
	up, _ := fakeAnthropic(t)
	h.mustCreate(`{"name":"up","base_url":"` + up.URL + `","protocol":"anthropic","api_key":"` + secretKey + `"}`)
	events, unsubscribe := h.app.Events().Subscribe()
	defer unsubscribe()
	logged := make(chan struct{})
	go func() {
		for ev := range events {
			if ev.Name == "log" {
				close(logged)
				return
			}
		}
	}()
	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/messages?beta=true", strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-api-key", "client-key")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("x-ccmesh-endpoint") != "up" {
		t.Fatalf("proxy: %d via %q", res.StatusCode, res.Header.Get("x-ccmesh-endpoint"))
	}

	select { // the row is written in the writer's next batch, which announces it
	case <-logged:
	case <-time.After(5 * time.Second):
		t.Fatal("no log event within 5s")
	}
	var page struct {
		Items []map[string]any `json:"items"`
	}
	h.do("GET", "/api/logs?endpoint=up", "").decode(t, &page)
	if len(page.Items) != 1 || page.Items[0]["status"] != float64(200) || page.Items[0]["tokens_in"] != float64(5) {
		t.Fatalf("logs = %+v", page.Items)
	}
	id := int64(page.Items[0]["id"].(float64))
	var row map[string]any
	h.do("GET", fmt.Sprintf("/api/logs/%d", id), "").decode(t, &row)
	hist, _ := row["history"].([]any)
	if len(hist) != 1 || hist[0].(map[string]any)["outcome"] != "success" {
		t.Errorf("history = %v", row["history"])
	}

	var hs []Health
	h.do("GET", "/api/health", "").decode(t, &hs)
	if hs[0].SuccessRate == nil || *hs[0].SuccessRate != 1 || hs[0].P50Ms == nil {
		t.Errorf("health figures = %+v", hs[0])
	}
	var st struct {
		Points []map[string]any `json:"points"`
	}
	h.do("GET", "/api/stats?minutes=5", "").decode(t, &st)
	if len(st.Points) != 1 || st.Points[0]["requests"] != float64(1) || st.Points[0]["errors"] != float64(0) {
		t.Errorf("stats = %+v", st.Points)
	}

	all := h.logs.String() + string(h.do("GET", fmt.Sprintf("/api/logs/%d", id), "").body)
	if strings.Contains(all, "secret-0123") {
		t.Errorf("the key leaked into a log: %s", all)
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

func TestClaudeCodeConnect(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(h.app.opts.HomeDir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o700)
	old := `{"model":"opus","env":{"FOO":"bar"}}`
	os.WriteFile(path, []byte(old), 0o600)

	var cc ClaudeCode
	h.do("GET", "/api/claude-code", "").decode(t, &cc)
	if cc.Current != old || !strings.Contains(cc.Proposed, `"ANTHROPIC_BASE_URL": "http://127.0.0.1:3457"`) ||
		!strings.Contains(cc.Proposed, `"FOO": "bar"`) || cc.Exports != "export ANTHROPIC_BASE_URL=http://127.0.0.1:3457\n" {
		t.Fatalf("preview = %+v", cc)
	}
	var applied map[string]string
	h.do("POST", "/api/claude-code/apply", "").decode(t, &applied)
	if b, _ := os.ReadFile(applied["backup_path"]); string(b) != old {
		t.Errorf("backup holds %q, want the old file", b)
	}
	now, _ := os.ReadFile(path)
	var doc struct {
		Model string
		Env   map[string]string
	}
	if err := json.Unmarshal(now, &doc); err != nil || doc.Model != "opus" || doc.Env["FOO"] != "bar" || doc.Env["ANTHROPIC_BASE_URL"] != "http://127.0.0.1:3457" {
		t.Errorf("settings after apply = %s (%v)", now, err)
	}

	os.WriteFile(path, []byte("{not json"), 0o600)
	if r := h.do("POST", "/api/claude-code/apply", ""); r.status != 409 || r.errCode() != "claude_settings_unreadable" {
		t.Errorf("unreadable settings: %d %q", r.status, r.errCode())
	}
	if b, _ := os.ReadFile(path); string(b) != "{not json" {
		t.Errorf("an unreadable settings file was overwritten: %s", b)
	}
}

// The live stream sends the lists at once and a change within a second.
func TestEventStream(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	req, _ := http.NewRequest("GET", h.srv.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("content-type"); ct != "text/event-stream" {
		t.Fatalf("content-type %q", ct)
	}
	events := make(chan [2]string, 64)
	go func() {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		var name string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				events <- [2]string{name, v}
			}
		}
		close(events)
	}()
	next := func(want string) string {
		t.Helper()
		timeout := time.After(3 * time.Second)
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("stream ended before %q", want)
				}
				if ev[0] == want {
					return ev[1]
				}
			case <-timeout:
				t.Fatalf("no %q event", want)
			}
		}
	}
	if d := next("endpoints"); !strings.Contains(d, `"name":"a"`) {
		t.Errorf("first endpoints event = %s", d)
	}
	next("health")
	h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", e.ID), "")
	if d := next("health"); !strings.Contains(d, `"status":"unhealthy"`) {
		t.Errorf("health after force-open = %s", d)
	}
}

// Shutting the server down ends open event streams at once, so an open UI
// does not hold the shutdown for the whole grace period.
func TestShutdownEndsEventStreams(t *testing.T) {
	h := newHarness(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.app.Serve(ctx, ln) }()
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(ShutdownGrace / 2):
		t.Fatal("shutdown waited on the open event stream")
	}
}

func TestFavicon(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/favicon.ico", "")
	if r.status != 200 || r.header.Get("Content-Type") != "image/png" {
		t.Errorf("favicon: %d %q", r.status, r.header.Get("Content-Type"))
	}
}

// The listen setting applies at the next start, unless --listen is given.
func TestListenSetting(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ body, code string }{
		{`{"listen":"3457"}`, "invalid_setting"},
		{`{"listen":"127.0.0.1:99999"}`, "invalid_setting"},
		{`{"listen":"0.0.0.0:3457"}`, "invalid_setting"}, // no client token
	} {
		if r := h.do("PUT", "/api/settings", tc.body); r.status != 422 || r.errCode() != tc.code {
			t.Errorf("%s: got %d %q, want 422 %q", tc.body, r.status, r.errCode(), tc.code)
		}
	}
	if r := h.do("PUT", "/api/settings", `{"listen":"127.0.0.1:4999"}`); r.status != 200 {
		t.Fatalf("put listen: %d %s", r.status, r.body)
	}
	if got := h.app.Info().Listen; got != "127.0.0.1:3457" {
		t.Errorf("before a restart Info().Listen = %q, want the running address", got)
	}
	h = h.restart()
	if got := h.app.Info().Listen; got != "127.0.0.1:4999" {
		t.Errorf("after a restart Info().Listen = %q, want the setting", got)
	}
	dir := h.dir
	h.stop()
	a, err := New(context.Background(), Options{DataDir: dir, Listen: "127.0.0.1:5001", ListenIsFlag: true, AdminToken: testToken})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	if got := a.Info().Listen; got != "127.0.0.1:5001" {
		t.Errorf("with --listen Info().Listen = %q, want the flag's", got)
	}
}
