package proxy

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
)

// Key pools (docs/BEHAVIOUR.md#key-pools): an endpoint with keys sends
// each attempt with one of them, picked here, and each key has a breaker
// of its own in Options.KeyBreakers, keyed by the key's id (ids are never
// reused, so no key inherits another's breaker). A key's faults (keyFault)
// go to its breaker; the endpoint's go to the endpoint's.

// Key is one key of an endpoint's pool as the app hands it to the proxy.
type Key struct {
	ID      int64
	Label   string
	Secret  string
	Weight  int // 0: only when no key of weight > 0 is left
	Enabled bool
}

// poolKey is a Key compiled: its mask for the log and the endpoint that
// sends it (a copy of the pool's endpoint with APIKey set to the secret,
// so that everything that sends, classifies or redacts by e.APIKey uses
// the key of the attempt).
type poolKey struct {
	Key
	mask    string
	variant *endpoint
}

// keyPicker is an endpoint's shared picking state, which outlives no
// snapshot: an edit starts it again.
type keyPicker struct {
	mu sync.Mutex
	// current is smooth weighted round-robin's running weight per key id.
	current map[int64]int
	// sticky is the id of the key the sticky strategy stays on.
	sticky int64
}

// compileKeys gives ce its pool: one variant per key, in pool order.
func compileKeys(ce *endpoint) {
	if len(ce.Keys) == 0 {
		return
	}
	ce.picker = &keyPicker{current: map[int64]int{}}
	enabled := 0
	for _, k := range ce.Keys {
		if k.Enabled {
			enabled++
		}
	}
	ce.pooled = enabled > 1
	ce.pool = make([]*poolKey, 0, len(ce.Keys))
	for _, k := range ce.Keys {
		pk := &poolKey{Key: k, mask: MaskKey(k.Secret)}
		v := *ce
		v.APIKey = k.Secret
		v.key = pk
		v.root = ce
		pk.variant = &v
		ce.pool = append(ce.pool, pk)
	}
	// Without a pool key the endpoint sends none of its own: a request
	// that could not pick one never reaches the upstream.
	ce.APIKey = ce.Keys[0].Secret
}

// origin is the endpoint a key variant was made from; e itself otherwise.
func (e *endpoint) origin() *endpoint {
	if e.root != nil {
		return e.root
	}
	return e
}

// label names the key of a variant for the log: its label and mask.
func (k *poolKey) label() string {
	if k.Label == "" {
		return k.mask
	}
	return k.Label + " (" + k.mask + ")"
}

// keyFault says whether an attempt's failure is its key's rather than the
// endpoint's: the key was refused (401, 403), or its credit is spent (402,
// quota). Transport errors, timeouts, 5xx and rate limits are the
// endpoint's (docs/BEHAVIOUR.md#key-pools).
func keyFault(res result) bool {
	if res.outcome.Kind != breaker.Failure {
		return false
	}
	return res.outcome.Reason == breaker.QuotaExhausted || res.status == 401 || res.status == 403 || res.keyRefused
}

// errNoKey: every key of the pool is disabled, held open by its breaker or
// already failed in this request.
var errNoKey = errors.New("no key of its pool is available")

// usableKeys are the keys of e a request may pick now: enabled, not in
// spent, and (unless bypass) passed by their breakers. Weight-0 keys come
// only when no other is left.
func (q *request) usableKeys(e *endpoint, spent []int64, now time.Time, bypass, peek bool) []*poolKey {
	var weighted, zero []*poolKey
	for _, k := range e.pool {
		if !k.Enabled || slices.Contains(spent, k.ID) {
			continue
		}
		if !bypass {
			b := q.s.keyBreakers.Get(k.ID)
			if peek && !b.WouldBeAvailable(now) || !peek && !b.Available(now) {
				continue
			}
		}
		if k.Weight > 0 {
			weighted = append(weighted, k)
		} else {
			zero = append(zero, k)
		}
	}
	if len(weighted) > 0 {
		return weighted
	}
	return zero
}

