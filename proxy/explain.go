package proxy

import (
	"net/http"
	"slices"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
)

// Explanation is a routing dry run: where a request of a protocol for a
// model would go now, and why every other endpoint would not serve it
// (docs/BEHAVIOUR.md#routing). Candidates are in the order the attempt
// loop would try them.
type Explanation struct {
	Protocol   Protocol         `json:"protocol"`
	Model      string           `json:"model"`
	Strategy   Strategy         `json:"strategy"`
	Candidates []RouteCandidate `json:"candidates"`
	Excluded   []Excluded       `json:"excluded"`
	// Translated names the candidates that would get the request
	// translated, by endpoint name, with the translation.
	Translated map[string]Translation `json:"translated"`
	// Outcome says in words what the request would get when there are no
	// candidates; "" when there are.
	Outcome string `json:"outcome"`
}

// RouteCandidate is a candidate of a dry run: the endpoint, its breaker
// state, and whether the request would reach it translated.
type RouteCandidate struct {
	EndpointID int64         `json:"endpoint_id"`
	Endpoint   string        `json:"endpoint"`
	State      breaker.State `json:"state"`
	Translated bool          `json:"translated"`
	// LoadMs is the figure the fastest strategy compares
	// (docs/BEHAVIOUR.md#rotation): the peak-EWMA of its time to first
	// byte in ms, decayed to now, failures counted as slow answers, times
	// its attempts in flight plus one; 0 before it has answered.
	LoadMs float64 `json:"load_ms"`
}

// Explain runs routing for a request of protocol p asking for model
// without sending anything or changing any breaker or cursor: the same
// decide the proxy runs, with the breakers peeked at. A request that
// names its conversation is routed by the session strategy; a dry run
// has none, so it shows the sticky order.
func (s *Server) Explain(p Protocol, model string) Explanation {
	x := Explanation{Protocol: p, Model: model, Candidates: []RouteCandidate{}, Excluded: []Excluded{}, Translated: map[string]Translation{}}
	snap := s.snap.Load()
	if snap == nil || !p.Valid() {
		x.Outcome = "no configuration loaded"
		return x
	}
	q := &request{s: s, snap: snap, proto: p, pi: p.index(), model: model, r: &http.Request{}}
	x.Strategy = snap.strategy
	now := time.Now()
	d := q.decide(now, true)
	x.Excluded = append(x.Excluded, d.excluded...)
	x.Excluded = append(x.Excluded, snap.offList(q.pi)...)
	if len(d.cands) == 0 {
		switch {
		case d.byBreaker == 0:
			x.Outcome = q.noEndpointMessage()
		default:
			x.Outcome = q.allOpenMessage(d.excluded, d.byBreaker, now)
		}
		return x
	}
	start := q.startPos(d.cands, q.s.cursors[q.pi].Load(), false)
	order := append(slices.Clone(d.cands[start:]), d.cands[:start]...)
	for _, e := range order {
		i := slices.IndexFunc(d.cands, func(c *endpoint) bool { return c == e })
		c := d.candidates[i]
		name := q.translationName(e)
		x.Candidates = append(x.Candidates, RouteCandidate{EndpointID: c.EndpointID, Endpoint: c.Endpoint, State: c.State,
			Translated: name != "", LoadMs: s.speeds.loadMs(e.ID, now)})
		if name != "" {
			x.Translated[e.Name] = name
		}
	}
	return x
}

// offList is every endpoint that is not on protocol pi's routable list,
// with the reason, in list order: disabled, another protocol's endpoint
// that names no model, or left out by a fast queue.
func (s *snapshot) offList(pi int) []Excluded {
	var out []Excluded
	for _, c := range s.cfg.Endpoints {
		e := s.byName[c.Name]
		if e == nil || slices.Contains(s.lists[pi], e) {
			continue
		}
		why := ExcludedNotFast
		switch {
		case !e.Enabled:
			why = ExcludedDisabled
		case !e.canServe(pi):
			why = ExcludedProtocol
		}
		out = append(out, Excluded{EndpointID: e.ID, Endpoint: e.Name, Reason: why})
	}
	return out
}
