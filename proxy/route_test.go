package proxy

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// TestRoutableList: the fast queue when non-empty, else the full list;
// protocol and model filters; all Open → 502 with reasons, never a fall
// back to endpoints the filters removed.
func TestRoutableList(t *testing.T) {
	ok := func() *proxytest.Upstream { return upstream(t, okClaude()) }
	tests := []struct {
		name     string
		mk       func(a, b, c *proxytest.Upstream) []Endpoint
		open     []int64 // force these breakers open
		body     string
		wantCode int
		wantEp   string
		wantIn   string // substring of the body
	}{
		{
			name: "fast queue used when non-empty, in fast order",
			mk: func(a, b, c *proxytest.Upstream) []Endpoint {
				ea, eb, ec := ep(1, "a", a.URL), ep(2, "b", b.URL), ep(3, "c", c.URL)
				eb.Fast, eb.FastSortOrder = true, 2
				ec.Fast, ec.FastSortOrder = true, 1
				return []Endpoint{ea, eb, ec}
			},
			wantCode: 200, wantEp: "c",
		},
		{
			name: "full list by sort_order when the fast queue is empty",
			mk: func(a, b, c *proxytest.Upstream) []Endpoint {
				ea, eb, ec := ep(1, "a", a.URL), ep(2, "b", b.URL), ep(3, "c", c.URL)
				ea.SortOrder, eb.SortOrder, ec.SortOrder = 9, 1, 5
				return []Endpoint{ea, eb, ec}
			},
			wantCode: 200, wantEp: "b",
		},
		{
			name: "disabled fast endpoint does not make a fast queue",
			mk: func(a, b, c *proxytest.Upstream) []Endpoint {
				ea, eb := ep(1, "a", a.URL), ep(2, "b", b.URL)
				eb.Fast, eb.Enabled = true, false
				return []Endpoint{ea, eb}
			},
			wantCode: 200, wantEp: "a",
		},
		{
			name: "model filter",
			mk: func(a, b, c *proxytest.Upstream) []Endpoint {
				ea, eb := ep(1, "a", a.URL), ep(2, "b", b.URL)
				ea.Models = []string{"claude-opus-*", "*haiku*"}
				eb.Models = []string{"claude-sonnet-*"}
				return []Endpoint{ea, eb}
			},
			wantCode: 200, wantEp: "b",
		},
		{
			name: "protocol filter",
			mk: func(a, b, c *proxytest.Upstream) []Endpoint {
				return []Endpoint{chatEp(1, "a", a.URL), ep(2, "b", b.URL)}
			},
			wantCode: 200, wantEp: "b",
		},
		{
			name: "no endpoint serves the model",
			mk: func(a, b, c *proxytest.Upstream) []Endpoint {
				ea := ep(1, "a", a.URL)
				ea.Models = []string{"claude-opus-*"}
				return []Endpoint{ea, chatEp(2, "b", b.URL)}
			},
			wantCode: 502, wantIn: "serves model claude-sonnet-4-5",
		},
		{
			name: "fast queue all open: 502, no fallback to the full list",
			mk: func(a, b, c *proxytest.Upstream) []Endpoint {
				ea, eb, ec := ep(1, "a", a.URL), ep(2, "b", b.URL), ep(3, "c", c.URL)
				ea.Fast, eb.Fast = true, true
				return []Endpoint{ea, eb, ec}
			},
			open:     []int64{1, 2},
			wantCode: 502, wantIn: "all 2 endpoints for model claude-sonnet-4-5 are unavailable: a is open (manual); b is open (manual)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b, c := ok(), ok(), ok()
			h := newHarness(t, Config{Endpoints: tc.mk(a, b, c)})
			for _, id := range tc.open {
				h.breakers.Get(id).ForceOpen()
			}
			got := h.post("/v1/messages", claudeBody)
			rec := h.record()
			if got.status != tc.wantCode {
				t.Fatalf("status = %d, want %d: %s", got.status, tc.wantCode, got.body)
			}
			if ep := got.header.Get("X-Ccmesh-Endpoint"); ep != tc.wantEp {
				t.Errorf("x-ccmesh-endpoint = %q, want %q", ep, tc.wantEp)
			}
			if !strings.Contains(got.body, tc.wantIn) {
				t.Errorf("body %s lacks %q", got.body, tc.wantIn)
			}
			if tc.wantCode != 200 && a.Count()+b.Count()+c.Count() != 0 {
				t.Errorf("an upstream was called: %d/%d/%d", a.Count(), b.Count(), c.Count())
			}
			if tc.wantCode != 200 && rec.SentUpstream {
				t.Error("record says sent upstream")
			}
		})
	}
}

