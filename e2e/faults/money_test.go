package faults

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// relayFake is a new-api relay: /v1/messages answers as Anthropic, 401 to
// the keys in bad, and counts what each key was sent; /api/usage/token/
// reads the quota units left (500 000 = $1, docs/BEHAVIOUR.md#balance's
// newapi shape); redirect sends every balance read elsewhere instead.
type relayFake struct {
	srv      *httptest.Server
	mu       sync.Mutex
	left     int64
	redirect string
	bad      map[string]bool
	sent     map[string]int // messages per x-api-key
	last     string         // key of the last message answered
	reads    []string       // Authorization and X-Key of each balance read
}

func newRelayFake(t *testing.T, left int64, bad ...string) *relayFake {
	t.Helper()
	f := &relayFake{left: left, bad: map[string]bool{}, sent: map[string]int{}}
	for _, k := range bad {
		f.bad[k] = true
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *relayFake) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path != "/v1/messages" {
		f.reads = append(f.reads, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Key"))
		if f.redirect != "" {
			http.Redirect(w, r, f.redirect+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api/usage/token/", "/balance":
		fmt.Fprintf(w, `{"code":true,"message":"ok","data":{"object":"token_usage","total_granted":%d,"total_used":%d,"total_available":%d,"unlimited_quota":false,"expires_at":0}}`,
			5_000_000, 5_000_000-f.left, f.left)
	case "/v1/messages":
		var req messageRequest
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req) // a bad body still counts; the model is only echoed
		k := r.Header.Get("X-Api-Key")
		f.sent[k]++
		if f.bad[k] {
			writeAnthropicError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
			return
		}
		f.last = k
		io.WriteString(w, `{"id":"msg_relay","type":"message","role":"assistant","model":"`+req.Model+
			`","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":2}}`)
	default:
		http.NotFound(w, r)
	}
}

func (f *relayFake) setLeft(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.left = n
}

func (f *relayFake) count(k string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent[k]
}

func (f *relayFake) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, v := range f.sent {
		n += v
	}
	return n
}

func (f *relayFake) lastKey() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

func (f *relayFake) balanceReads() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reads...)
}

// balanceReply is GET or POST /api/endpoints/{id}/balance.
type balanceReply struct {
	Reading *struct {
		Remaining *float64 `json:"remaining"`
		Unit      string   `json:"unit"`
		Template  string   `json:"template"`
		Error     string   `json:"error"`
	} `json:"reading"`
}

// addRaw creates an endpoint from a free-form body (keys, weight, balance).
func (c *ccmesh) addRaw(t *testing.T, body map[string]any) endpointRow {
	t.Helper()
	var row endpointRow
	c.mustAdmin(t, http.MethodPost, "/api/endpoints", body, &row)
	return row
}

func (c *ccmesh) refreshBalance(t *testing.T, id int64) balanceReply {
	t.Helper()
	var got balanceReply
	c.mustAdmin(t, http.MethodPost, "/api/endpoints/"+strconv.FormatInt(id, 10)+"/balance", nil, &got)
	return got
}

func (c *ccmesh) strategy(t *testing.T, s string) {
	t.Helper()
	c.mustAdmin(t, http.MethodPut, "/api/settings", map[string]any{"strategy": s}, nil)
}

// heldByBalance says whether the routing view leaves name out because a
// balance reading holds its breaker open.
func (c *ccmesh) heldByBalance(t *testing.T, model, name string) bool {
	t.Helper()
	var x struct {
		Excluded []struct {
			Endpoint string `json:"endpoint"`
			Reason   string `json:"reason"`
			Balance  bool   `json:"balance"`
		} `json:"excluded"`
	}
	c.mustAdmin(t, http.MethodGet, "/api/route?protocol=anthropic&model="+model, nil, &x)
	for _, e := range x.Excluded {
		if e.Endpoint == name && e.Reason == "breaker" && e.Balance {
			return true
		}
	}
	return false
}

