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
	// Rule names the routing rule that matched ("" when none did); Rules
	// is each rule's verdict, in order, up to and including it
	// (docs/BEHAVIOUR.md#routing-rules).
	Rule  string      `json:"rule"`
	Rules []RuleMatch `json:"rules"`
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

// Explain runs routing for a request of protocol p asking for model,
// a main conversation's with nothing else to say, as ExplainSample does.
func (s *Server) Explain(p Protocol, model string) Explanation {
	return s.ExplainSample(Sample{Protocol: p, Model: model})
}

// ExplainSample runs routing for the sample request without sending
// anything or changing any breaker or cursor: the same rules and decide
// the proxy runs, with the breakers peeked at. A request that names its
// conversation is routed by the session strategy; a dry run has none, so
// it shows the sticky order.
func (s *Server) ExplainSample(sm Sample) Explanation {
	p, model := sm.Protocol, sm.Model
	x := Explanation{Protocol: p, Model: model, Candidates: []RouteCandidate{}, Excluded: []Excluded{}, Translated: map[string]Translation{},
		Rules: []RuleMatch{}}
	snap := s.snap.Load()
	if snap == nil || !p.Valid() {
		x.Outcome = "no configuration loaded"
		return x
	}
	q := &request{s: s, snap: snap, proto: p, pi: p.Index(), shape: p.Spec(), model: model, r: &http.Request{Header: sm.Header}, rec: &Record{}}
	q.rule, x.Rules = matchRules(snap.rules, &sm)
	if q.rule != nil {
		x.Rule = q.rule.Name
	}
	x.Strategy = q.routeStrategy()
	now := time.Now()
	d := q.decide(now, true)
	x.Excluded = append(x.Excluded, d.excluded...)
	for _, e := range snap.offList(q.pi) {
		if q.rule == nil || !q.rule.has(snap.byName[e.Endpoint]) {
			x.Excluded = append(x.Excluded, e)
		}
	}
	if len(d.cands) == 0 {
		switch {
		case d.byBreaker == 0:
			x.Outcome = q.noEndpointMessage()
		default:
			x.Outcome = q.allOpenMessage(d.excluded, d.byBreaker, now)
		}
		return x
	}
	q.ruleN = d.ruleN
	order, _ := q.walkOrder(d.cands, false)
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