// TestExplicitEndpoint: the three ways to name an endpoint, precedence,
// prefix stripping, breaker bypass, bad names and the budget of 3.
func TestExplicitEndpoint(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		model    string
		header   string
		wantCode int
		wantEp   string
		wantIn   string
	}{
		{name: "header", path: "/v1/messages?beta=true", model: "claude-sonnet-4-5", header: "b", wantCode: 200, wantEp: "b"},
		{name: "model prefix", path: "/v1/messages?beta=true", model: "@b/claude-sonnet-4-5", wantCode: 200, wantEp: "b"},
		{name: "query", path: "/v1/messages?beta=true&ccmesh_endpoint=b", model: "claude-sonnet-4-5", wantCode: 200, wantEp: "b"},
		{name: "header beats prefix, prefix still stripped", path: "/v1/messages?beta=true", model: "@c/claude-sonnet-4-5", header: "b", wantCode: 200, wantEp: "b"},
		{name: "prefix beats query", path: "/v1/messages?ccmesh_endpoint=c&beta=true", model: "@b/claude-sonnet-4-5", wantCode: 200, wantEp: "b"},
		{name: "skips the model filter", path: "/v1/messages?beta=true", model: "@c/claude-sonnet-4-5", wantCode: 200, wantEp: "c"},
		{name: "unknown name", path: "/v1/messages", model: "@nope/claude-sonnet-4-5", wantCode: 400, wantIn: `no endpoint is named \"nope\"`},
		{name: "disabled", path: "/v1/messages", model: "claude-sonnet-4-5", header: "off", wantCode: 400, wantIn: `endpoint \"off\" (named by the x-ccmesh-endpoint header) is disabled`},
		{name: "another protocol is translated", path: "/v1/messages", model: "claude-sonnet-4-5", header: "chat", wantCode: 200, wantEp: "chat"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b, c := upstream(t, okClaude()), upstream(t, okClaude()), upstream(t, okClaude())
			ec := ep(3, "c", c.URL)
			ec.Models = []string{"gpt-*"}
			off := ep(4, "off", a.URL)
			off.Enabled = false
			chat := upstream(t, proxytest.ChatCompletion("from chat", 1, 1))
			h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL), ep(2, "b", b.URL), ec, off, chatEp(5, "chat", chat.URL)}})
			h.breakers.Get(2).ForceOpen() // explicit requests still reach it
			body := strings.Replace(claudeBody, "claude-sonnet-4-5", tc.model, 1)
			got := h.post(tc.path, body, "x-ccmesh-endpoint", tc.header)
			rec := h.record()
			if got.status != tc.wantCode {
				t.Fatalf("status = %d, want %d: %s", got.status, tc.wantCode, got.body)
			}
			if !strings.Contains(got.body, tc.wantIn) {
				t.Errorf("body %s lacks %q", got.body, tc.wantIn)
			}
			if tc.wantCode != 200 {
				if n := a.Count() + b.Count() + c.Count(); n != 0 {
					t.Errorf("%d upstream calls, want none", n)
				}
				return
			}
			if got.header.Get("X-Ccmesh-Endpoint") != tc.wantEp || !rec.Explicit {
				t.Errorf("endpoint %q explicit %v, want %q explicit", got.header.Get("X-Ccmesh-Endpoint"), rec.Explicit, tc.wantEp)
			}
			if tc.wantEp == "chat" {
				if rec.Attempts[0].Translation != "anthropic→openai-chat" || chat.Count() != 1 {
					t.Errorf("translation %q, chat upstream saw %d", rec.Attempts[0].Translation, chat.Count())
				}
				return
			}
			target := map[string]*proxytest.Upstream{"b": b, "c": c}[tc.wantEp]
			reqs := target.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%s got %d requests, want 1", tc.wantEp, len(reqs))
			}
			if want := claudeBody; string(reqs[0].Body) != want {
				t.Errorf("forwarded body = %s, want %s", reqs[0].Body, want)
			}
			if reqs[0].RawQuery != "beta=true" {
				t.Errorf("forwarded query = %q, want beta=true", reqs[0].RawQuery)
			}
			if rec.ModelAsked != "claude-sonnet-4-5" || rec.ModelForwarded != "claude-sonnet-4-5" {
				t.Errorf("models asked/forwarded = %q/%q", rec.ModelAsked, rec.ModelForwarded)
			}
		})
	}
}

