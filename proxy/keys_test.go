package proxy

import (
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// Smooth weighted round-robin gives each key its weight's share of the
// picks.
func TestSmoothWeightedKeys(t *testing.T) {
	tests := []struct {
		name    string
		weights []int
	}{
		{"3:1", []int{3, 1}},
		{"1:1:1", []int{1, 1, 1}},
		{"5:3:2", []int{5, 3, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &keyPicker{current: map[int64]int{}}
			var keys []*poolKey
			total := 0
			for i, w := range tt.weights {
				keys = append(keys, &poolKey{Key: Key{ID: int64(i + 1), Weight: w, Enabled: true}})
				total += w
			}
			const picks = 10000
			got := map[int64]int{}
			for range picks {
				got[p.smooth(keys).ID]++
			}
			for i, w := range tt.weights {
				want := float64(picks) * float64(w) / float64(total)
				if n := float64(got[int64(i+1)]); math.Abs(n-want) > 0.02*picks {
					t.Errorf("key %d (weight %d): %v picks, want %v ± 2%%", i+1, w, n, want)
				}
			}
		})
	}
}

// Weighted rendezvous gives each key (or endpoint) a share of the sessions
// in proportion to its weight.
func TestWeightedRendezvous(t *testing.T) {
	weights := map[int64]int{1: 3, 2: 1}
	got := map[int64]int{}
	const sessions = 20000
	for i := range sessions {
		s := newSession("conversation-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26))
		best, score := int64(0), -1.0
		for id, w := range weights {
			if sc := weightedScore(s.hash, id, w); sc > score {
				best, score = id, sc
			}
		}
		got[best]++
	}
	if share := float64(got[1]) / sessions; math.Abs(share-0.75) > 0.02 {
		t.Errorf("weight 3 of 3:1 won %.3f of the sessions, want 0.75 ± 0.02", share)
	}
}

// Which failures are a key's: a refused or spent key; everything else is
// the endpoint's.
func TestKeyFault(t *testing.T) {
	tests := []struct {
		name   string
		status int
		want   bool
	}{
		{"401", 401, true},
		{"403", 403, true},
		{"402", 402, true},
		{"429 rate limit", 429, false},
		{"500", 500, false},
		{"404", 404, false},
		{"400 neutral", 400, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := result{verdict: classifyStatus(tt.status, http.Header{}, []byte(`{"error":{"message":"nope"}}`), true, time.Now()), status: tt.status}
			if got := keyFault(res); got != tt.want {
				t.Errorf("keyFault(%d) = %v, want %v", tt.status, got, tt.want)
			}
		})
	}
	quota := result{verdict: classifyStatus(429, http.Header{}, []byte(`{"error":{"message":"You exceeded your current quota, please check your plan and billing details"}}`), true, time.Now()), status: 429}
	if !keyFault(quota) {
		t.Errorf("a 429 reading as spent quota is not the key's fault: %+v", quota.outcome)
	}
	transport := result{verdict: brokenRetry}
	if keyFault(transport) {
		t.Error("a transport failure is the key's fault")
	}
}

// keyedUpstream answers 401 to the keys in bad and a message to the others,
// counting requests per key.
type keyedUpstream struct {
	*httptest.Server
	mu   sync.Mutex
	bad  map[string]bool
	seen map[string]int
	keys []string // in order
}

func newKeyedUpstream(t *testing.T, bad ...string) *keyedUpstream {
	u := &keyedUpstream{bad: map[string]bool{}, seen: map[string]int{}}
	for _, k := range bad {
		u.bad[k] = true
	}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := r.Header.Get("X-Api-Key")
		u.mu.Lock()
		u.seen[k]++
		u.keys = append(u.keys, k)
		bad := u.bad[k]
		u.mu.Unlock()
		if bad {
			proxytest.Serve(w, r, proxytest.AnthropicError(401, "authentication_error", "invalid x-api-key"))
			return
		}
		proxytest.Serve(w, r, okClaude())
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *keyedUpstream) count(k string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.seen[k]
}

func pooled(id int64, name, url string, keys ...Key) Endpoint {
	e := ep(id, name, url)
	e.APIKey = ""
	e.Keys = keys
	return e
}

func key(id int64, label, secret string, w int) Key {
	return Key{ID: id, Label: label, Secret: secret, Weight: w, Enabled: true}
}

// A pool of three keys where one answers 401 serves every request on the
// other two: the bad key's attempt moves to the next key of the same
// endpoint, the bad key's breaker opens, the endpoint's stays closed and
// the attempts name the key.
func TestKeyPoolFailover(t *testing.T) {
	u := newKeyedUpstream(t, "sk-bad-key-0000002")
	h := newHarness(t, Config{Strategy: StrategyRoundRobin, Endpoints: []Endpoint{pooled(1, "pool", u.URL,
		key(11, "one", "sk-good-key-000001", 1), key(12, "two", "sk-bad-key-0000002", 1), key(13, "", "sk-good-key-000003", 1))}})
	sawKeyFault := false
	for i := range 30 {
		got := h.post("/v1/messages", claudeBody)
		if got.status != 200 {
			t.Fatalf("request %d: status %d %s, want 200", i, got.status, got.body)
		}
		rec := h.record()
		for _, a := range rec.Attempts {
			if a.KeyID == 12 {
				sawKeyFault = true
				if !a.KeyFault || a.Key != "two (…0002)" || a.Outcome != breaker.Failure {
					t.Errorf("bad key's attempt: key %q fault %v outcome %v, want two (…0002), true, failure", a.Key, a.KeyFault, a.Outcome)
				}
			}
		}
		if last := rec.Attempts[len(rec.Attempts)-1]; last.KeyID == 12 || last.Key == "" {
			t.Errorf("request %d answered by key %d %q", i, last.KeyID, last.Key)
		}
	}
	if !sawKeyFault {
		t.Error("the bad key was never tried")
	}
	if v := h.srv.keyBreakers.Get(12).View(time.Now()); v.State != breaker.Open {
		t.Errorf("bad key's breaker %v, want open", v.State)
	}
	if v := h.breakers.Get(1).View(time.Now()); v.State != breaker.Closed || v.Counts.ConsecutiveFailures != 0 {
		t.Errorf("endpoint breaker %v with %d failures, want closed with none", v.State, v.Counts.ConsecutiveFailures)
	}
	for _, k := range []string{"sk-good-key-000001", "sk-good-key-000003"} {
		if u.count(k) < 10 {
			t.Errorf("key %s served %d requests, want its share", MaskKey(k), u.count(k))
		}
	}
	// Once it is open the bad key is not sent any more.
	before := u.count("sk-bad-key-0000002")
	for range 6 {
		h.post("/v1/messages", claudeBody)
		h.record()
	}
	if n := u.count("sk-bad-key-0000002"); n != before {
		t.Errorf("the open key got %d more requests", n-before)
	}
}

// Every key of a pool open: the endpoint is left out, the reason named.
func TestKeyPoolAllOpen(t *testing.T) {
	u := newKeyedUpstream(t)
	h := newHarness(t, Config{Endpoints: []Endpoint{pooled(1, "pool", u.URL, key(11, "a", "sk-aaaaaaaaaaaaaa1", 1), key(12, "b", "sk-bbbbbbbbbbbbbb2", 1))}})
	h.srv.keyBreakers.Get(11).ForceOpen()
	h.srv.keyBreakers.Get(12).ForceOpen()
	got := h.post("/v1/messages", claudeBody)
	if got.status != http.StatusBadGateway || !strings.Contains(got.body, "pool has no key available") {
		t.Errorf("status %d body %s, want 502 naming the pool", got.status, got.body)
	}
	rec := h.record()
	if len(rec.Routing.Excluded) != 1 || rec.Routing.Excluded[0].Reason != ExcludedKeys {
		t.Errorf("excluded %+v, want pool for keys", rec.Routing.Excluded)
	}
	if u.count("sk-aaaaaaaaaaaaaa1")+u.count("sk-bbbbbbbbbbbbbb2") != 0 {
		t.Error("an open key was sent")
	}
	// A disabled key is never picked either.
	h.srv.keyBreakers.Get(12).ForceClose()
	e := pooled(1, "pool", u.URL, key(11, "a", "sk-aaaaaaaaaaaaaa1", 1), key(12, "b", "sk-bbbbbbbbbbbbbb2", 1))
	e.Keys[1].Enabled = false
	h.srv.Update(Config{Endpoints: []Endpoint{e}})
	if got := h.post("/v1/messages", claudeBody); got.status != http.StatusBadGateway {
		t.Errorf("status %d with the only closed key disabled, want 502", got.status)
	}
	h.record()
}

// Under the session strategy a conversation keeps its key over its turns;
// conversations spread over the keys.
func TestSessionKeepsKey(t *testing.T) {
	u := newKeyedUpstream(t)
	h := newHarness(t, Config{Strategy: StrategySession, Endpoints: []Endpoint{pooled(1, "pool", u.URL,
		key(11, "a", "sk-aaaaaaaaaaaaaa1", 1), key(12, "b", "sk-bbbbbbbbbbbbbb2", 1), key(13, "c", "sk-cccccccccccccc3", 1))}})
	used := map[int64]bool{}
	for _, conv := range []string{"conv-1", "conv-2", "conv-3", "conv-4", "conv-5", "conv-6"} {
		var keys []int64
		for range 3 {
			if got := h.post("/v1/messages", claudeBody, "x-claude-code-session-id", conv); got.status != 200 {
				t.Fatalf("status %d", got.status)
			}
			keys = append(keys, h.record().Attempts[0].KeyID)
		}
		if keys[0] != keys[1] || keys[1] != keys[2] {
			t.Errorf("%s used keys %v over 3 turns, want one", conv, keys)
		}
		used[keys[0]] = true
	}
	if len(used) < 2 {
		t.Errorf("6 conversations all on key %v, want them spread", used)
	}
}

// Sticky stays on a key until it fails, then stays on the next.
func TestStickyKey(t *testing.T) {
	u := newKeyedUpstream(t)
	h := newHarness(t, Config{Strategy: StrategySticky, Endpoints: []Endpoint{pooled(1, "pool", u.URL,
		key(11, "a", "sk-aaaaaaaaaaaaaa1", 1), key(12, "b", "sk-bbbbbbbbbbbbbb2", 1))}})
	var got []int64
	for i := range 6 {
		if i == 3 {
			u.mu.Lock()
			u.bad["sk-aaaaaaaaaaaaaa1"] = true
			u.mu.Unlock()
		}
		h.post("/v1/messages", claudeBody)
		rec := h.record()
		got = append(got, rec.Attempts[len(rec.Attempts)-1].KeyID)
	}
	if want := []int64{11, 11, 11, 12, 12, 12}; !slices.Equal(got, want) {
		t.Errorf("answering keys %v, want %v", got, want)
	}
}

// A capture masks every key of every pool.
func TestCaptureSecretsPools(t *testing.T) {
	cfg := Config{ClientToken: "tok-123456789", Endpoints: []Endpoint{pooled(1, "pool", "http://x",
		key(11, "a", "sk-aaaaaaaaaaaaaa1", 1), key(12, "b", "sk-bbbbbbbbbbbbbb2", 1))}}
	got := captureSecrets(&cfg)
	for _, want := range []string{"sk-aaaaaaaaaaaaaa1", "sk-bbbbbbbbbbbbbb2", "tok-123456789"} {
		if !slices.Contains(got, want) {
			t.Errorf("captureSecrets = %d secrets, missing %s", len(got), MaskKey(want))
		}
	}
}

// The weighted strategy spreads requests by endpoint weight; a weight-0
// endpoint gets requests only when nothing else is left.
func TestWeightedStrategy(t *testing.T) {
	a, b, z := upstream(t, okClaude()), upstream(t, okClaude()), upstream(t, okClaude())
	ea, eb, ez := ep(1, "a", a.URL), ep(2, "b", b.URL), ep(3, "z", z.URL)
	ea.Weight, eb.Weight, ez.Weight = 3, 1, 0
	h := newHarness(t, Config{Strategy: StrategyWeighted, Endpoints: []Endpoint{ea, eb, ez}})
	for range 300 {
		h.post("/v1/messages", claudeBody)
		h.record()
	}
	if n := a.Count(); n < 225-30 || n > 225+30 {
		t.Errorf("weight 3 got %d of 300, want 225 ± 10%%", n)
	}
	if n := b.Count(); n < 75-30 || n > 75+30 {
		t.Errorf("weight 1 got %d of 300, want 75 ± 10%%", n)
	}
	if n := z.Count(); n != 0 {
		t.Errorf("weight 0 got %d while others were healthy", n)
	}
	h.breakers.Get(1).ForceOpen()
	h.breakers.Get(2).ForceOpen()
	if got := h.post("/v1/messages", claudeBody); got.status != 200 || z.Count() != 1 {
		t.Errorf("with the others open: status %d, weight 0 got %d", got.status, z.Count())
	}
	h.record()
}

// Under the session strategy conversations spread over the endpoints by
// their weights.
func TestSessionWeights(t *testing.T) {
	a, b := upstream(t, okClaude()), upstream(t, okClaude())
	ea, eb := ep(1, "a", a.URL), ep(2, "b", b.URL)
	ea.Weight, eb.Weight = 3, 1
	h := newHarness(t, Config{Strategy: StrategySession, Endpoints: []Endpoint{ea, eb}})
	for i := range 300 {
		h.post("/v1/messages", claudeBody, "x-claude-code-session-id", "conversation-"+strconv.Itoa(i))
		h.record()
	}
	if n := a.Count(); n < 225-30 || n > 225+30 {
		t.Errorf("weight 3 got %d of 300 conversations, want 225 ± 10%%", n)
	}
}

// A pool of one enabled key fails as the endpoint, as a lone api_key did:
// its 401s count on the endpoint's breaker, not the key's.
func TestSingleKeyFailsAsEndpoint(t *testing.T) {
	u := newKeyedUpstream(t, "sk-bad-key-0000002")
	other := key(13, "off", "sk-off-key-0000003", 1)
	other.Enabled = false
	h := newHarness(t, Config{Endpoints: []Endpoint{pooled(1, "one", u.URL, key(12, "only", "sk-bad-key-0000002", 1), other)}})
	h.post("/v1/messages", claudeBody)
	rec := h.record()
	if len(rec.Attempts) != 1 || rec.Attempts[0].KeyFault || rec.Attempts[0].KeyID != 12 {
		t.Errorf("attempts %+v, want one on key 12, not a key fault", rec.Attempts)
	}
	if v := h.breakers.Get(1).View(time.Now()); v.Counts.ConsecutiveFailures != 1 {
		t.Errorf("endpoint breaker counted %d failures, want 1", v.Counts.ConsecutiveFailures)
	}
	if v := h.srv.keyBreakers.Get(12).View(time.Now()); v.Counts.ConsecutiveFailures != 0 {
		t.Errorf("key breaker counted %d failures, want none", v.Counts.ConsecutiveFailures)
	}
}
