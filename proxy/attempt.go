package proxy

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
)

// result is one attempt's verdict with what the log says about it.
type result struct {
	verdict
	status   int
	msg      string
	bodyHead string
	// adjust asks forward to try the same endpoint once more with the
	// request adjusted (retry.go); nothing was written to the client.
	adjust adjustment
	// adjusted is the adjustment this attempt's answer came with.
	adjusted adjustment
	// refused names the droppable parts the answer refused (refused.go):
	// forward sends the request again without them.
	refused []Drop
	// dropped is what this attempt's answer came without; refusal the
	// answer that made ccmesh leave parts out during this attempt.
	dropped Drops
	refusal string
	// ttfb is how long the upstream took to send response headers; 0
	// when it sent none.
	ttfb time.Duration
}

// attempt is one attempt's working state. The failover history entry
// (Attempt) is written from it; the loop reads it back for the rate-limit
// answer (retryAt).
type attempt struct {
	e     *endpoint
	start time.Time
	// end is when the attempt ended, when that was before finish (a race
	// side waits for the other); zero: at finish.
	end time.Time
	res result
	// retryAt is when the endpoint's 429 said to come back; zero if none.
	retryAt time.Time
}

// loopEnd is how one run of the attempt loop ended.
type loopEnd uint8

const (
	loopDone    loopEnd = iota // the request is answered (or its client gone)
	loopRefused                // every breaker refused before any attempt: route again
	loopAgain                  // every attempt was rate limited and waiting pays: route again
)

// runAttempts is the attempt loop over cands, which are in routable-list
// order. It walks the candidates once from the strategy's starting point,
// giving each at most two attempts in a row (three when the request named
// its endpoint), within the budget of max(1, 2×candidates) set by the
// first run and shared by the runs after it.
//
// It ends with loopRefused, having written nothing, when every candidate's
// breaker refused a permit before any attempt (another request took a
// HalfOpen probe between routing and the loop), and with loopAgain when
// every attempt so far was a 429 and one of the endpoints is free again
// within the rate-limit wait (docs/BEHAVIOUR.md#rate-limit-wait): it has
// waited, and the caller routes again.
func (q *request) runAttempts(cands []*endpoint) loopEnd {
	if q.budget == 0 {
		q.budget = max(1, attemptShare(cands))
		if q.explicit != nil {
			q.budget = 3
		}
	}
	tried := len(q.attempts)
	var seen [2]int64
	q.order, seen = q.walkOrder(cands, true)
	for visited := 0; visited < len(q.order) && len(q.attempts) < q.budget; visited++ {
		e := q.order[visited]
		switch q.visit(e, q.budget) {
		case visitDone:
			return loopDone
		case visitFailed:
			if q.explicit == nil {
				q.leave(e, &seen)
			}
		}
	}
	if len(q.attempts) == tried {
		if tried > 0 {
			q.exhausted(cands)
			return loopDone
		}
		return loopRefused
	}
	if q.waitOutRateLimits(cands) {
		return loopAgain
	}
	q.exhausted(cands)
	return loopDone
}

// attemptShare is the attempts the candidates are worth: two each, or one
// per enabled key of a larger pool (docs/BEHAVIOUR.md#key-pools).
func attemptShare(cands []*endpoint) int {
	n := 0
	for _, e := range cands {
		keys := 0
		for _, k := range e.pool {
			if k.Enabled {
				keys++
			}
		}
		n += max(2, keys)
	}
	return n
}

// waitOutRateLimits waits, when every attempt so far was a 429, budget is
// left and every candidate said when it is free again, the earliest within
// the rate-limit wait, until that moment. It reports whether the request
// should try again.
func (q *request) waitOutRateLimits(cands []*endpoint) bool {
	if len(q.attempts) >= q.budget || !q.allRateLimited() {
		return false
	}
	free := q.earliestFree(cands)
	// A 429 without a retry time says nothing about when to come back:
	// trying it again at once would only hammer it.
	if !free.After(time.Now()) || free.After(q.start.Add(q.snap.cfg.RateLimitWait)) {
		return false
	}
	if err := sleepCtx(q.r.Context(), time.Until(free)); err != nil {
		q.clientGone(err)
		return false
	}
	q.rec.Routing.WaitedMs = time.Since(q.start).Milliseconds()
	return true
}

