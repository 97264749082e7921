package proxy

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"
)

// First-token hedging (docs/BEHAVIOUR.md#hedging). An attempt that has no
// first content event (no response headers, when not streamed) after its
// endpoint's delay is raced by the same request on the next candidate of
// the walk: the request's first attempt or a later one, whichever stalls
// first, once per request. Each side runs on its own copy of the request,
// so the two never share state; a side's first write to the client claims
// the gate (its writer, claim.go, does it), and the first to claim wins:
// the other's context is cancelled, its writes are dropped and it ends as
// "cancelled", neutral for its breaker. The prelude hold is what makes this safe: nothing of a side
// reaches the client before it has content, and then it is the only one
// writing.

var errHedgeLost = errors.New("the racing attempt answered first")

// hedgeGate decides a race: the first side to claim it may write to the
// client.
type hedgeGate struct {
	mu     sync.Mutex
	winner int  // -1 until a side claims
	second bool // the second side was started
	cancel [2]context.CancelCauseFunc
}

// hedgeSide is one side's view of the race.
type hedgeSide struct {
	gate *hedgeGate
	side int
	// before is how many attempts the request had made before the race.
	before int
}

// claim reports whether side may write to the client: it wins the race
// when nobody has, and the other side is stopped. sides is how many
// attempts the race has made; it cannot change once a side has won.
func (g *hedgeGate) claim(side int) (won bool, sides int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.winner < 0 {
		g.winner = side
		g.cancel[1-side](errHedgeLost)
	}
	sides = 1
	if g.second {
		sides = 2
	}
	return g.winner == side, sides
}

// startSecond takes the second side's permit when nobody has won yet, and
// reports whether the second side may start. The permit is taken under
// the gate's lock so that a side claiming the race sees the second side
// either started, with its permit, or never to start: what it tells the
// client about the attempts is what the log will say.
func (g *hedgeGate) startSecond(take func() (permit, error)) (permit, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.winner >= 0 {
		return permit{}, false
	}
	p, err := take()
	if err != nil {
		return p, false
	}
	g.second = true
	return p, true
}

// claim is called by a side's writer on its first write to the client;
// false means the side lost its race and must write nothing. A side that
// wins counts the attempts as the record will: every attempt before the
// race and each side started (docs/BEHAVIOUR.md#attempt-loop, headers).
func (q *request) claim() bool {
	won, sides := q.hedge.gate.claim(q.hedge.side)
	if won {
		q.rec.AttemptCount = q.hedge.before + sides
	}
	return won
}

// ctx is the context attempts run under.
func (q *request) ctx() context.Context {
	if q.base != nil {
		return q.base
	}
	return q.r.Context()
}

// lostRace is the result of a side that lost its race.
func lostRace() result {
	return result{verdict: verdict{act: actNext, outcome: neutral, errType: ErrHedgeCancelled}, msg: "cancelled: " + errHedgeLost.Error()}
}

// hedgeCandidate is the endpoint to race e with, or nil: the next
// candidate after e in the walk, when the setting is on, the request has
// not raced yet and the budget has room for both attempts. Explicit
// endpoints and count_tokens are never raced.
func (q *request) hedgeCandidate(e *endpoint) *endpoint {
	if q.hedgeAfter(e) <= 0 || q.hedged || q.explicit != nil || q.budget-len(q.attempts) < 2 ||
		q.inbound.Count {
		return nil
	}
	// The walk visits each candidate once, in q.order: the one after e is
	// where a failure of e would go next. After the last there is none;
	// wrapping would race an endpoint the walk has already left.
	i := slices.Index(q.order, e.origin())
	if i < 0 || i+1 >= len(q.order) {
		return nil
	}
	return q.order[i+1]
}

// hedgeAfter is how long an attempt on e may go without content before
// it is raced: the endpoint's own delay, or the setting's; HedgeOff when
// it is never raced.
func (q *request) hedgeAfter(e *endpoint) time.Duration {
	if e.HedgeAfter <= HedgeSetting {
		return max(q.snap.cfg.HedgeAfter, HedgeOff)
	}
	return e.HedgeAfter
}

// raceSide is one side's copy of the request and its attempt.
type raceSide struct {
	q      *request
	at     attempt
	permit permit
	model  string
	done   chan struct{}
}

// side makes the copy of q that side i of gate runs on.
func (q *request) side(gate *hedgeGate, i int, e *endpoint) *raceSide {
	c := *q
	rec := *q.rec
	c.rec = &rec
	c.bodies = maps.Clone(q.bodies) // an adjusted retry adds to it
	var ctx context.Context
	ctx, gate.cancel[i] = context.WithCancelCause(q.r.Context())
	c.base = ctx
	c.hedge = &hedgeSide{gate: gate, side: i, before: q.rec.AttemptCount}
	c.w = newClaimWriter(q.w, &c)
	// What the client's headers say when this side answers (claim sets
	// the count once the race is decided).
	c.rec.EndpointID, c.rec.Endpoint = e.ID, e.Name
	c.rec.AttemptCount = q.rec.AttemptCount + i + 1
	c.startMeter(e)
	return &raceSide{q: &c, at: attempt{e: e}, done: make(chan struct{})}
}