const moneyKey = "sk-relay-money-0123456789abcdef"

// testBalanceThroughProxy: a relay whose balance reads 0 is left out of
// routing until a refresh shows credit, and a connector never sends the
// key to another host (docs/BEHAVIOUR.md#balance).
func testBalanceThroughProxy(t *testing.T, bin string) {
	c := startCCMesh(t, bin)
	c.strategy(t, "priority") // the relay is first whenever it is a candidate
	t.Run("a spent relay is left out until a refresh shows credit", func(t *testing.T) {
		model := "claude-e2e-balance"
		relay := newRelayFake(t, 0)
		spare := newUpstream(t, "balance-spare", healthy)
		e := c.addRaw(t, map[string]any{"name": "relay", "protocol": "anthropic", "base_url": relay.srv.URL + "/v1",
			"api_key": moneyKey, "models": []string{model}, "balance": map[string]any{"template": "relay"}})
		c.addEndpoint(t, endpointSpec{Name: "balance-spare", BaseURL: spare.url, Protocol: "anthropic", APIKey: "sk-spare-0123456789", Models: []string{model}})
		steps := []struct {
			name      string
			left      int64
			remaining float64
			held      bool
			answerBy  string // whose fake gets the request
		}{
			{"nothing left", 0, 0, true, "spare"},
			{"credit again", 1_000_000, 2, false, "relay"},
			{"spent again", 0, 0, true, "spare"},
		}
		for _, s := range steps {
			t.Run(s.name, func(t *testing.T) {
				relay.setLeft(s.left)
				got := c.refreshBalance(t, e.ID)
				if got.Reading == nil || got.Reading.Remaining == nil || *got.Reading.Remaining != s.remaining || got.Reading.Unit != "USD" {
					t.Fatalf("reading %+v, want %v USD", got.Reading, s.remaining)
				}
				if held := c.heldByBalance(t, model, "relay"); held != s.held {
					t.Errorf("held by its balance = %v, want %v", held, s.held)
				}
				if h := c.health(t, "relay"); (h.State == "open" && h.Reason == "quota_exhausted") != s.held {
					t.Errorf("relay's breaker %s/%s, want open/quota_exhausted = %v", h.State, h.Reason, s.held)
				}
				relayBefore, spareBefore := relay.total(), spare.hits.Load()
				if r := send(t.Context(), c.http, c.url(""), model, false); r.status != http.StatusOK {
					t.Fatalf("request: %d %s", r.status, r.body)
				}
				gotBy := map[bool]string{true: "relay", false: "spare"}[relay.total() > relayBefore]
				if gotBy != s.answerBy || gotBy == "spare" && spare.hits.Load() == spareBefore {
					t.Errorf("the request went to %s, want %s", gotBy, s.answerBy)
				}
			})
		}
		for _, rd := range relay.balanceReads() {
			if rd != "Bearer "+moneyKey+"|" {
				t.Errorf("a balance read sent %q, want the endpoint's key as Bearer", rd)
			}
		}
	})
	t.Run("a connector never sends the key to another host", func(t *testing.T) {
		testKeyStaysHome(t, c)
	})
	if strings.Contains(c.out.String(), moneyKey) {
		t.Error("the key is in ccmesh's output")
	}
}