func (q *request) allRateLimited() bool {
	for _, at := range q.attempts {
		if at.res.errType != ErrRateLimit {
			return false
		}
	}
	return len(q.attempts) > 0
}

// visitEnd is how the loop's stay on one endpoint ended.
type visitEnd uint8

const (
	visitDone    visitEnd = iota // answered, or the client left: the request is over
	visitFailed                  // the endpoint failed: move on, and the cursor past it
	visitRefused                 // its breaker refused a permit: move on
)

// visit makes one attempt on e, and one more after RetryDelay when the
// first asks for a retry (any number, within the budget, for an explicit
// endpoint). An endpoint with a key pool moves to its next key at once
// when an attempt fails by its key (keyFault), one attempt per key.
func (q *request) visit(e *endpoint, budget int) visitEnd {
	var spent []int64 // keys of e's pool that failed in this visit
	retries, wait := 0, false
	for tries := 0; len(q.attempts) < budget; tries++ {
		if wait {
			if err := sleepCtx(q.r.Context(), q.snap.cfg.RetryDelay); err != nil {
				q.clientGone(err)
				return visitDone
			}
		}
		p, err := q.permit(e, spent)
		if err != nil {
			q.s.log.Debug().Str("endpoint", e.Name).Err(err).Msg("breaker refused a candidate")
			if tries == 0 {
				return visitRefused
			}
			return visitFailed
		}
		switch q.try(p.e, p) {
		case actDone:
			if at := q.answered(); q.sess.hex != "" && at.res.outcome.Kind == breaker.Success {
				q.s.affinity.set(q.sess.hash, at.e.ID, time.Now())
			}
			return visitDone
		case actStop:
			q.clientGone(nil)
			return visitDone
		case actRetry:
			if retries == 0 || q.explicit != nil {
				retries++
				wait = true
				continue
			}
		case actNext:
			if last := q.attempts[len(q.attempts)-1]; last.e.key != nil && last.e.origin() == e && e.pooled && keyFault(last.res) {
				spent = append(spent, last.e.key.ID)
				wait = false
				continue
			}
		}
		return visitFailed
	}
	return visitFailed
}

// answered is the attempt that answered the client: the last one, or, after
// a race, the side that won it, which the cancelled side may follow in the
// history.
func (q *request) answered() attempt {
	for i := len(q.attempts) - 1; i >= 0; i-- {
		if q.attempts[i].res.act == actDone {
			return q.attempts[i]
		}
	}
	return q.attempts[len(q.attempts)-1]
}

// permit takes the breaker permits for one attempt on e, its endpoint's
// and, when e has a key pool, a key's not in spent (keys.go): explicit
// requests skip the breakers' verdict but still report to them
// (docs/BEHAVIOUR.md#explicit-endpoint).
func (q *request) permit(e *endpoint, spent []int64) (permit, error) {
	cfg := &q.snap.cfg
	// A permit whose request never reports must not wedge a HalfOpen
	// breaker; a longer stream reporting to an expired permit changes nothing.
	deadline := time.Now().Add(cfg.FirstByteTimeout + permitGrace)
	b := q.s.breakers.Get(e.ID)
	var p permit
	if q.explicit != nil {
		p.ep = b.Bypass(e.profile, deadline)
	} else {
		ep, err := b.Allow(e.profile, deadline)
		if err != nil {
			return permit{}, fmt.Errorf("breaker of %s: %w", e.Name, err)
		}
		p.ep = ep
	}
	p.e = e
	if len(e.pool) == 0 {
		return p, nil
	}
	k, kp, err := q.keyPermit(e, spent, deadline)
	if err != nil {
		p.ep.Done(neutral)
		return permit{}, err
	}
	p.e, p.key, p.keyed = k.variant, kp, e.pooled
	if !e.pooled {
		// The endpoint's own breaker hears everything; the key's only
		// lets a forced-open key hold the endpoint back.
		kp.Done(neutral)
	}
	return p, nil
}

