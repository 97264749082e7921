package proxy

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// A selector is one rotation strategy (docs/BEHAVIOUR.md#rotation): where
// the walk over a request's candidates starts. The attempt loop and the
// dry run (explain.go) ask the same selector, the dry run without moving
// anything.
type selector interface {
	// start is the index into cands, which are in f's list order, to
	// start the walk at. cursor is f's sticky cursor as the request read
	// it; advance says whether the selector may move shared state (false
	// for a dry run).
	start(q *request, f *frame, cands []*endpoint, cursor int64, advance bool) int
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

func (first) start(*request, *frame, []*endpoint, int64, bool) int { return 0 }

// sticky starts at the cursor, which moves only when an endpoint fails.
type sticky struct{}

func (sticky) start(_ *request, f *frame, cands []*endpoint, cursor int64, _ bool) int {
	return f.atOrAfter(cands, cursor)
}

// roundRobin moves the cursor on every request.
type roundRobin struct{}

func (roundRobin) start(_ *request, f *frame, cands []*endpoint, _ int64, advance bool) int {
	at := f.cursor.Load()
	if advance {
		at = f.cursor.Add(1) - 1
	}
	return f.atOrAfter(cands, at)
}

// weighted is smooth weighted round-robin over the candidates (which are
// the healthy ones) by their endpoints' weights: each gains its weight,
// the largest starts and loses the sum. Weight-0 endpoints start only when
// no candidate has a weight; the walk after the start is list order.
type weighted struct{}

func (weighted) start(q *request, _ *frame, cands []*endpoint, _ int64, advance bool) int {
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

// frame is a list the rotation runs over (docs/BEHAVIOUR.md#rotation):
// the protocol's routable list, or a matched rule's endpoints
// (docs/BEHAVIOUR.md#routing-rules), each with its own cursor and strategy.
type frame struct {
	size     int
	pos      func(e *endpoint) int // e's index in the list
	cursor   *atomic.Int64
	strategy Strategy // resolved: session only for a request that names its conversation
}

// frame is the request's frame i: 0 a matched rule's, 1 the routable list's.
func (q *request) frame(i int) frame {
	if i == 0 && q.rule != nil {
		r := q.rule
		return frame{size: len(r.endpoints), pos: func(e *endpoint) int { return r.pos[e.origin().ID] },
			cursor: q.s.ruleCursor(r.Name), strategy: q.resolve(cmp.Or(r.Then.Strategy, q.snap.strategy))}
	}
	return frame{size: len(q.snap.lists[q.pi]), pos: func(e *endpoint) int { return e.listIndex[q.pi] },
		cursor: &q.s.cursors[q.pi], strategy: q.resolve(q.snap.strategy)}
}

// ruleCursor is the rotation cursor of the rule named name, kept across
// configuration changes as the protocols' are.
func (s *Server) ruleCursor(name string) *atomic.Int64 {
	if c, ok := s.ruleCursors.Load(name); ok {
		return c.(*atomic.Int64)
	}
	c, _ := s.ruleCursors.LoadOrStore(name, new(atomic.Int64))
	return c.(*atomic.Int64)
}

// atOrAfter is the first candidate at or after list position pos (modulo
// the list's length, so cursors survive edits), cyclically.
func (f *frame) atOrAfter(cands []*endpoint, pos int64) int {
	n := int64(f.size)
	if n == 0 {
		return 0
	}
	at := pos % n
	for i, e := range cands {
		if int64(f.pos(e)) >= at {
			return i
		}
	}
	return 0
}

// walkOrder is the order the attempt loop walks cands in: an explicit
// endpoint alone; otherwise a matched rule's endpoints (the first ruleN)
// from where the rule's strategy starts, then the rest from where the
// setting's starts, each part cyclically. seen holds each frame's cursor
// as read. advance says whether the strategies may move shared state
// (false for a dry run).
func (q *request) walkOrder(cands []*endpoint, advance bool) (order []*endpoint, seen [2]int64) {
	if q.explicit != nil {
		return cands, seen
	}
	parts := [2][]*endpoint{nil, cands}
	if q.rule != nil {
		parts = [2][]*endpoint{cands[:q.ruleN], cands[q.ruleN:]}
	}
	order = make([]*endpoint, 0, len(cands))
	for i, part := range parts {
		if len(part) == 0 {
			continue
		}
		f := q.frame(i)
		if f.strategy == StrategySession {
			var affinity bool
			part, affinity = q.sessionOrder(part, q.sess)
			if advance {
				q.rec.Routing.Affinity = q.rec.Routing.Affinity || affinity
			}
		}
		seen[i] = f.cursor.Load()
		pos := 0
		if f.size > 0 {
			pos = selectorOf(f.strategy).start(q, &f, part, seen[i], advance)
		}
		order = append(order, part[pos:]...)
		order = append(order, part[:pos]...)
	}
	return order, seen
}
