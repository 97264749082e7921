package proxy

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/translate"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// request is one client request on its way through the proxy.
type request struct {
	s     *Server
	snap  *snapshot
	w     http.ResponseWriter
	r     *http.Request
	rec   *Record
	proto Protocol // the inbound path's
	// inbound is what the path says about the request (a model, a stream
	// flag), for a protocol that names them there (conv.Spec.Route).
	inbound conv.Inbound
	pi      int // proto's index into the per-protocol arrays
	shape   errShape
	start   time.Time

	body     []byte
	info     bodyInfo
	model    string    // the model asked, @name/ prefix removed
	explicit *endpoint // nil unless the request named its endpoint
	// rule is the routing rule that matched (rules.go), nil when none did;
	// ruleN how many of the candidates are its endpoints.
	rule     *rule
	ruleN    int
	rawQuery string    // the query to forward (ccmesh_endpoint removed)
	attempts []attempt // this request's attempts so far, in order
	budget   int       // attempts allowed in all; set when the loop first runs
	sess     session   // the conversation, under the session strategy; zero otherwise
	// abort: the answer broke after its status was sent; the connection
	// must be cut so the client cannot take it for complete.
	abort bool
	// bodies caches the forwarded body per forwarded model (and protocol,
	// for translated bodies).
	bodies map[string][]byte
	// conv is the client's request in the neutral model, decoded by the
	// first attempt that translates (translate.go).
	conv *conv.Request
	// adjusted is the adjustment of the retry in progress (retry.go).
	adjusted adjustment
	// drops are the parts left out of the current attempt's request, and
	// sent its request before they were left out (refused.go).
	drops Drops
	sent  []byte
	// meter reads the current attempt's usage (usage.go).
	meter meter
	// order is the candidates in the order the loop walks them (hedge.go
	// races an attempt with the candidate after it).
	order []*endpoint
	// hedged: the request's one hedge was started; hedge is this side's
	// part in the race, nil outside one (hedge.go).
	hedged bool
	hedge  *hedgeSide
	// base is the context attempts run under: the client's, or a race
	// side's, which the other side cancels when it wins.
	base context.Context
}

// serve reads the body, resolves the route and runs the attempt loop.
func (q *request) serve() {
	cfg := &q.snap.cfg
	body, tooLarge, err := readBody(q.r.Body, q.r.ContentLength, cfg.MaxBody)
	if tooLarge {
		q.fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than ccmesh's max_body (%d bytes); raise max_body in settings or send less", cfg.MaxBody))
		return
	}
	if err != nil {
		q.clientGone(err)
		return
	}
	q.body = body
	q.info, err = scanBody(body)
	if err != nil {
		q.fail(http.StatusBadRequest, "ccmesh could not read the request: "+err.Error())
		return
	}
	q.info.fromPath(q.inbound)
	if !q.info.hasModel || q.info.model == "" {
		q.fail(http.StatusBadRequest, `the request body has no "model"; name the model to use`)
		return
	}
	q.rec.Stream = q.info.stream
	if status, msg := q.resolveExplicit(); status != 0 {
		q.fail(status, msg)
		return
	}
	q.rec.ModelAsked = q.model
	q.matchRule()
	if q.routeStrategy() == StrategySession && q.explicit == nil {
		if key := q.sessionKey(); key != "" {
			q.sess = newSession(key)
			q.rec.Routing.Session = q.sess.hex
		}
	}
	if q.explicit != nil {
		q.rec.Explicit = true
		// Bypass permits are never refused; a rate-limited explicit
		// endpoint is waited for within the loop's budget.
		end := loopAgain
		for end == loopAgain {
			end = q.runAttempts([]*endpoint{q.explicit})
		}
		return
	}
	for refused := 0; refused < maxRefusedRounds; {
		cands, ok := q.route()
		if !ok {
			return
		}
		switch q.runAttempts(cands) {
		case loopDone:
			return
		case loopRefused:
			refused++
		}
	}
	q.fail(http.StatusBadGateway, fmt.Sprintf("every endpoint for model %s was taken by other requests' recovery probes; retry in a few seconds", q.model))
}

// maxRefusedRounds bounds re-routing when breakers refuse every candidate
// between routing and the attempt loop, a race that should settle at once.
const maxRefusedRounds = 3

// fail answers with an error ccmesh produced before or after the attempts.
func (q *request) fail(status int, msg string) {
	q.rec.Status, q.rec.Error = status, msg
	setCCMeshHeaders(q.w.Header(), q.rec.Endpoint, q.rec.AttemptCount)
	writeError(q.w, q.shape, status, msg)
}

// clientGone records a client that went away; nothing can be written.
func (q *request) clientGone(err error) {
	q.rec.Status, q.rec.ClientGone = StatusClientGone, true
	if err != nil {
		q.rec.Error = "client went away: " + err.Error()
	} else {
		q.rec.Error = "client went away"
	}
}