const permitGrace = 10 * time.Minute

// routeStrategy is the strategy a matched rule names, else the setting's.
func (q *request) routeStrategy() Strategy {
	if q.rule != nil && q.rule.Then.Strategy != "" {
		return q.rule.Then.Strategy
	}
	return q.snap.strategy
}

// strategy is the strategy this request is routed by: a request that
// names no conversation is routed as sticky under the session strategy.
func (q *request) strategy() Strategy { return q.resolve(q.routeStrategy()) }

func (q *request) resolve(s Strategy) Strategy {
	if s == StrategySession && q.sess.hex == "" {
		return StrategySticky
	}
	return s
}

// leave moves the sticky cursor of e's frame past e, which the loop
// leaves because it failed. The compare-and-swap from the value this
// request last saw keeps concurrent failures on the same endpoint from
// skipping a healthy one.
func (q *request) leave(e *endpoint, seen *[2]int64) {
	i := 1
	if q.rule != nil && q.rule.has(e) {
		i = 0
	}
	f := q.frame(i)
	if f.strategy != StrategySticky || f.size == 0 {
		return
	}
	next := int64((f.pos(e) + 1) % f.size)
	if f.cursor.CompareAndSwap(seen[i], next) {
		seen[i] = next
		return
	}
	seen[i] = f.cursor.Load()
}

// try runs one attempt on e, reports its outcome to the permit and
// appends it to the failover history. An attempt may be raced by a hedge
// on the next candidate, once per request (hedge.go).
func (q *request) try(e *endpoint, p permit) action {
	if next := q.hedgeCandidate(e); next != nil {
		return q.tryHedged(e, p, next)
	}
	at := q.begin(e)
	at.res = q.forward(e)
	q.finish(at, p, q.rec.ModelForwarded, "")
	return at.res.act
}

// begin starts the record of an attempt on e.
func (q *request) begin(e *endpoint) attempt {
	q.rec.AttemptCount++
	q.rec.EndpointID, q.rec.Endpoint = e.ID, e.Name
	q.rec.TokensIn, q.rec.TokensOut = 0, 0
	q.startMeter(e)
	return attempt{e: e, start: time.Now()}
}

// finish reports an attempt's outcome to its permit and appends it to the
// failover history; model is what it was sent, hedge its part in a race.
func (q *request) finish(at attempt, p permit, model string, hedge HedgePart) {
	if at.res.act == actStop {
		at.res.outcome = neutral
	}
	p.Done(at.res)
	end := at.end
	if end.IsZero() {
		end = time.Now()
	}
	q.s.speeds.report(at.e.ID, at.res, end)
	if ra := at.res.retryAfter; ra > 0 {
		at.retryAt = end.Add(ra)
	}
	q.attempts = append(q.attempts, at)
	use := q.attemptUsage(at.res)
	e := at.e
	q.rec.Attempts = append(q.rec.Attempts, Attempt{
		EndpointID:     e.ID,
		Endpoint:       e.Name,
		ErrorType:      at.res.errType,
		Status:         at.res.status,
		Message:        at.res.msg,
		BodyHead:       at.res.bodyHead,
		StartedAt:      at.start,
		DurationMs:     end.Sub(at.start).Milliseconds(),
		BreakerCounted: at.res.outcome.Kind != breaker.Neutral,
		Outcome:        at.res.outcome.Kind,
		Translation:    q.translationName(e),
		Adjusted:       at.res.adjusted.word(),
		Dropped:        dropNames(at.res.dropped),
		Refused:        at.res.refusal,
		ModelAnswered:  q.answeredOther(model),
		Model:          model,
		Usage:          use,
		Hedge:          hedge,
	})
	if k := e.key; k != nil {
		a := &q.rec.Attempts[len(q.rec.Attempts)-1]
		a.KeyID, a.Key = k.ID, k.label()
		a.KeyFault = e.origin().pooled && keyFault(at.res)
	}
	if at.res.act != actDone && at.res.act != actStop {
		// The message may quote the upstream's body: it goes to the request
		// log only, never to the process log.
		q.s.log.Debug().Str("endpoint", e.Name).Int("attempt", q.rec.AttemptCount).
			Int("code", at.res.status).Str("error_type", string(at.res.errType)).Msg("attempt failed")
	}
}