// TestExplicitBudgetAndCounting: an explicit endpoint gets 3 attempts on
// itself, and its failures count in its breaker even though it was open.
func TestExplicitBudgetAndCounting(t *testing.T) {
	a := upstream(t, proxytest.AnthropicError(503, "overloaded_error", "busy"))
	b := upstream(t, okClaude())
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL), ep(2, "b", b.URL)}})
	got := h.post("/v1/messages", claudeBody, "x-ccmesh-endpoint", "a")
	rec := h.record()
	if got.status != 503 || a.Count() != 3 || b.Count() != 0 {
		t.Fatalf("status %d, a=%d b=%d; want 503 after 3 attempts on a only", got.status, a.Count(), b.Count())
	}
	for i, at := range rec.Attempts {
		if !at.BreakerCounted || at.Outcome != breaker.Failure {
			t.Errorf("attempt %d: counted %v outcome %q, want a counted failure", i, at.BreakerCounted, at.Outcome)
		}
	}
	if c := h.breakers.Get(1).View(rec.Time).Counts.ConsecutiveFailures; c != 3 {
		t.Errorf("breaker consecutive failures = %d, want 3", c)
	}
}

// TestModelMap: model_map renames only the model bytes; the rest of the
// body is byte-for-byte the client's.
func TestModelMap(t *testing.T) {
	a := upstream(t, okClaude())
	e := ep(1, "a", a.URL)
	e.ModelMap = map[string]string{"claude-*": "glm-4.5", "claude-sonnet-*": "glm-4.6", "claude-sonnet-4-5": "glm-exact"}
	h := newHarness(t, Config{Endpoints: []Endpoint{e}})
	got := h.post("/v1/messages", claudeBody)
	rec := h.record()
	if got.status != 200 {
		t.Fatalf("status = %d", got.status)
	}
	want := strings.Replace(claudeBody, `"claude-sonnet-4-5"`, `"glm-exact"`, 1)
	if body := string(a.Requests()[0].Body); body != want {
		t.Errorf("forwarded %s, want %s", body, want)
	}
	if rec.ModelForwarded != "glm-exact" {
		t.Errorf("model_forwarded = %q", rec.ModelForwarded)
	}
}

// TestStickyCursor: the cursor moves past an endpoint exactly when the
// loop leaves it because it failed, so the next request starts after it.
func TestStickyCursor(t *testing.T) {
	tests := []struct {
		name      string
		fault     proxytest.Response
		wantFirst string // attempts of request 1
	}{
		{"two 5xx in a row", proxytest.AnthropicError(500, "api_error", "x"), "a,a,b"},
		{"one 429", proxytest.AnthropicError(429, "rate_limit_error", "x"), "a,b"},
		{"one 4xx", proxytest.AnthropicError(403, "permission_error", "x"), "a,b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b, c := upstream(t, okClaude()), upstream(t, okClaude()), upstream(t, okClaude())
			a.Push(tc.fault, tc.fault)
			h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL), ep(2, "b", b.URL), ep(3, "c", c.URL)}})
			h.post("/v1/messages", claudeBody)
			if got := attemptsOn(h.record()); got != tc.wantFirst {
				t.Fatalf("request 1 attempts = %q, want %q", got, tc.wantFirst)
			}
			for i := range 2 {
				h.post("/v1/messages", claudeBody)
				if got := attemptsOn(h.record()); got != "b" {
					t.Errorf("request %d attempts = %q, want b (sticky)", i+2, got)
				}
			}
		})
	}
	t.Run("one 5xx then success does not move it", func(t *testing.T) {
		a, b := upstream(t, okClaude()), upstream(t, okClaude())
		a.Push(proxytest.AnthropicError(502, "api_error", "x"))
		h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL), ep(2, "b", b.URL)}})
		h.post("/v1/messages", claudeBody)
		h.post("/v1/messages", claudeBody)
		r1, r2 := attemptsOn(h.record()), attemptsOn(h.record())
		if r1 != "a,a" || r2 != "a" {
			t.Errorf("attempts = %q then %q, want a,a then a", r1, r2)
		}
	})
}