// run forwards the side's attempt. A side whose attempt ends after the
// other side won was stopped by it: cancelled, neutral, whatever its
// interrupted read looked like; one that failed before that failed on its
// own and counts. Its start and end are its own, not the race's.
func (s *raceSide) run() {
	defer close(s.done)
	s.at.start = time.Now()
	s.at.res = s.q.forward(s.at.e)
	s.at.end = time.Now()
	s.model = s.q.rec.ModelForwarded
	g := s.q.hedge.gate
	g.mu.Lock()
	lost := g.winner >= 0 && g.winner != s.q.hedge.side
	g.mu.Unlock()
	if lost {
		s.at.res = lostRace()
	}
}

// tryHedged runs the attempt on e and, when it has no content after
// HedgeAfter, the same request on next, and keeps the one that answers
// first. Both attempts go into the failover history.
func (q *request) tryHedged(e *endpoint, first permit, next *endpoint) action {
	q.rec.TokensIn, q.rec.TokensOut = 0, 0
	// Encode both bodies now, so the sides only read the shared caches.
	q.prepare(e)
	q.prepare(next)
	gate := &hedgeGate{winner: -1}
	a := q.side(gate, 0, e)
	b := q.side(gate, 1, next)
	defer gate.cancel[0](nil)
	defer gate.cancel[1](nil)
	go a.run()
	timer := time.NewTimer(q.hedgeAfter(e))
	defer timer.Stop()
	raced := false
	select {
	case <-a.done:
	case <-timer.C:
		b.permit, raced = gate.startSecond(func() (permit, error) { return q.permit(next, nil) })
		if raced {
			// The key the permit picked (keys.go); the same endpoint.
			b.at.e = b.permit.e
			go b.run()
		}
	case <-q.r.Context().Done():
	}
	<-a.done
	if raced {
		// Only a race that started spends the request's one hedge: an
		// attempt that answered or failed before the delay leaves it to
		// the attempts after it.
		q.hedged = true
		<-b.done
	}
	return q.settleRace(a, b, first, raced)
}

// settleRace folds the sides back into the request: the winner's record
// fields, both attempts in the history, and the action the loop goes on
// with.
func (q *request) settleRace(a, b *raceSide, first permit, raced bool) action {
	a.permit = first
	sides := []*raceSide{a}
	if raced {
		sides = append(sides, b)
	}
	winner := -1
	if w := a.q.hedge.gate; raced {
		w.mu.Lock()
		winner = w.winner
		w.mu.Unlock()
	}
	for i, s := range sides {
		q.rec.AttemptCount++
		q.rec.EndpointID, q.rec.Endpoint = s.at.e.ID, s.at.e.Name
		q.meter = s.q.meter
		if !raced || i == winner || winner < 0 && i == len(sides)-1 {
			q.adopt(s.q)
		}
		var part HedgePart
		switch {
		case !raced:
		case i == winner:
			part = HedgeWon
		case s.at.res.errType == ErrHedgeCancelled:
			part = HedgeCancelled
		default:
			part = HedgeFailed
		}
		q.finish(s.at, s.permit, s.model, part)
	}
	if winner >= 0 {
		ws := sides[winner]
		q.rec.EndpointID, q.rec.Endpoint = ws.at.e.ID, ws.at.e.Name
		q.rec.TokensIn, q.rec.TokensOut = 0, 0
		if u := q.rec.Attempts[len(q.rec.Attempts)-len(sides)+winner].Usage; u != nil {
			q.rec.TokensIn, q.rec.TokensOut = u.PromptTotal(), u.Output
		}
		return ws.at.res.act
	}
	for _, s := range sides {
		if s.at.res.act == actStop {
			return actStop
		}
	}
	return a.at.res.act
}

// adopt takes the fields a side's attempt set on its copy of the record:
// what the client got from it.
func (q *request) adopt(c *request) {
	r, w := q.rec, c.rec
	r.Status, r.TTFBMs, r.Stream, r.StreamEnd = w.Status, w.TTFBMs, w.Stream, w.StreamEnd
	r.SentUpstream = r.SentUpstream || w.SentUpstream
	r.ClientGone, r.Error, r.ModelForwarded = w.ClientGone, w.Error, w.ModelForwarded
	q.abort = q.abort || c.abort
}

// prepare encodes the body an attempt on e would send, so that it is in
// the caches before the race starts.
func (q *request) prepare(e *endpoint) {
	t, err := q.translationFor(e)
	switch {
	case err != nil:
	case t != nil:
		_, _ = q.translatedBody(e, t) // a request e cannot carry fails in its attempt
	default:
		q.bodyFor(e)
	}
}
