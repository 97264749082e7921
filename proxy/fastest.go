package proxy

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
)

// The fastest strategy (docs/BEHAVIOUR.md#rotation) is power of two random
// choices over a peak-EWMA of each endpoint's time to first byte: of two
// candidates drawn at random the walk starts at the one whose figure is
// lower. The figure jumps to a slower answer at once (the peak), follows
// quicker ones gradually, counts a failure as a slow answer, and decays
// towards zero while the endpoint gets no answers, so that an endpoint
// that was slow is tried again after a while and keeps its share if it
// has become quick.

const (
	// fastestDecay is the EWMA's time constant: an idle endpoint's figure
	// falls to 1/e of itself in this long.
	fastestDecay = 10 * time.Second
	// fastestPenalty is what a failed attempt counts as: far slower than
	// any answer, so the endpoint is left alone until it decays.
	fastestPenalty = 10 * time.Second
)

// speed is one endpoint's figure.
type speed struct {
	mu      sync.Mutex
	cost    float64   // peak-EWMA of the time to first byte, in ns, as of stamp
	stamp   time.Time // of the last observation
	pending int       // attempts in flight on it
}

// decayed is the cost as of now: it decays towards zero from stamp.
func (s *speed) decayed(now time.Time) (c, w float64) {
	if s.stamp.IsZero() {
		return 0, 0
	}
	w = math.Exp(-float64(max(now.Sub(s.stamp), 0)) / float64(fastestDecay))
	return s.cost * w, w
}

// observe folds in an answer that took rtt: a slower one than the figure
// replaces it, a quicker one is averaged in by the time since the last.
func (s *speed) observe(rtt time.Duration, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, w := s.decayed(now)
	if r := float64(rtt); r > c {
		s.cost = r
	} else {
		s.cost = c + r*(1-w)
	}
	s.stamp = now
}

// load is what the strategy compares: the decayed figure times the
// attempts in flight plus one, so that a burst spreads; an endpoint with
// no figure yet but attempts in flight counts as slow until one answers.
func (s *speed) load(now time.Time) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, _ := s.decayed(now)
	if c == 0 && s.pending > 0 {
		return float64(fastestPenalty) * float64(s.pending)
	}
	return c * float64(s.pending+1)
}

func (s *speed) add(n int) {
	s.mu.Lock()
	s.pending += n
	s.mu.Unlock()
}

// speeds holds every endpoint's figure, by id; a figure outlives edits of
// its endpoint (it measures the upstream, not the config).
type speeds struct {
	m sync.Map // int64 → *speed
	// intN draws a random index below n; nil is math/rand/v2's. Tests
	// set a seeded one.
	intN func(n int) int
}

func (ss *speeds) of(id int64) *speed {
	if v, ok := ss.m.Load(id); ok {
		return v.(*speed)
	}
	v, _ := ss.m.LoadOrStore(id, &speed{})
	return v.(*speed)
}

// loadMs is endpoint id's load now in milliseconds, for the dry run.
func (ss *speeds) loadMs(id int64, now time.Time) float64 {
	return math.Round(ss.of(id).load(now)/1e4) / 100
}

// report folds in the result of an attempt on id: the time to first byte
// of a success, the penalty of a failure; a neutral answer says nothing
// of the endpoint's speed.
func (ss *speeds) report(id int64, res result, now time.Time) {
	switch {
	case res.outcome.Kind == breaker.Success && res.ttfb > 0:
		ss.of(id).observe(res.ttfb, now)
	case res.outcome.Kind == breaker.Failure:
		ss.of(id).observe(fastestPenalty, now)
	}
}

func (ss *speeds) draw(n int) int {
	if ss.intN != nil {
		return ss.intN(n)
	}
	return rand.IntN(n)
}

// fastest starts at the lower-load of two distinct candidates drawn at
// random; a dry run, which must not draw, shows the lowest of all.
type fastest struct{}

func (fastest) start(q *request, _ *frame, cands []*endpoint, _ int64, advance bool) int {
	ss, now := &q.s.speeds, time.Now()
	if len(cands) < 2 {
		return 0
	}
	if !advance {
		best, bestLoad := 0, math.Inf(1)
		for i, e := range cands {
			if l := ss.of(e.ID).load(now); l < bestLoad {
				best, bestLoad = i, l
			}
		}
		return best
	}
	i := ss.draw(len(cands))
	j := ss.draw(len(cands) - 1)
	if j >= i {
		j++
	}
	if ss.of(cands[j].ID).load(now) < ss.of(cands[i].ID).load(now) {
		return j
	}
	return i
}