func testKeyStaysHome(t *testing.T, c *ccmesh) {
	home, other := newRelayFake(t, 500_000), newRelayFake(t, 500_000)
	e := c.addRaw(t, map[string]any{"name": "home", "protocol": "anthropic", "base_url": home.srv.URL,
		"api_key": moneyKey, "models": []string{"claude-e2e-home"}})
	path := "/api/endpoints/" + strconv.FormatInt(e.ID, 10)
	custom := map[string]any{"url": other.srv.URL + "/balance", "headers": map[string]string{"X-Key": "{{key}}"},
		"paths": map[string]string{"remaining": "data.total_available"}, "multiplier": 0.000002, "unit": "USD"}
	err := c.admin(t.Context(), http.MethodPut, path, map[string]any{"balance": custom}, nil)
	if err == nil || !strings.Contains(err.Error(), "HTTP 422") || !strings.Contains(err.Error(), "invalid_balance") ||
		!strings.Contains(err.Error(), "balance.other_host") {
		t.Errorf("custom connector on another host without other_host: %v, want 422 invalid_balance on balance.other_host", err)
	}
	onHome := map[string]any{"url": "{{origin}}/balance", "headers": map[string]string{"X-Key": "{{key}}"},
		"paths": map[string]string{"remaining": "data.total_available"}, "multiplier": 0.000002, "unit": "USD"}
	c.mustAdmin(t, http.MethodPut, path, map[string]any{"balance": onHome}, nil)
	if got := c.refreshBalance(t, e.ID); got.Reading == nil || got.Reading.Remaining == nil || *got.Reading.Remaining != 1 {
		t.Errorf("custom connector on the endpoint's origin: %+v, want $1", got.Reading)
	}
	// A template follows no redirect: the key only reaches the origin.
	c.mustAdmin(t, http.MethodPut, path, map[string]any{"balance": map[string]any{"template": "newapi"}}, nil)
	home.mu.Lock()
	home.redirect = other.srv.URL
	home.mu.Unlock()
	got := c.refreshBalance(t, e.ID)
	if got.Reading == nil || got.Reading.Remaining != nil || !strings.Contains(got.Reading.Error, "redirect") {
		t.Errorf("a template redirected to another host: %+v, want unknown (redirect not followed)", got.Reading)
	}
	if reads := other.balanceReads(); len(reads) != 0 {
		t.Errorf("the other host was read %d times (%d with the key)", len(reads), countWith(reads, moneyKey))
	}
	if n := countWith(home.balanceReads(), moneyKey); n < 2 {
		t.Errorf("the endpoint's origin saw the key on %d reads, want the custom and the template's", n)
	}
}

func countWith(reads []string, key string) int {
	n := 0
	for _, r := range reads {
		if strings.Contains(r, key) {
			n++
		}
	}
	return n
}

// keyHealth is one key of a GET /api/health row (docs/BEHAVIOUR.md#key-pools).
type keyHealth struct {
	Label     string `json:"label"`
	State     string `json:"state"`
	Status    string `json:"status"`
	LastError string `json:"last_error"`
}

func (c *ccmesh) keyHealth(t *testing.T, name string) (string, map[string]keyHealth) {
	t.Helper()
	var rows []struct {
		Name  string      `json:"name"`
		State string      `json:"state"`
		Keys  []keyHealth `json:"keys"`
	}
	c.mustAdmin(t, http.MethodGet, "/api/health", nil, &rows)
	for _, r := range rows {
		if r.Name == name {
			keys := map[string]keyHealth{}
			for _, k := range r.Keys {
				keys[k.Label] = k
			}
			return r.State, keys
		}
	}
	t.Fatalf("GET /api/health has no endpoint %q", name)
	return "", nil
}

