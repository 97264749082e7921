package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/app/probe"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

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

	var fm FetchModelsReply
	r = h.do("POST", fmt.Sprintf("/api/endpoints/%d/fetch-models", e.ID), "")
	r.decode(t, &fm)
	want := []string{"claude-sonnet-4-5", "claude-haiku-4-5"}
	if r.status != 200 || !slices.Equal(fm.Models, want) || fm.Truncated {
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

// Test and Fetch models never follow a redirect: the endpoint's key would
// go to the host the Location names (docs/BEHAVIOUR.md#safety).
func TestUpstreamActionsDoNotFollowRedirects(t *testing.T) {
	for _, code := range []int{301, 302, 307, 308} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			h := newHarness(t)
			var mu sync.Mutex
			var elsewhereKeys []string
			elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				elsewhereKeys = append(elsewhereKeys, r.Header.Get("x-api-key"))
				mu.Unlock()
				io.WriteString(w, `{"data":[{"id":"stolen-list"}]}`)
			}))
			defer elsewhere.Close()
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.URL+r.URL.Path, code)
			}))
			defer up.Close()
			e := h.mustCreate(`{"name":"up","base_url":"` + up.URL + `","protocol":"anthropic","api_key":"` + secretKey + `"}`)

			var res TestResult
			h.do("POST", fmt.Sprintf("/api/endpoints/%d/test", e.ID), "").decode(t, &res)
			if res.OK || res.Status != code || !strings.Contains(res.Message, "redirect to "+elsewhere.URL) ||
				!strings.Contains(res.Message, "does not follow redirects") {
				t.Errorf("test: %+v, want a failed test naming the redirect", res)
			}
			r := h.do("POST", fmt.Sprintf("/api/endpoints/%d/fetch-models", e.ID), "")
			if r.status != 502 || r.errCode() != "upstream_redirect" {
				t.Errorf("fetch-models: %d %s, want 502 upstream_redirect", r.status, r.body)
			}
			var got EndpointReply
			h.do("GET", fmt.Sprintf("/api/endpoints/%d", e.ID), "").decode(t, &got)
			if len(got.Models) != 0 {
				t.Errorf("models after a refused fetch = %v, want none saved", got.Models)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(elsewhereKeys) != 0 {
				t.Errorf("the redirect target got %d request(s), with keys %q", len(elsewhereKeys), elsewhereKeys)
			}
		})
	}
}

