package proxy

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// The session strategy (docs/BEHAVIOUR.md#rotation): a request that names
// its conversation goes to the endpoint rendezvous hashing picks for that
// conversation among the candidates, so conversations spread over the
// endpoints while each keeps one, and its prompt cache stays warm. When
// that endpoint fails, the conversation moves to the next in its own
// rendezvous order and stays there (the affinity table), instead of
// bouncing back, which would throw away the new cache as well.

// sessionKey is what names a request's conversation, or "": Claude Code's
// x-claude-code-session-id header; Codex's session-id header or its body's
// prompt_cache_key; the session part of Anthropic's metadata.user_id
// ("user_…_account_…_session_<id>", or, from newer Claude Code, a JSON
// document with a session_id); OpenAI's user.
func (q *request) sessionKey() string {
	h := q.r.Header
	if v := h.Get("X-Claude-Code-Session-Id"); v != "" {
		return v
	}
	if v := h.Get("Session-Id"); v != "" {
		return v
	}
	if v := q.bodyString(q.info.promptCacheKey); v != "" {
		return v
	}
	if m := q.info.metadata; m.end > m.start {
		var md struct {
			UserID string `json:"user_id"`
		}
		if json.Unmarshal(q.body[m.start:m.end], &md) == nil {
			if _, sess, ok := strings.Cut(md.UserID, "_session_"); ok && sess != "" {
				return sess
			}
			var doc struct {
				SessionID string `json:"session_id"`
			}
			if json.Unmarshal([]byte(md.UserID), &doc) == nil && doc.SessionID != "" {
				return doc.SessionID
			}
		}
	}
	return q.bodyString(q.info.user)
}

// bodyString is the string at sp in the request body, or "" when sp is
// empty or not a string.
func (q *request) bodyString(sp span) string {
	if sp.end <= sp.start || q.body[sp.start] != '"' {
		return ""
	}
	s, err := unquote(q.body[sp.start:sp.end])
	if err != nil {
		return ""
	}
	return s
}

// session is a request's conversation as routing uses it: a hash, never
// the client's own id (which the log must not keep).
type session struct {
	hash uint64
	hex  string // the first 8 bytes of the SHA-256 of the key, for the log
}

func newSession(key string) session {
	sum := sha256.Sum256([]byte(key))
	return session{hash: binary.BigEndian.Uint64(sum[:8]), hex: hex.EncodeToString(sum[:8])}
}

// rendezvousScore ranks endpoint id for session s: each session orders
// the endpoints by this score, so removing one endpoint moves only the
// sessions whose first choice it was.
func rendezvousScore(s uint64, id int64) uint64 {
	return mix64(s ^ mix64(uint64(id)))
}

// mix64 is SplitMix64's finaliser: every input bit flips half the output
// bits, which rendezvous hashing needs to spread sessions evenly.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// sessionOrder returns cands in s's weighted rendezvous order (keys.go's
// weightedScore: equal weights keep plain rendezvous order), rotated to start at
// the endpoint the affinity table holds for s when that one is a
// candidate; affinity reports whether it did.
func (q *request) sessionOrder(cands []*endpoint, s session) (ordered []*endpoint, affinity bool) {
	ordered = slices.Clone(cands)
	slices.SortStableFunc(ordered, func(a, b *endpoint) int {
		return cmp.Or(cmp.Compare(weightedScore(s.hash, b.ID, b.Weight), weightedScore(s.hash, a.ID, a.Weight)), cmp.Compare(a.ID, b.ID))
	})
	id, ok := q.s.affinity.get(s.hash, time.Now())
	if !ok {
		// A new conversation takes the first endpoint in its order that
		// is not already carrying more than its share (consistent hashing
		// with bounded loads): rendezvous alone lets one endpoint draw
		// noticeably more conversations than the others.
		share := weightShares(ordered)
		i := slices.IndexFunc(ordered, func(e *endpoint) bool {
			return q.s.affinity.load(e.ID) < q.s.affinity.bound(share(e))
		})
		return rotate(ordered, max(i, 0)), false
	}
	i := slices.IndexFunc(ordered, func(e *endpoint) bool { return e.ID == id })
	if i < 0 {
		return ordered, false
	}
	// The walk goes on from where the session is, in its own order: after
	// the endpoint it moved to, the ones after that, and only then the
	// ones it left.
	return rotate(ordered, i), true
}

// rotate returns s starting at index i, wrapping.
func rotate[T any](s []T, i int) []T {
	if i == 0 {
		return s
	}
	return append(s[i:len(s):len(s)], s[:i]...)
}

// loadFactor bounds a new conversation's endpoint at this many times an
// even share of the conversations alive.
const loadFactor = 1.25

// Affinity table bounds: an entry lives an hour after its last use, and
// the table holds at most maxAffinities sessions (past that a new session
// is routed by rendezvous alone until entries expire).
const (
	affinityIdle  = time.Hour
	maxAffinities = 100_000
)

// affinities remembers, per session, the endpoint that last answered it.
// In memory only: after a restart sessions start from rendezvous again.
type affinities struct {
	mu        sync.Mutex
	m         map[uint64]affinity
	perEP     map[int64]int // conversations per endpoint, of the entries in m
	lastSweep time.Time
}

type affinity struct {
	endpoint int64
	used     time.Time
}

// get is the endpoint session s is on, if its entry is alive at now. A
// lookup is a use: the conversation is routed by it, so its idle time
// starts again whether or not the request then succeeds there.
func (a *affinities) get(s uint64, now time.Time) (int64, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.m[s]
	if !ok {
		return 0, false
	}
	if now.Sub(e.used) >= affinityIdle {
		a.remove(s, e)
		return 0, false
	}
	if now.After(e.used) {
		e.used = now
		a.m[s] = e
	}
	return e.endpoint, true
}

// load is how many conversations endpoint id carries.
func (a *affinities) load(id int64) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.perEP[id]
}

// bound is the most conversations an endpoint with share of the weight
// should carry for a new one to join it: loadFactor × its share of the
// conversations, counting the new one.
func (a *affinities) bound(share float64) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return int(math.Ceil(loadFactor * float64(len(a.m)+1) * share))
}

// weightShares gives each of cands its share of their weights
// (docs/BEHAVIOUR.md#rotation): an even one when none has a weight.
func weightShares(cands []*endpoint) func(*endpoint) float64 {
	total := 0
	for _, e := range cands {
		total += max(e.Weight, 0)
	}
	return func(e *endpoint) float64 {
		if total == 0 {
			return 1 / float64(max(len(cands), 1))
		}
		return float64(max(e.Weight, 0)) / float64(total)
	}
}

func (a *affinities) remove(s uint64, e affinity) {
	delete(a.m, s)
	if a.perEP[e.endpoint]--; a.perEP[e.endpoint] <= 0 {
		delete(a.perEP, e.endpoint)
	}
}

// set records that endpoint id answered session s at now.
func (a *affinities) set(s uint64, id int64, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m, a.perEP = map[uint64]affinity{}, map[int64]int{}
	}
	if now.Sub(a.lastSweep) >= affinityIdle/4 || len(a.m) >= maxAffinities {
		for k, e := range a.m {
			if now.Sub(e.used) >= affinityIdle {
				a.remove(k, e)
			}
		}
		a.lastSweep = now
	}
	old, known := a.m[s]
	if !known && len(a.m) >= maxAffinities {
		return
	}
	if known {
		a.remove(s, old)
	}
	a.m[s] = affinity{endpoint: id, used: now}
	a.perEP[id]++
}
