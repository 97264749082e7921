package proxy

import (
	"maps"
	"slices"
	"sync"
)

// A selector is one rotation strategy (docs/BEHAVIOUR.md#rotation): where
// the walk over a request's candidates starts. The attempt loop and the
// dry run (explain.go) ask the same selector, the dry run without moving
// anything.
type selector interface {
	// start is the index into cands, which are in routable-list order, to
	// start the walk at. cursor is the protocol's sticky cursor as the
	// request read it; advance says whether the selector may move shared
	// state (false for a dry run).
	start(q *request, cands []*endpoint, cursor int64, advance bool) int
}

// selectors holds one selector per strategy; "" is sticky.
var selectors = map[Strategy]selector{
	StrategySticky:     sticky{},
	StrategyPriority:   first{},
	StrategySession:    first{}, // a session's candidates come in its own order
	StrategyRoundRobin: roundRobin{},
	StrategyFastest:    fastest{},
	StrategyWeighted:   weighted{},
}

func selectorOf(s Strategy) selector {
	if sel, ok := selectors[s]; ok {
		return sel
	}
	return sticky{}
}

// first always starts at the first candidate: priority, and a session's
// own order.
type first struct{}

func (first) start(*request, []*endpoint, int64, bool) int { return 0 }

// sticky starts at the cursor, which moves only when an endpoint fails.
type sticky struct{}

func (sticky) start(q *request, cands []*endpoint, cursor int64, _ bool) int {
	return q.atOrAfter(cands, cursor)
}

// roundRobin moves the cursor on every request.
type roundRobin struct{}

func (roundRobin) start(q *request, cands []*endpoint, _ int64, advance bool) int {
	at := q.s.cursors[q.pi].Load()
	if advance {
		at = q.s.cursors[q.pi].Add(1) - 1
	}
	return q.atOrAfter(cands, at)
}

// weighted is smooth weighted round-robin over the candidates (which are
// the healthy ones) by their endpoints' weights: each gains its weight,
// the largest starts and loses the sum. Weight-0 endpoints start only when
// no candidate has a weight; the walk after the start is list order.
type weighted struct{}

func (weighted) start(q *request, cands []*endpoint, _ int64, advance bool) int {
	st := &q.s.weights[q.pi]
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.current == nil {
		st.current = map[int64]int{}
	}
	cur := st.current
	if !advance {
		cur = maps.Clone(cur)
	}
	anyWeight := slices.ContainsFunc(cands, func(e *endpoint) bool { return e.Weight > 0 })
	total, best := 0, -1
	for i, e := range cands {
		w := e.Weight
		if !anyWeight {
			w = 1
		}
		if w <= 0 {
			continue
		}
		total += w
		cur[e.ID] += w
		if best < 0 || cur[e.ID] > cur[cands[best].ID] {
			best = i
		}
	}
	if best < 0 {
		return 0
	}
	cur[cands[best].ID] -= total
	return best
}

// weightState is one protocol's running weights for weighted.
type weightState struct {
	mu      sync.Mutex
	current map[int64]int
}

// atOrAfter is the first candidate at or after list position pos (modulo
// the list's length, so cursors survive edits), cyclically.
func (q *request) atOrAfter(cands []*endpoint, pos int64) int {
	n := int64(len(q.snap.lists[q.pi]))
	if n == 0 {
		return 0
	}
	at := pos % n
	for i, e := range cands {
		if int64(e.listIndex[q.pi]) >= at {
			return i
		}
	}
	return 0
}

// startPos picks where the walk over cands starts: an explicit endpoint's
// request starts at it; otherwise the request's strategy decides.
func (q *request) startPos(cands []*endpoint, cursor int64, advance bool) int {
	if q.explicit != nil || len(q.snap.lists[q.pi]) == 0 {
		return 0
	}
	return selectorOf(q.strategy()).start(q, cands, cursor, advance)
}