// A key an upstream echoes is masked in the Test result, health and the
// Fetch models error (docs/BEHAVIOUR.md#safety).
func TestUpstreamEchoedKeysMasked(t *testing.T) {
	h := newHarness(t)
	const clientToken = "ccmesh-client-token-0123456789"
	if r := h.do("PUT", "/api/settings", `{"client_token":"`+clientToken+`"}`); r.status != 200 {
		t.Fatalf("set client token: %d %s", r.status, r.body)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(401)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key %s (client %s)"}}`,
			r.Header.Get("x-api-key"), clientToken)
	}))
	defer up.Close()
	e := h.mustCreate(`{"name":"up","base_url":"` + up.URL + `","protocol":"anthropic","api_key":"` + secretKey + `"}`)
	masked := proxy.MaskKey(secretKey)
	check := func(where, text string) {
		t.Helper()
		if strings.Contains(text, secretKey) || strings.Contains(text, clientToken) {
			t.Errorf("%s shows a secret: %s", where, text)
		}
		if !strings.Contains(text, masked) {
			t.Errorf("%s lacks the key's mask %q: %s", where, masked, text)
		}
	}

	var res TestResult
	h.do("POST", fmt.Sprintf("/api/endpoints/%d/test", e.ID), "").decode(t, &res)
	check("the test result", res.Message)
	r := h.do("POST", fmt.Sprintf("/api/endpoints/%d/fetch-models", e.ID), "")
	if r.status != 502 {
		t.Errorf("fetch-models: %d, want 502", r.status)
	}
	check("the fetch-models error", string(r.body))

	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/messages", strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":1,"messages":[]}`))
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-api-key", clientToken)
	if res, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	var hs []Health
	h.do("GET", "/api/health", "").decode(t, &hs)
	if len(hs) != 1 || hs[0].LastTest == nil || hs[0].LastError == "" {
		t.Fatalf("health = %+v, want a last test and a last error", hs)
	}
	check("health's last test", hs[0].LastTest.Message)
	check("health's last error", hs[0].LastError)

	h = h.restart()
	h.do("GET", "/api/health", "").decode(t, &hs)
	if len(hs) != 1 || hs[0].LastTest == nil {
		t.Fatalf("health after a restart = %+v, want the last test", hs)
	}
	check("health's last test after a restart", hs[0].LastTest.Message)
}

// The last test result is kept in the database: a second App on the same
// data dir shows it; deleting the endpoint removes it (docs/BEHAVIOUR.md#health).
func TestLastTestSurvivesRestart(t *testing.T) {
	h := newHarness(t)
	up, _ := fakeAnthropic(t)
	e := h.mustCreate(`{"name":"up","base_url":"` + up.URL + `","protocol":"anthropic","api_key":"` + secretKey + `"}`)
	var res TestResult
	h.do("POST", fmt.Sprintf("/api/endpoints/%d/test", e.ID), "").decode(t, &res)
	if !res.OK {
		t.Fatalf("test: %+v", res)
	}

	h = h.restart()
	var hs []Health
	h.do("GET", "/api/health", "").decode(t, &hs)
	if len(hs) != 1 || hs[0].LastTest == nil {
		t.Fatalf("health after a restart = %+v, want the last test", hs)
	}
	got := *hs[0].LastTest
	if got.OK != res.OK || got.Status != res.Status || got.LatencyMs != res.LatencyMs || got.Message != res.Message ||
		!got.At.Equal(res.At.Truncate(time.Millisecond)) {
		t.Errorf("last test after a restart = %+v, want %+v", got, res)
	}

	if r := h.do("DELETE", fmt.Sprintf("/api/endpoints/%d", e.ID), ""); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	h.mustCreate(`{"name":"next","base_url":"` + up.URL + `","protocol":"anthropic"}`)
	for range 2 {
		h.do("GET", "/api/health", "").decode(t, &hs)
		if len(hs) != 1 || hs[0].LastTest != nil {
			t.Errorf("health after the tested endpoint was deleted = %+v, want no last test", hs)
		}
		h = h.restart()
	}
}

// Fetch models follows the upstream's pages, stops at probe.MaxModels
// with truncated set, and saves nothing: the user accepts the list with a
// PUT (docs/BEHAVIOUR.md#health).
func TestFetchModelsPages(t *testing.T) {
	ids := func(prefix string, from, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s-%04d", prefix, from+i)
		}
		return out
	}
	type page struct {
		ids     []string
		hasMore bool
		lastID  string
	}
	cases := []struct {
		name      string
		protocol  string
		pages     map[string]page // by the request's query
		want      []string
		truncated bool
		queries   []string
	}{{
		name: "anthropic pages", protocol: "anthropic",
		pages: map[string]page{
			"limit=1000":            {[]string{"a", "b"}, true, "b"},
			"after_id=b&limit=1000": {[]string{"c", "b", "d"}, true, "d"},
			"after_id=d&limit=1000": {[]string{"e"}, false, "e"},
		},
		want:    []string{"a", "b", "c", "d", "e"},
		queries: []string{"limit=1000", "after_id=b&limit=1000", "after_id=d&limit=1000"},
	}, {
		name: "openai single page", protocol: "openai-chat",
		pages:   map[string]page{"": {[]string{"gpt-4o", "gpt-4o-mini"}, false, ""}},
		want:    []string{"gpt-4o", "gpt-4o-mini"},
		queries: []string{""},
	}, {
		name: "openai has_more without last_id", protocol: "openai-chat",
		pages: map[string]page{
			"":        {[]string{"x", "y"}, true, ""},
			"after=y": {[]string{"z"}, false, ""},
		},
		want:    []string{"x", "y", "z"},
		queries: []string{"", "after=y"},
	}, {
		name: "a cursor that does not move", protocol: "anthropic",
		pages: map[string]page{
			"limit=1000":            {[]string{"a"}, true, "a"},
			"after_id=a&limit=1000": {[]string{"b"}, true, "a"},
		},
		want: []string{"a", "b"}, truncated: true,
		queries: []string{"limit=1000", "after_id=a&limit=1000"},
	}, {
		name: "more than the cap", protocol: "anthropic",
		pages: map[string]page{
			"limit=1000":                 {ids("m", 0, 1000), true, "m-0999"},
			"after_id=m-0999&limit=1000": {ids("m", 1000, 1000), true, "m-1999"},
			"after_id=m-1999&limit=1000": {ids("m", 2000, 1000), true, "m-2999"},
			"after_id=m-2999&limit=1000": {ids("m", 3000, 1000), false, "m-3999"},
		},
		want: ids("m", 0, probe.MaxModels), truncated: true,
		queries: []string{"limit=1000", "after_id=m-0999&limit=1000", "after_id=m-1999&limit=1000"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			var mu sync.Mutex
			var queries []string
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				queries = append(queries, r.URL.RawQuery)
				mu.Unlock()
				p, ok := tc.pages[r.URL.RawQuery]
				if r.URL.Path != "/v1/models" || !ok {
					http.Error(w, "no such page", 404)
					return
				}
				data := make([]map[string]string, len(p.ids))
				for i, id := range p.ids {
					data[i] = map[string]string{"id": id, "type": "model"}
				}
				w.Header().Set("content-type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{"data": data, "has_more": p.hasMore, "last_id": p.lastID})
			}))
			defer up.Close()
			e := h.mustCreate(`{"name":"up","base_url":"` + up.URL + `","protocol":"` + tc.protocol + `","models":["keep-*"]}`)

			var fm FetchModelsReply
			r := h.do("POST", fmt.Sprintf("/api/endpoints/%d/fetch-models", e.ID), "")
			r.decode(t, &fm)
			if r.status != 200 || !slices.Equal(fm.Models, tc.want) || fm.Truncated != tc.truncated {
				t.Errorf("fetch-models: %d, %d models (truncated %v), want %d (truncated %v)\n got %.300v\nwant %.300v",
					r.status, len(fm.Models), fm.Truncated, len(tc.want), tc.truncated, fm.Models, tc.want)
			}
			mu.Lock()
			if !slices.Equal(queries, tc.queries) {
				t.Errorf("the upstream was asked %q, want %q", queries, tc.queries)
			}
			mu.Unlock()
			var got EndpointReply
			h.do("GET", fmt.Sprintf("/api/endpoints/%d", e.ID), "").decode(t, &got)
			if !slices.Equal(got.Models, []string{"keep-*"}) {
				t.Errorf("models after fetch-models = %v, want them unchanged until the user accepts", got.Models)
			}
		})
	}
}

// A page that fails fails the whole fetch: half a list is never offered.
func TestFetchModelsPageFails(t *testing.T) {
	h := newHarness(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("after_id") != "" {
			http.Error(w, `{"type":"error","error":{"type":"api_error","message":"boom"}}`, 500)
			return
		}
		io.WriteString(w, `{"data":[{"id":"a"}],"has_more":true,"last_id":"a"}`)
	}))
	defer up.Close()
	e := h.mustCreate(`{"name":"up","base_url":"` + up.URL + `","protocol":"anthropic"}`)
	r := h.do("POST", fmt.Sprintf("/api/endpoints/%d/fetch-models", e.ID), "")
	var body struct{ Error apiError }
	r.decode(t, &body)
	if r.status != 502 || body.Error.Code != "upstream_error" || !strings.Contains(body.Error.Message, "page 2") {
		t.Errorf("fetch-models: %d %s, want 502 upstream_error naming page 2", r.status, r.body)
	}
}

// A gemini endpoint's Test probe and model list go to the Gemini API's own
// paths with the key in x-goog-api-key (the fake refuses anything else).
func TestTestAndFetchModelsGemini(t *testing.T) {
	h := newHarness(t)
	g := proxytest.NewGemini(t, secretKey)
	g.SetModels("gemini-2.5-flash", "gemini-2.5-pro")
	e := h.mustCreate(`{"name":"g","base_url":"` + g.URL + `","protocol":"gemini","api_key":"` + secretKey + `"}`)
	var res TestResult
	r := h.do("POST", fmt.Sprintf("/api/endpoints/%d/test", e.ID), "")
	r.decode(t, &res)
	if r.status != 200 || !res.OK || res.Status != 200 {
		t.Errorf("test: %d %+v", r.status, res)
	}
	var fm FetchModelsReply
	r = h.do("POST", fmt.Sprintf("/api/endpoints/%d/fetch-models", e.ID), "")
	r.decode(t, &fm)
	if want := []string{"gemini-2.5-flash", "gemini-2.5-pro"}; r.status != 200 || !slices.Equal(fm.Models, want) {
		t.Errorf("fetch-models: %d %+v, want %v", r.status, fm, want)
	}
	for _, req := range g.Requests() {
		if req.Header.Get("X-Goog-Api-Key") != secretKey || !strings.HasPrefix(req.Path, "/v1beta/models") {
			t.Errorf("request %s with key header %q", req.Path, req.Header.Get("X-Goog-Api-Key"))
		}
	}
}