// pickKey chooses among keys (not empty) by the request's strategy: a
// session's own rendezvous order over key ids, so a conversation keeps its
// key and its prompt cache; sticky stays on a key until it fails; every
// other strategy is smooth weighted round-robin.
func (q *request) pickKey(e *endpoint, keys []*poolKey) *poolKey {
	switch {
	case q.sess.hex != "":
		return slices.MaxFunc(keys, func(a, b *poolKey) int {
			return cmpFloat(weightedScore(q.sess.hash, a.ID, a.Weight), weightedScore(q.sess.hash, b.ID, b.Weight))
		})
	case q.strategy() == StrategySticky:
		return e.picker.stay(e.pool, keys)
	}
	return e.picker.smooth(keys)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// weightedScore is weighted rendezvous hashing's score of id for session
// s: -w / ln(u), u the hash taken into (0, 1); each id wins a share of the
// sessions in proportion to its weight. A weight of 0 counts as a tiny
// one, so that such a key still has an order.
func weightedScore(s uint64, id int64, w int) float64 {
	u := (float64(rendezvousScore(s, id)>>11) + 0.5) / (1 << 53)
	weight := float64(w)
	if w <= 0 {
		weight = 1e-9
	}
	return -weight / math.Log(u)
}

// smooth is smooth weighted round-robin over keys: each gains its weight,
// the largest is picked and loses the sum, so 3:1 goes a a b a, a a b a.
func (p *keyPicker) smooth(keys []*poolKey) *poolKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	total := 0
	var best *poolKey
	for _, k := range keys {
		w := max(k.Weight, 1) // weight-0 keys come alone, in turn
		total += w
		p.current[k.ID] += w
		if best == nil || p.current[k.ID] > p.current[best.ID] {
			best = k
		}
	}
	p.current[best.ID] -= total
	return best
}

// stay is the sticky key: the one the endpoint stayed on while it is
// usable, else the next usable one after it in pool order.
func (p *keyPicker) stay(pool, keys []*poolKey) *poolKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range keys {
		if k.ID == p.sticky {
			return k
		}
	}
	at := slices.IndexFunc(pool, func(k *poolKey) bool { return k.ID == p.sticky })
	for i := 1; i <= len(pool); i++ {
		k := pool[(at+i+len(pool))%len(pool)]
		if slices.Contains(keys, k) {
			p.sticky = k.ID
			return k
		}
	}
	p.sticky = keys[0].ID
	return keys[0]
}

// permit is one attempt's breaker permits: the endpoint's, and its key's
// when the endpoint has a pool; e is the endpoint the attempt sends to
// (the key's variant).
type permit struct {
	e     *endpoint
	ep    breaker.Permit
	key   breaker.Permit
	keyed bool
}

// Done reports an attempt's outcome: a key's fault to the key's breaker
// only, any other failure to the endpoint's only, a success to both.
func (p permit) Done(res result) {
	o := res.outcome
	if !p.keyed {
		p.ep.Done(o)
		return
	}
	switch {
	case keyFault(res):
		p.ep.Done(neutral)
		p.key.Done(o)
	case o.Kind == breaker.Success:
		p.ep.Done(o)
		p.key.Done(o)
	default:
		p.ep.Done(o)
		p.key.Done(neutral)
	}
}

// keyPermit picks a key of e's pool, not one of spent, and takes its
// breaker's permit (Bypass for an explicit request, whose endpoint was
// named: it still picks among the keys the breakers pass when there are).
func (q *request) keyPermit(e *endpoint, spent []int64, deadline time.Time) (*poolKey, breaker.Permit, error) {
	now := time.Now()
	spent = slices.Clone(spent)
	for {
		keys := q.usableKeys(e, spent, now, false, false)
		bypass := false
		if len(keys) == 0 && q.explicit != nil {
			keys, bypass = q.usableKeys(e, spent, now, true, false), true
		}
		if len(keys) == 0 {
			return nil, breaker.Permit{}, fmt.Errorf("%s: %w", e.Name, errNoKey)
		}
		k := q.pickKey(e, keys)
		b := q.s.keyBreakers.Get(k.ID)
		if bypass {
			return k, b.Bypass(e.profile, deadline), nil
		}
		p, err := b.Allow(e.profile, deadline)
		if err == nil {
			return k, p, nil
		}
		// Another request took its HalfOpen probe in between.
		spent = append(spent, k.ID)
	}
}

// keysAvailable says whether routing may offer e: it has no pool, or some
// key of its pool is enabled and passed by its breaker.
func (q *request) keysAvailable(e *endpoint, now time.Time, peek bool) bool {
	return len(e.pool) == 0 || len(q.usableKeys(e, nil, now, false, peek)) > 0
}
