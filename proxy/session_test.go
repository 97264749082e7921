package proxy

import (
	"fmt"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// firstChoice is where rendezvous hashing sends session key among ids.
func firstChoice(key string, ids ...int64) int64 {
	s := newSession(key).hash
	best, bestScore := ids[0], rendezvousScore(s, ids[0])
	for _, id := range ids[1:] {
		if sc := rendezvousScore(s, id); sc > bestScore {
			best, bestScore = id, sc
		}
	}
	return best
}

// TestRendezvousStability: removing one of four endpoints moves only the
// sessions that were on it, and sessions spread about evenly.
func TestRendezvousStability(t *testing.T) {
	const n = 4000
	count := map[int64]int{}
	moved, stayed := 0, 0
	for i := range n {
		key := fmt.Sprintf("session-%d", i)
		before := firstChoice(key, 1, 2, 3, 4)
		count[before]++
		after := firstChoice(key, 1, 2, 4)
		switch {
		case before == 3:
			moved++
		case after != before:
			t.Fatalf("session %s moved from %d to %d though %d stayed", key, before, after, before)
		default:
			stayed++
		}
	}
	for id, c := range count {
		if c > n/4*3/2 || c < n/4/2 {
			t.Errorf("endpoint %d has %d of %d sessions; want about %d", id, c, n, n/4)
		}
	}
	if moved != count[3] || moved+stayed != n {
		t.Errorf("moved %d, stayed %d; endpoint 3 had %d", moved, stayed, count[3])
	}
}

// TestSessionKey: where a request names its conversation, in order.
func TestSessionKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		body string
		want string
	}{
		{"claude code header", map[string]string{"X-Claude-Code-Session-Id": "cc-1"}, `{"model":"m","metadata":{"user_id":"user_ab_account_cd_session_ef"}}`, "cc-1"},
		{"codex header", map[string]string{"Session-Id": "codex-1"}, `{"model":"m","prompt_cache_key":"pck"}`, "codex-1"},
		{"codex prompt_cache_key", nil, `{"model":"m","prompt_cache_key":"pck-1","user":"u"}`, "pck-1"},
		{"anthropic metadata.user_id", nil, `{"model":"m","metadata":{"user_id":"user_abc_account_def_session_9f2c"}}`, "9f2c"},
		{"user_id as Claude Code's JSON", nil, `{"model":"m","metadata":{"user_id":"{\"device_id\":\"d1\",\"account_uuid\":\"\",\"session_id\":\"s-42\"}"}}`, "s-42"},
		{"user_id without a session part", nil, `{"model":"m","metadata":{"user_id":"user_abc"}}`, ""},
		{"openai user", nil, `{"model":"m","user":"alice"}`, "alice"},
		{"user that is not a string", nil, `{"model":"m","user":5}`, ""},
		{"none", nil, `{"model":"m"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/v1/messages", nil)
			for k, v := range tc.hdr {
				r.Header.Set(k, v)
			}
			info, err := scanBody([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			q := &request{r: r, body: []byte(tc.body), info: info}
			if got := q.sessionKey(); got != tc.want {
				t.Errorf("session key %q, want %q", got, tc.want)
			}
		})
	}
}

// keyFirstOn finds a session key whose rendezvous choice among ids is want.
func keyFirstOn(t *testing.T, want int64, ids ...int64) string {
	t.Helper()
	for i := range 1000 {
		if k := fmt.Sprintf("conv-%d", i); firstChoice(k, ids...) == want {
			return k
		}
	}
	t.Fatal("no key found")
	return ""
}

// TestSessionStrategy: a conversation goes to its rendezvous endpoint; when
// that fails it moves to the next and stays there after the first recovers;
// another conversation still starts on its own endpoint; the log keeps a
// hash of the session, never the id.
func TestSessionStrategy(t *testing.T) {
	a := upstream(t, okClaude())
	b := upstream(t, okClaude())
	h := newHarness(t, Config{Strategy: StrategySession, Endpoints: []Endpoint{ep(1, "a", a.URL), ep(2, "b", b.URL)}})
	onA := keyFirstOn(t, 1, 1, 2)
	onB := keyFirstOn(t, 2, 1, 2)
	send := func(key string) *Record {
		t.Helper()
		got := h.post("/v1/messages", claudeBody, "x-claude-code-session-id", key)
		rec := h.record()
		if got.status != 200 {
			t.Fatalf("status %d: %s", got.status, got.body)
		}
		return rec
	}
	if rec := send(onA); attemptsOn(rec) != "a" || rec.Routing.Affinity {
		t.Fatalf("first turn went %q (affinity %v), want a by rendezvous", attemptsOn(rec), rec.Routing.Affinity)
	}
	if rec := send(onB); attemptsOn(rec) != "b" {
		t.Fatalf("the other conversation went %q, want b", attemptsOn(rec))
	}
	// a fails once (two attempts): the conversation moves to b.
	a.Push(proxytest.AnthropicError(500, "api_error", "down"), proxytest.AnthropicError(500, "api_error", "down"))
	if rec := send(onA); attemptsOn(rec) != "a,a,b" {
		t.Fatalf("failover went %q, want a,a,b", attemptsOn(rec))
	}
	// a is healthy again, but the conversation stays on b, its cache.
	rec := send(onA)
	if attemptsOn(rec) != "b" || !rec.Routing.Affinity {
		t.Fatalf("after the failover the conversation went %q (affinity %v), want b by affinity", attemptsOn(rec), rec.Routing.Affinity)
	}
	if rec.Routing.Session != newSession(onA).hex || strings.Contains(rec.Routing.Session, onA) {
		t.Errorf("logged session %q, want the hash of the key", rec.Routing.Session)
	}
	// A request that names no conversation is routed as sticky.
	got := h.post("/v1/messages", claudeBody)
	if rec := h.record(); got.status != 200 || rec.Routing.Session != "" {
		t.Errorf("no session: status %d, session %q", got.status, rec.Routing.Session)
	}
}

// TestAffinityExpiry: an entry lives an hour after its last use, an
// answer (set) or a lookup (get).
func TestAffinityExpiry(t *testing.T) {
	var a affinities
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	a.set(7, 2, t0)
	if _, ok := a.get(7, t0.Add(affinityIdle)); ok {
		t.Fatal("still there an hour after it was set, unused")
	}
	a.set(7, 2, t0)
	if id, ok := a.get(7, t0.Add(affinityIdle-time.Nanosecond)); !ok || id != 2 {
		t.Fatalf("just before an hour: %d %v, want 2", id, ok)
	}
	a.set(7, 2, t0.Add(90*time.Minute)) // answered again
	if _, ok := a.get(7, t0.Add(90*time.Minute+affinityIdle-time.Nanosecond)); !ok {
		t.Fatal("expired although answered less than an hour before")
	}
	a.set(8, 1, t0.Add(5*affinityIdle)) // sweeps
	if len(a.m) != 1 {
		t.Errorf("%d entries after the sweep, want 1", len(a.m))
	}
}

// TestSessionsBoundedLoad: new conversations spread with no endpoint
// taking more than loadFactor × an even share of them, however their
// rendezvous choices fall.
func TestSessionsBoundedLoad(t *testing.T) {
	s := New(Options{})
	var cands []*endpoint
	for id := range int64(4) {
		cands = append(cands, &endpoint{Endpoint: Endpoint{ID: id + 1}})
	}
	q := &request{s: s}
	now := time.Now()
	// 25 of the 40 conversations would all choose endpoint 1 by
	// rendezvous alone.
	const n = 40
	var keys []string
	for i, onFirst := 0, 0; len(keys) < n; i++ {
		k := fmt.Sprintf("conversation-%d", i)
		if first := firstChoice(k, 1, 2, 3, 4) == 1; first && onFirst < 25 {
			keys, onFirst = append(keys, k), onFirst+1
		} else if !first && len(keys)-onFirst < n-25 {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		sess := newSession(k)
		ordered, _ := q.sessionOrder(cands, sess)
		s.affinity.set(sess.hash, ordered[0].ID, now)
	}
	limit := int(math.Ceil(1.25 * n / 4)) // 13
	for id := range int64(4) {
		if got := s.affinity.load(id + 1); got > limit {
			t.Errorf("endpoint %d carries %d of %d conversations, want at most %d", id+1, got, n, limit)
		}
	}
}