// resolveExplicit applies docs/BEHAVIOUR.md#explicit-endpoint: header > @name/model > query. The
// @name/ prefix is stripped and ccmesh_endpoint removed whichever way won.
func (q *request) resolveExplicit() (status int, msg string) {
	var fromModel string
	fromModel, q.model = splitExplicitModel(q.info.model)
	q.rawQuery = q.r.URL.RawQuery
	var fromQuery string
	if strings.Contains(q.rawQuery, "ccmesh_endpoint") {
		vals, err := url.ParseQuery(q.rawQuery)
		if err == nil {
			fromQuery = vals.Get("ccmesh_endpoint")
			q.rawQuery = dropQueryParam(q.rawQuery, "ccmesh_endpoint")
		}
	}
	for _, s := range translate.Specs {
		// A key in the query is the client's (or ccmesh's client token):
		// it never goes upstream; the endpoint's key goes in its header.
		if s.KeyQuery != "" && strings.Contains(q.rawQuery, s.KeyQuery+"=") {
			q.rawQuery = dropQueryParam(q.rawQuery, s.KeyQuery)
		}
	}
	name, how := q.r.Header.Get("X-Ccmesh-Endpoint"), "the x-ccmesh-endpoint header"
	switch {
	case name != "":
	case fromModel != "":
		name, how = fromModel, "the model prefix @"+fromModel+"/"
	case fromQuery != "":
		name, how = fromQuery, "the ccmesh_endpoint query parameter"
	default:
		return 0, ""
	}
	e := q.snap.byName[name]
	switch {
	case e == nil:
		if why, bad := q.snap.invalid[name]; bad {
			return http.StatusBadRequest, fmt.Sprintf("endpoint %q named by %s is misconfigured (%s); fix it in ccmesh", name, how, why)
		}
		return http.StatusBadRequest, fmt.Sprintf("no endpoint is named %q (named by %s); check the name in ccmesh's endpoint list", name, how)
	case !e.Enabled:
		return http.StatusBadRequest, fmt.Sprintf("endpoint %q (named by %s) is disabled; enable it in ccmesh or name another", name, how)
	}
	q.explicit = e
	return 0, ""
}

// splitExplicitModel splits "@name/model" into the endpoint name and the
// model; any other model comes back whole with no name. The model part is
// everything after the first '/', so "@relay/openrouter/anthropic/claude"
// names relay and asks for "openrouter/anthropic/claude".
func splitExplicitModel(s string) (name, model string) {
	if rest, ok := strings.CutPrefix(s, "@"); ok {
		if name, m, ok := strings.Cut(rest, "/"); ok {
			return name, m
		}
	}
	return "", s
}

// dropQueryParam removes every key=value pair named key, keeping the rest
// of the query byte-for-byte (Claude Code's ?beta=true must survive).
func dropQueryParam(raw, key string) string {
	parts := strings.Split(raw, "&")
	kept := parts[:0]
	for _, p := range parts {
		k, _, _ := strings.Cut(p, "=")
		if uk, err := url.QueryUnescape(k); err == nil && uk == key {
			continue
		}
		kept = append(kept, p)
	}
	return strings.Join(kept, "&")
}

// route computes the candidates of docs/BEHAVIOUR.md#candidates and, when
// there are none, answers per docs/BEHAVIOUR.md#no-candidates and
// docs/BEHAVIOUR.md#rate-limit-wait (waiting while everything is rate
// limited). ok is false when the response was written.
func (q *request) route() (cands []*endpoint, ok bool) {
	cfg := &q.snap.cfg
	deadline := q.start.Add(cfg.RateLimitWait)
	for {
		now := time.Now()
		d := q.decide(now, false)
		q.rec.Routing.Strategy = q.routeStrategy()
		q.rec.Routing.Candidates, q.rec.Routing.Excluded = d.candidates, d.excluded
		if len(d.cands) > 0 {
			q.ruleN = d.ruleN
			return d.cands, true
		}
		if d.byBreaker == 0 {
			q.fail(http.StatusBadGateway, q.noEndpointMessage())
			return nil, false
		}
		if !d.waitable {
			q.fail(http.StatusBadGateway, q.allOpenMessage(d.excluded, d.byBreaker, now))
			return nil, false
		}
		if d.waitUntil.After(deadline) {
			secs := int(math.Ceil(d.waitUntil.Sub(now).Seconds()))
			q.w.Header().Set("Retry-After", strconv.Itoa(max(1, secs)))
			q.fail(http.StatusTooManyRequests, fmt.Sprintf("every endpoint for model %s is rate limited; the earliest is free again in %d s — retry then", q.model, max(1, secs)))
			return nil, false
		}
		if err := sleepCtx(q.r.Context(), time.Until(d.waitUntil)); err != nil {
			q.clientGone(err)
			return nil, false
		}
		q.rec.Routing.WaitedMs = time.Since(q.start).Milliseconds()
	}
}

// decision is routing's verdict at one moment.
type decision struct {
	cands      []*endpoint
	candidates []Candidate // cands as the log shows them
	excluded   []Excluded
	byBreaker  int // how many of excluded a breaker holds back
	// ruleN is how many of cands, from the first, are a matched rule's
	// endpoints (the rest are the fallback).
	ruleN int
	// waitable: every endpoint serving the model is held back by a rate
	// limit only; waitUntil is when the earliest may be tried again.
	waitable  bool
	waitUntil time.Time
}