// testKeyPoolsThroughProxy: a pool with a bad key keeps serving, a
// conversation keeps its key under `session`, and endpoint weights spread
// requests under `weighted` (docs/BEHAVIOUR.md#key-pools, #rotation).
func testKeyPoolsThroughProxy(t *testing.T, bin string) {
	c := startCCMesh(t, bin)
	keys := []string{"sk-pool-one-0123456789", "sk-pool-bad-0123456789", "sk-pool-three-01234567"}
	pool := func(name, url, model string) {
		var ks []map[string]any
		for i, k := range keys {
			ks = append(ks, map[string]any{"label": []string{"one", "bad", "three"}[i], "key": k})
		}
		c.addRaw(t, map[string]any{"name": name, "protocol": "anthropic", "base_url": url, "models": []string{model}, "keys": ks})
	}
	t.Run("a key that answers 401 leaves the other two serving", func(t *testing.T) {
		c.strategy(t, "round-robin") // every key gets its turn, the bad one too
		model := "claude-e2e-pool"
		up := newRelayFake(t, 0, keys[1])
		pool("pool", up.srv.URL, model)
		for i := range 30 {
			if r := send(t.Context(), c.http, c.url(""), model, false); r.status != http.StatusOK {
				t.Fatalf("request %d: %d %s", i, r.status, r.body)
			}
		}
		state, kh := c.keyHealth(t, "pool")
		if state != "closed" {
			t.Errorf("endpoint breaker %s, want closed: a key's 401 is the key's", state)
		}
		want := map[string]string{"one": "closed/healthy", "bad": "open/unhealthy", "three": "closed/healthy"}
		for label, w := range want {
			if got := kh[label].State + "/" + kh[label].Status; got != w {
				t.Errorf("key %s: %s, want %s", label, got, w)
			}
		}
		if !strings.Contains(kh["bad"].LastError, "401") {
			t.Errorf("bad key's last error %q, want the 401", kh["bad"].LastError)
		}
		if up.count(keys[0]) == 0 || up.count(keys[2]) == 0 || up.count(keys[0])+up.count(keys[2]) != 30 {
			t.Errorf("good keys answered %d and %d of 30", up.count(keys[0]), up.count(keys[2]))
		}
	})
	t.Run("a session stays on its key over 3 turns", func(t *testing.T) {
		c.strategy(t, "session")
		model := "claude-e2e-session"
		up := newRelayFake(t, 0)
		pool("session-pool", up.srv.URL, model)
		used := map[string]bool{}
		for _, conv := range []string{"conv-a", "conv-b", "conv-c", "conv-d", "conv-e"} {
			var got []string
			for turn := range 3 {
				r := sendWith(t.Context(), c.http, c.url(""), model, false, map[string]string{"x-claude-code-session-id": conv})
				if r.status != http.StatusOK {
					t.Fatalf("%s turn %d: %d %s", conv, turn+1, r.status, r.body)
				}
				got = append(got, up.lastKey())
			}
			if got[0] != got[1] || got[1] != got[2] {
				t.Errorf("%s: keys %v over 3 turns, want one", conv, masked(got))
			}
			used[got[0]] = true
		}
		if len(used) < 2 {
			t.Errorf("5 conversations all on one key; want them spread by rendezvous")
		}
	})
	t.Run("weights 3:1 spread 300 requests within 10 %", func(t *testing.T) { testWeights(t, c, keys[0], keys[2]) })
}

// testWeights: endpoint weights 3:1 under `weighted` (docs/BEHAVIOUR.md#rotation).
func testWeights(t *testing.T, c *ccmesh, keyA, keyB string) {
	c.strategy(t, "weighted")
	model := "claude-e2e-weight"
	a, b := newRelayFake(t, 0), newRelayFake(t, 0)
	c.addRaw(t, map[string]any{"name": "heavy", "protocol": "anthropic", "base_url": a.srv.URL, "api_key": keyA, "models": []string{model}, "weight": 3})
	c.addRaw(t, map[string]any{"name": "light", "protocol": "anthropic", "base_url": b.srv.URL, "api_key": keyB, "models": []string{model}, "weight": 1})
	for i := range 300 {
		if r := send(t.Context(), c.http, c.url(""), model, false); r.status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	for _, w := range []struct {
		name string
		got  int
		want float64
	}{{"heavy", a.total(), 225}, {"light", b.total(), 75}} {
		if float64(w.got) < w.want*0.9 || float64(w.got) > w.want*1.1 {
			t.Errorf("%s got %d of 300, want %.0f ± 10 %%", w.name, w.got, w.want)
		}
	}
}

// masked shows the test's keys by their first 12 characters, which tell
// them apart, for failure messages.
func masked(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k[:min(12, len(k))] + "…"
	}
	return out
}