// exhausted answers when the loop ends without a response: the last
// upstream error in the client's shape with the failover history, or 429
// with Retry-After when every attempt was rate limited (docs/BEHAVIOUR.md#attempt-loop).
func (q *request) exhausted(cands []*endpoint) {
	atts := q.rec.Attempts
	status := atts[len(atts)-1].Status
	if status < 400 {
		status = http.StatusBadGateway
	}
	if q.rec.ClientGone {
		return // gone while waiting out a rate limit: nothing to write
	}
	advice := exhaustedAdvice(atts)
	if q.allRateLimited() {
		secs := max(1, int(math.Ceil(time.Until(q.earliestFree(cands)).Seconds())))
		status = http.StatusTooManyRequests
		q.w.Header().Set("Retry-After", strconv.Itoa(secs))
		advice = fmt.Sprintf("all are rate limited; retry in %d s", secs)
	}
	q.s.log.Warn().Str("endpoint", q.rec.Endpoint).Int("attempts", len(atts)).Int("code", status).
		Str("model", q.model).Msg("no endpoint served the request")
	q.fail(status, historyMessage(atts, advice))
}

// earliestFree is when the earliest of cands may be tried again: the end
// of its breaker's cooldown, or the retry time its last 429 gave.
func (q *request) earliestFree(cands []*endpoint) time.Time {
	now := time.Now()
	var earliest time.Time
	for _, e := range cands {
		free := now
		if v := q.s.breakers.Get(e.ID).View(now); v.State == breaker.Open && v.Until.After(now) {
			free = v.Until
		} else if t, ok := q.retryAt(e.ID); ok && t.After(now) {
			free = t
		}
		if earliest.IsZero() || free.Before(earliest) {
			earliest = free
		}
	}
	return earliest
}

// retryAt is when endpoint id's last 429 said to come back.
func (q *request) retryAt(id int64) (time.Time, bool) {
	for i := len(q.attempts) - 1; i >= 0; i-- {
		if at := &q.attempts[i]; at.e.ID == id && !at.retryAt.IsZero() {
			return at.retryAt, true
		}
	}
	return time.Time{}, false
}

// historyMessage says which endpoints were tried and why each failed.
func historyMessage(atts []Attempt, advice string) string {
	var b strings.Builder
	names := map[string]bool{}
	for _, a := range atts {
		names[a.Endpoint] = true
	}
	fmt.Fprintf(&b, "ccmesh tried %d endpoint(s) in %d attempt(s) and none succeeded:", len(names), len(atts))
	for i := 0; i < len(atts); {
		j := i + 1
		for j < len(atts) && atts[j].Endpoint == atts[i].Endpoint && atts[j].Message == atts[i].Message {
			j++
		}
		fmt.Fprintf(&b, " %s: %s", atts[i].Endpoint, atts[i].Message)
		if j-i > 1 {
			fmt.Fprintf(&b, " (×%d)", j-i)
		}
		b.WriteString(";")
		i = j
	}
	b.WriteString(" ")
	b.WriteString(advice)
	return b.String()
}
