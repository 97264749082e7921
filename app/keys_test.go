package app

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// keyCounter is a fake Anthropic upstream that answers 401 to the keys in
// bad and a message to the others, and counts what each key was sent.
type keyCounter struct {
	srv  *httptest.Server
	mu   sync.Mutex
	bad  map[string]bool
	seen map[string]int
	last string
}

func newKeyCounter(t *testing.T, bad ...string) *keyCounter {
	t.Helper()
	c := &keyCounter{bad: map[string]bool{}, seen: map[string]int{}}
	for _, k := range bad {
		c.bad[k] = true
	}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := r.Header.Get("x-api-key")
		c.mu.Lock()
		c.seen[k]++
		bad := c.bad[k]
		if !bad {
			c.last = k
		}
		c.mu.Unlock()
		w.Header().Set("content-type", "application/json")
		if bad {
			w.WriteHeader(401)
			io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			return
		}
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"model":"claude-sonnet-4-5","stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":2}}`)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *keyCounter) count(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[k]
}

func (c *keyCounter) lastKey() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// sendTurn posts one Claude Code request (session names its conversation,
// when set) and returns the status.
func (h *harness) sendTurn(t *testing.T, session string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/messages", strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("anthropic-version", "2023-06-01")
	if session != "" {
		req.Header.Set("x-claude-code-session-id", session)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

const (
	keyOne   = "sk-ant-pool-one-0123456789"
	keyBad   = "sk-ant-pool-bad-0123456789"
	keyThree = "sk-ant-pool-three-01234567"
)

func poolBody(url string) string {
	return `{"name":"pool","protocol":"anthropic","base_url":"` + url + `","keys":[{"label":"one","key":"` + keyOne +
		`"},{"label":"bad","key":"` + keyBad + `"},{"label":"three","key":"` + keyThree + `"}]}`
}

// The API shows a pool masked, keeps a key's secret when it is sent back
// by id without one, refuses a duplicate, and takes the old api_key as a
// pool of one.
func TestKeyPoolAPI(t *testing.T) {
	h := newHarness(t)
	r := h.do("POST", "/api/endpoints", poolBody("https://relay.example"))
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	for _, k := range []string{keyOne, keyBad, keyThree} {
		if bytes.Contains(r.body, []byte(k)) {
			t.Errorf("the reply holds key %s", k[:12])
		}
	}
	var e EndpointReply
	r.decode(t, &e)
	if len(e.Keys) != 3 || e.Keys[0].Label != "one" || e.Keys[0].KeyMasked != "sk-…6789" || !e.HasKey || e.APIKeyMasked != "sk-…6789" {
		t.Fatalf("reply keys %+v has_key %v api_key_masked %q", e.Keys, e.HasKey, e.APIKeyMasked)
	}
	path := "/api/endpoints/" + strconv.FormatInt(e.ID, 10)
	tests := []struct {
		name   string
		body   string
		status int
		code   string
		labels string
	}{
		{"reorder by id, secrets kept", fmt.Sprintf(`{"keys":[{"id":%d,"label":"three"},{"id":%d,"label":"one","weight":3}]}`, e.Keys[2].ID, e.Keys[0].ID),
			200, "", "three,one"},
		{"duplicate refused", `{"keys":[{"key":"sk-dup-0123456789"},{"key":"sk-dup-0123456789"}]}`, 422, "duplicate_key", ""},
		{"api_key alone is a pool of one", `{"api_key":"sk-ant-single-0123456789"}`, 200, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do("PUT", path, tt.body)
			if r.status != tt.status || tt.code != "" && r.errCode() != tt.code {
				t.Fatalf("status %d code %q (%s), want %d %q", r.status, r.errCode(), r.body, tt.status, tt.code)
			}
			if tt.status != 200 {
				return
			}
			var got EndpointReply
			r.decode(t, &got)
			var labels []string
			for _, k := range got.Keys {
				labels = append(labels, k.Label)
			}
			if strings.Join(labels, ",") != tt.labels {
				t.Errorf("labels %v, want %s", labels, tt.labels)
			}
		})
	}
	st := h.app.state.Load().Endpoints[0]
	if len(st.Keys) != 1 || st.Keys[0].Key != "sk-ant-single-0123456789" || st.APIKey != st.Keys[0].Key {
		t.Errorf("stored pool of %d keys, api_key set %v; want the one key given", len(st.Keys), st.APIKey != "")
	}
}

// A pool of three keys where one answers 401 keeps serving every request
// on the other two, and health shows that key open; a key forced open
// from the API is no longer sent, and force-close brings it back.
func TestKeyPoolThroughApp(t *testing.T) {
	up := newKeyCounter(t, keyBad)
	h := newHarness(t)
	if r := h.do("PUT", "/api/settings", `{"strategy":"round-robin"}`); r.status != 200 {
		t.Fatalf("settings: %d %s", r.status, r.body)
	}
	e := h.mustCreate(poolBody(up.srv.URL))
	for i := range 30 {
		if got := h.sendTurn(t, ""); got != 200 {
			t.Fatalf("request %d: status %d, want 200", i, got)
		}
	}
	health := okAs[[]Health](t, h.do("GET", "/api/health", ""))
	if len(health) != 1 || len(health[0].Keys) != 3 {
		t.Fatalf("health %+v", health)
	}
	states := map[string]string{}
	for _, k := range health[0].Keys {
		states[k.Label] = k.State + "/" + k.Status
	}
	if states["bad"] != "open/unhealthy" || states["one"] != "closed/healthy" || states["three"] != "closed/healthy" {
		t.Errorf("key states %v, want bad open, the others closed", states)
	}
	if health[0].State != "closed" {
		t.Errorf("endpoint breaker %s, want closed: a key's 401 is the key's", health[0].State)
	}
	if bad := health[0].Keys[1]; !strings.Contains(bad.LastError, "401") || bad.KeyMasked != "sk-…6789" {
		t.Errorf("bad key's health %+v", bad)
	}

	base := "/api/endpoints/" + strconv.FormatInt(e.ID, 10) + "/keys/"
	r := h.do("POST", base+strconv.FormatInt(e.Keys[0].ID, 10)+"/force-open", "")
	got := okAs[Health](t, r)
	if got.Keys[0].State != "open" || got.Keys[0].Reason != "manual" {
		t.Errorf("forced key %+v, want open manual", got.Keys[0])
	}
	before := up.count(keyOne)
	for range 4 {
		h.sendTurn(t, "")
	}
	if up.count(keyOne) != before || up.count(keyThree) < 4 {
		t.Errorf("a forced-open key was sent %d more requests", up.count(keyOne)-before)
	}
	okAs[Health](t, h.do("POST", base+strconv.FormatInt(e.Keys[0].ID, 10)+"/force-close", ""))
	for range 4 {
		h.sendTurn(t, "")
	}
	if up.count(keyOne) == before {
		t.Error("the force-closed key was not sent again")
	}
	if r := h.do("POST", base+"999999/force-open", ""); r.status != 404 {
		t.Errorf("unknown key: status %d, want 404", r.status)
	}
}

// Under the session strategy a conversation stays on its key over three
// turns.
func TestSessionKeyThroughApp(t *testing.T) {
	up := newKeyCounter(t)
	h := newHarness(t)
	if r := h.do("PUT", "/api/settings", `{"strategy":"session"}`); r.status != 200 {
		t.Fatalf("settings: %d %s", r.status, r.body)
	}
	h.mustCreate(`{"name":"pool","protocol":"anthropic","base_url":"` + up.srv.URL + `","keys":[{"key":"` + keyOne +
		`"},{"key":"` + keyBad + `"},{"key":"` + keyThree + `"}]}`)
	for _, conv := range []string{"conv-a", "conv-b", "conv-c"} {
		var keys []string
		for range 3 {
			if got := h.sendTurn(t, conv); got != 200 {
				t.Fatalf("status %d", got)
			}
			keys = append(keys, up.lastKey())
		}
		if keys[0] != keys[1] || keys[1] != keys[2] {
			t.Errorf("%s: keys changed over 3 turns", conv)
		}
	}
}

// Weights 3:1 under the weighted strategy spread 300 requests within
// ±10 %.
func TestWeightsThroughApp(t *testing.T) {
	a, b := newKeyCounter(t), newKeyCounter(t)
	h := newHarness(t)
	if r := h.do("PUT", "/api/settings", `{"strategy":"weighted"}`); r.status != 200 {
		t.Fatalf("settings: %d %s", r.status, r.body)
	}
	h.mustCreate(`{"name":"a","protocol":"anthropic","base_url":"` + a.srv.URL + `","api_key":"` + keyOne + `","weight":3}`)
	h.mustCreate(`{"name":"b","protocol":"anthropic","base_url":"` + b.srv.URL + `","api_key":"` + keyThree + `"}`)
	for range 300 {
		h.sendTurn(t, "")
	}
	if n := a.count(keyOne); n < 225-30 || n > 225+30 {
		t.Errorf("weight 3 got %d of 300, want 225 ± 30", n)
	}
	if n := b.count(keyThree); n < 75-30 || n > 75+30 {
		t.Errorf("weight 1 got %d of 300, want 75 ± 30", n)
	}
}

// Test takes ?key=<id>: it sends that key, and the result is the key's.
func TestTestPerKey(t *testing.T) {
	up := newKeyCounter(t, keyBad)
	h := newHarness(t)
	e := h.mustCreate(poolBody(up.srv.URL))
	path := "/api/endpoints/" + strconv.FormatInt(e.ID, 10) + "/test?key="
	got := okAs[TestResult](t, h.do("POST", path+strconv.FormatInt(e.Keys[1].ID, 10), ""))
	if got.OK || got.Status != 401 || up.count(keyBad) != 1 || up.count(keyOne) != 0 {
		t.Errorf("test of the bad key: %+v, sent bad %d one %d", got, up.count(keyBad), up.count(keyOne))
	}
	health := okAs[[]Health](t, h.do("GET", "/api/health", ""))
	if lt := health[0].Keys[1].LastTest; lt == nil || lt.Status != 401 || health[0].LastTest != nil {
		t.Errorf("key's last test %+v, endpoint's %+v; want the key's only", lt, health[0].LastTest)
	}
	if r := h.do("POST", path+"424242", ""); r.status != 404 {
		t.Errorf("unknown key: status %d", r.status)
	}
}

// GET /api/stats?group=key counts each pool key's attempts apart, named by
// its endpoint, label and mask.
func TestStatsByKey(t *testing.T) {
	up := newKeyCounter(t, keyBad)
	h := newHarness(t)
	if r := h.do("PUT", "/api/settings", `{"strategy":"round-robin"}`); r.status != 200 {
		t.Fatalf("settings: %d %s", r.status, r.body)
	}
	h.mustCreate(poolBody(up.srv.URL))
	for range 6 {
		h.postMessages(t, "claude-sonnet-4-5")
	}
	got := okAs[struct {
		Buckets []StatBucket `json:"buckets"`
	}](t, h.do("GET", "/api/stats?group=key&minutes=60&bucket=hour", ""))
	attempts, errs := map[string]int64{}, map[string]int64{}
	for _, b := range got.Buckets {
		attempts[b.Key] += b.Attempts
		errs[b.Key] += b.Errors
	}
	one, bad := "pool / one (sk-…6789)", "pool / bad (sk-…6789)"
	if attempts[one] == 0 || attempts["pool / three (sk-…4567)"] == 0 {
		t.Errorf("attempts per key %v, want the good keys counted", attempts)
	}
	if attempts[bad] == 0 || errs[bad] != attempts[bad] || errs[one] != 0 {
		t.Errorf("errors per key %v of %v, want every attempt of the bad key an error, none of the others", errs, attempts)
	}
	for k := range attempts {
		if strings.Contains(k, "0123456789") {
			t.Errorf("a key bucket names the key: %q", k)
		}
	}
	if r := h.do("GET", "/api/stats?group=nope", ""); r.status != 400 {
		t.Errorf("group=nope: status %d", r.status)
	}
}
