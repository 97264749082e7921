package app

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/store"
)

// refusingRelay answers 400 in Anthropic's words to a request that carries
// context_management, and like Anthropic otherwise; it counts refusals.
func refusingRelay(t *testing.T, refused *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("content-type", "application/json")
		if strings.Contains(string(b), `"context_management"`) {
			refused.Add(1)
			w.WriteHeader(400)
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"context_management: Extra inputs are not permitted"}}`)
			return
		}
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"model":"claude-sonnet-4-5","stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":2}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (h *harness) postClaudeCodeTurn(t *testing.T) int {
	t.Helper()
	return h.postLogged(t, `{"model":"claude-sonnet-4-5","max_tokens":5,"context_management":{"edits":[]},"messages":[{"role":"user","content":"hi"}]}`).StatusCode
}

// waitDrops polls the endpoint until its drops are n long.
func (h *harness) waitDrops(t *testing.T, id int64, n int) []store.EndpointDrop {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		e := okAs[EndpointReply](t, h.do("GET", "/api/endpoints/"+strconv.FormatInt(id, 10), ""))
		if len(e.Drops) == n || time.Now().After(deadline) {
			return e.Drops
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// What a relay refuses is learned once, kept with the endpoint across a
// restart, shown with the refusal that taught it, and removable; a drop
// entered by hand must be on the list.
func TestDropsLearnedAndKept(t *testing.T) {
	var refused atomic.Int32
	relay := refusingRelay(t, &refused)
	h := newHarness(t)
	e := h.mustCreate(`{"name":"relay","base_url":"` + relay.URL + `","protocol":"anthropic","api_key":"k-relay-0123456789"}`)
	for range 2 {
		if got := h.postClaudeCodeTurn(t); got != 200 {
			t.Fatalf("turn: %d", got)
		}
	}
	ds := h.waitDrops(t, e.ID, 1)
	if len(ds) != 1 || ds[0].Drop != "context_management" || ds[0].Source != "learned" || !strings.Contains(ds[0].Error, "Extra inputs are not permitted") || ds[0].At.IsZero() {
		t.Fatalf("drops %+v", ds)
	}
	if refused.Load() != 1 {
		t.Errorf("the relay refused %d requests, want 1", refused.Load())
	}

	h = h.restart()
	if ds := h.waitDrops(t, e.ID, 1); len(ds) != 1 {
		t.Fatalf("after restart: %+v", ds)
	}
	h.postClaudeCodeTurn(t)
	if refused.Load() != 1 {
		t.Errorf("after restart the relay refused %d requests, want 1", refused.Load())
	}

	bad := h.do("PUT", "/api/endpoints/"+strconv.FormatInt(e.ID, 10), `{"drops":[{"drop":"messages"}]}`)
	if bad.status != 422 || !strings.Contains(string(bad.body), `"drops[0].drop"`) {
		t.Errorf("a drop of what is asked: %d %s", bad.status, bad.body)
	}
	manual := okAs[EndpointReply](t, h.do("PUT", "/api/endpoints/"+strconv.FormatInt(e.ID, 10), `{"drops":[{"drop":"beta:context-management-2025-06-27"}]}`))
	if len(manual.Drops) != 1 || manual.Drops[0].Source != "manual" || manual.Drops[0].At.IsZero() {
		t.Errorf("entered by hand: %+v", manual.Drops)
	}
	h.postClaudeCodeTurn(t)
	if refused.Load() != 2 {
		t.Errorf("cleared, the refusal came back %d times, want once more (2)", refused.Load())
	}
	h.waitDrops(t, e.ID, 2)
	// Another URL is another upstream: what was learned goes, what was
	// entered by hand stays.
	moved := okAs[EndpointReply](t, h.do("PUT", "/api/endpoints/"+strconv.FormatInt(e.ID, 10), `{"base_url":"`+relay.URL+`/"}`))
	if moved.BaseURL == e.BaseURL {
		moved = okAs[EndpointReply](t, h.do("PUT", "/api/endpoints/"+strconv.FormatInt(e.ID, 10), `{"base_url":"`+relay.URL+`/v1"}`))
	}
	if len(moved.Drops) != 1 || moved.Drops[0].Source != "manual" {
		t.Errorf("after a new base_url: %+v", moved.Drops)
	}
	list := okAs[DroppableReply](t, h.do("GET", "/api/droppable", ""))
	if len(list.Parts) < 10 || list.Parts[0].Why == "" || list.BetaPrefix != "beta:" {
		t.Errorf("droppable %+v", list)
	}
}

// everyEndpointField is a create body that sets every field of the
// endpoint patch to a value other than its default; the test below fails
// when the patch has a field it does not set.
const everyEndpointField = `{"name":"every","base_url":"http://127.0.0.1:9/v1","api_key":"sk-every-0123456789","protocol":"openai-chat",
	"auth":"x-api-key","models":["gpt-*"],"model_map":{"claude-*":"gpt-5"},"enabled":false,"fast":true,"fast_sort_order":0,
	"sort_order":3,"breaker_overrides":{"failure_threshold":3},"price_multiplier":0.25,"hedge_after_ms":1500,
	"drops":[{"drop":"stream_options","source":"learned","at":"2026-12-01T10:00:00Z","error":"400: refused"}],"on_model_mismatch":"fail",
	"balance":{"template":"relay","low_threshold":5},"proxy_url":"socks5h://user@127.0.0.1:9","keys":[{"label":"main","key":"sk-every-0123456789"},{"label":"spare","key":"sk-every-9876543210","weight":2}],"weight":2,"tags":["cheap","eu"]}`

// Every endpoint field travels through export and import (and the sync
// file, which is the export's document): a field the field table has but
// the backup leaves out fails here.
func TestEveryEndpointFieldTravels(t *testing.T) {
	var set map[string]json.RawMessage
	if err := json.Unmarshal([]byte(everyEndpointField), &set); err != nil {
		t.Fatal(err)
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[store.EndpointPatch]()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if _, ok := set[name]; !ok {
			t.Errorf("everyEndpointField does not set %q", name)
		}
	}
	src := newHarness(t)
	want := src.mustCreate(everyEndpointField)
	exp := src.do("GET", "/api/export", "")
	dst := newHarness(t)
	if r := dst.do("POST", "/api/import", string(exp.body)); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	got := okAs[[]EndpointReply](t, dst.do("GET", "/api/endpoints", ""))
	if len(got) != 1 {
		t.Fatalf("imported %d endpoints", len(got))
	}
	gv, wv := reflect.ValueOf(got[0].Endpoint), reflect.ValueOf(want.Endpoint)
	for _, f := range reflect.VisibleFields(gv.Type()) {
		switch f.Name {
		case "ID", "APIKey", "CreatedAt", "UpdatedAt": // the file's keys are left out; ids and times are the importer's
			continue
		}
		if g, w := gv.FieldByIndex(f.Index).Interface(), wv.FieldByIndex(f.Index).Interface(); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: imported %#v, exported %#v", f.Name, g, w)
		}
	}
	if got[0].ProxyURL != want.ProxyURL || want.ProxyURL == "" {
		t.Errorf("proxy_url: imported %q, exported %q", got[0].ProxyURL, want.ProxyURL)
	}
	// The sync file carries the same document, keys included.
	doc := exportOf(src.app.state.Load(), true, time.Now())
	if p := doc.Endpoints[0]; p.APIKey == nil || *p.APIKey != "sk-every-0123456789" || p.Drops == nil || len(*p.Drops) != 1 {
		t.Errorf("sync document endpoint %+v", p)
	}
}

// An answer from another model is in its log row and counted on the
// endpoint's health for 24 hours, across a restart.
func TestOtherModelCounted(t *testing.T) {
	up, _ := fakeAnthropic(t) // answers every request as claude-sonnet-4-5
	h := newHarness(t)
	e := h.mustCreate(`{"name":"up","base_url":"` + up.URL + `","protocol":"anthropic","api_key":"k-up-0123456789"}`)
	h.postMessages(t, "claude-opus-4-8")
	h.postMessages(t, "claude-sonnet-4-5-20250929") // the same model, dated
	page := okAs[struct {
		Items []store.RequestLog `json:"items"`
	}](t, h.do("GET", "/api/logs", ""))
	if len(page.Items) != 2 || page.Items[1].ModelAnswered != "claude-sonnet-4-5" || page.Items[0].ModelAnswered != "" {
		t.Fatalf("rows %+v", page.Items)
	}
	count := func(h *harness) int64 {
		for _, x := range okAs[[]Health](t, h.do("GET", "/api/health", "")) {
			if x.ID == e.ID {
				return x.OtherModel24h
			}
		}
		return -1
	}
	if got := count(h); got != 1 {
		t.Errorf("other_model_24h = %d, want 1", got)
	}
	h = h.restart()
	deadline := time.Now().Add(5 * time.Second)
	for count(h) != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := count(h); got != 1 {
		t.Errorf("after a restart other_model_24h = %d, want 1", got)
	}
}