// TestStrategies: priority fails back to the first endpoint as soon as
// its breaker lets a request through; round-robin spreads.
func TestStrategies(t *testing.T) {
	t.Run("priority fails back", func(t *testing.T) {
		a, b := upstream(t, okClaude()), upstream(t, okClaude())
		a.Push(proxytest.AnthropicError(500, "api_error", "x"), proxytest.AnthropicError(500, "api_error", "x"))
		h := newHarness(t, Config{Strategy: StrategyPriority, Endpoints: []Endpoint{ep(1, "a", a.URL), ep(2, "b", b.URL)}})
		h.post("/v1/messages", claudeBody)
		h.post("/v1/messages", claudeBody)
		r1, r2 := attemptsOn(h.record()), attemptsOn(h.record())
		if r1 != "a,a,b" || r2 != "a" {
			t.Errorf("attempts = %q then %q, want a,a,b then a", r1, r2)
		}
	})
	t.Run("round-robin spreads", func(t *testing.T) {
		ups := []*proxytest.Upstream{upstream(t, okClaude()), upstream(t, okClaude()), upstream(t, okClaude())}
		var eps []Endpoint
		for i, u := range ups {
			eps = append(eps, ep(int64(i+1), fmt.Sprint("e", i), u.URL))
		}
		h := newHarness(t, Config{Strategy: StrategyRoundRobin, Endpoints: eps})
		var order []string
		for range 6 {
			order = append(order, h.post("/v1/messages", claudeBody).header.Get("X-Ccmesh-Endpoint"))
			h.record()
		}
		if got := strings.Join(order, ","); got != "e0,e1,e2,e0,e1,e2" {
			t.Errorf("order = %s, want e0,e1,e2,e0,e1,e2", got)
		}
	})
}

// TestModels answers /v1/models in the client's shape.
func TestModels(t *testing.T) {
	a := ep(1, "a", "http://127.0.0.1:1")
	a.Models = []string{"claude-sonnet-4-5", "claude-*"}
	c := chatEp(2, "c", "http://127.0.0.1:1")
	c.Models = []string{"gpt-5"}
	h := newHarness(t, Config{Endpoints: []Endpoint{a, c}})
	tests := []struct{ name, version, want string }{
		{"anthropic", "2023-06-01", `"data":[{"type":"model","id":"claude-sonnet-4-5"`},
		{"openai", "", `{"object":"list","data":[{"id":"gpt-5","object":"model"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := h.do(t.Context(), http.MethodGet, "/v1/models", "", "anthropic-version", tc.version)
			h.record()
			if got.status != 200 || !strings.Contains(got.body, tc.want) {
				t.Errorf("got %d %s, want 200 containing %s", got.status, got.body, tc.want)
			}
		})
	}
}

// TestInvalidEndpoint: an endpoint that does not compile is left out of
// routing, and naming it explicitly says why.
func TestInvalidEndpoint(t *testing.T) {
	a := upstream(t, okClaude())
	bad := ep(2, "bad", "ftp://user:secret@relay.example")
	bad.SortOrder = -1
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "a", a.URL), bad}})
	if got := h.post("/v1/messages", claudeBody); got.status != 200 || got.header.Get("X-Ccmesh-Endpoint") != "a" {
		t.Errorf("got %d from %q, want 200 from a", got.status, got.header.Get("X-Ccmesh-Endpoint"))
	}
	h.record()
	got := h.post("/v1/messages", claudeBody, "x-ccmesh-endpoint", "bad")
	h.record()
	if got.status != 400 || !strings.Contains(got.body, "misconfigured (base_url must be an http(s) URL") || strings.Contains(got.body, "secret") {
		t.Errorf("got %d %s, want 400 naming the problem without the URL", got.status, got.body)
	}
}

// TestNotConfigured: before the first Update every request is a 503.
func TestNotConfigured(t *testing.T) {
	srv := New(Options{})
	w := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:3457/v1/messages", strings.NewReader(claudeBody))
	srv.ServeHTTP(w, req)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("X-Ccmesh-Attempts") != "0" {
		t.Errorf("got %d %v, want 503 with ccmesh headers", w.Code, w.Header())
	}
}