// decide filters the request's routable list by model and breaker. With
// peek it asks the breakers what they would answer without taking any
// lazy step, so a dry run (Server.Explain) changes nothing.
func (q *request) decide(now time.Time, peek bool) decision {
	var d decision
	waitable := true
	consider := func(e *endpoint, model string) {
		if !e.serves(q.pi, model) {
			why := ExcludedModel
			if e.protocol != q.pi {
				why = ExcludedProtocol
			}
			d.excluded = append(d.excluded, Excluded{EndpointID: e.ID, Endpoint: e.Name, Reason: why})
			return
		}
		b := q.s.breakers.Get(e.ID)
		passes := peek && b.WouldBeAvailable(now) || !peek && b.Available(now)
		if passes && !q.keysAvailable(e, now, peek) {
			d.excluded = append(d.excluded, Excluded{EndpointID: e.ID, Endpoint: e.Name, Reason: ExcludedKeys})
			d.byBreaker++
			waitable = false
			return
		}
		if passes {
			d.cands = append(d.cands, e)
			d.candidates = append(d.candidates, Candidate{EndpointID: e.ID, Endpoint: e.Name, State: b.View(now).State})
			return
		}
		v := b.View(now)
		d.byBreaker++
		d.excluded = append(d.excluded, Excluded{EndpointID: e.ID, Endpoint: e.Name, Reason: ExcludedBreaker,
			State: v.State, BreakerReason: v.Reason, ProbeInFlight: v.State == breaker.HalfOpen, Until: v.Until, Balance: v.Balance})
		until := v.Until
		switch {
		case v.Reason != breaker.RateLimited:
			waitable = false
		case v.State == breaker.HalfOpen:
			// Another request holds the probe; look again shortly.
			until = now.Add(halfOpenPoll)
		}
		if d.waitUntil.IsZero() || until.Before(d.waitUntil) {
			d.waitUntil = until
		}
	}
	// A matched rule's endpoints come first, serving the model as the
	// rule rewrites it; the routable list follows only with fallback,
	// without the endpoints already considered (docs/BEHAVIOUR.md#routing-rules).
	r := q.rule
	if r != nil {
		m := r.mapModel(q.model)
		for _, e := range r.endpoints {
			consider(e, m)
		}
		d.ruleN = len(d.cands)
	}
	if r == nil || r.Then.Fallback {
		for _, e := range q.snap.lists[q.pi] {
			if r == nil || !r.has(e) {
				consider(e, q.model)
			}
		}
	}
	d.waitable = waitable && !d.waitUntil.IsZero()
	return d
}

// halfOpenPoll is how soon a request waiting out rate limits looks again
// when the endpoint is HalfOpen with its probe taken by another request.
const halfOpenPoll = 100 * time.Millisecond

func (q *request) noEndpointMessage() string {
	proto := q.proto
	if r := q.rule; r != nil && !r.Then.Fallback {
		return fmt.Sprintf("routing rule %q sends this request to %s, and none of them serves model %s to %s clients; "+
			"change the rule's endpoints, or let the normal endpoints follow (fallback)", r.Name, strings.Join(r.Then.Endpoints, ", "), q.model, proto)
	}
	if len(q.snap.lists[q.pi]) == 0 {
		return fmt.Sprintf("no enabled endpoint serves %s clients; add or enable one in ccmesh (endpoints of other protocols serve them, translated, only for models their models or model_map name)", proto)
	}
	return fmt.Sprintf("no enabled endpoint serves model %s to %s clients; add the model to an endpoint's models (or model_map, for an endpoint of another protocol) or name an endpoint with @name/%s", q.model, proto, q.model)
}

func (q *request) allOpenMessage(excluded []Excluded, n int, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "all %d endpoints for model %s are unavailable:", n, q.model)
	for _, x := range excluded {
		if x.Reason == ExcludedKeys {
			fmt.Fprintf(&b, " %s has no key available (each key of its pool is disabled or open);", x.Endpoint)
			continue
		}
		if x.Reason != ExcludedBreaker {
			continue
		}
		fmt.Fprintf(&b, " %s is %s", x.Endpoint, describeHeld(x))
		if !x.Until.IsZero() {
			fmt.Fprintf(&b, ", retried in %d s", max(1, int(math.Ceil(x.Until.Sub(now).Seconds()))))
		}
		b.WriteString(";")
	}
	b.WriteString(" retry later, force-close an endpoint in ccmesh, or name one with @name/model")
	return b.String()
}

// describeHeld words why a breaker holds an endpoint back: "open
// (rate_limited)", or a HalfOpen breaker whose probe another request has.
func describeHeld(x Excluded) string {
	switch {
	case x.ProbeInFlight:
		return "half_open_probe_in_flight"
	case x.BreakerReason == breaker.ReasonNone:
		return x.State.String()
	case x.Balance:
		return x.State.String() + " (" + x.BreakerReason.String() + ", balance)"
	}
	return x.State.String() + " (" + x.BreakerReason.String() + ")"
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait: %w", context.Cause(ctx))
	}
}
