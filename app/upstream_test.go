package app

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/proxy"
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
