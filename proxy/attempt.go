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

// action is what the attempt loop does after one attempt (docs/BEHAVIOUR.md#attempt-loop).
type action uint8

const (
	actDone  action = iota // a response was written to the client
	actRetry               // 5xx/408/transport: the same endpoint once more, then the next
	actNext                // the next endpoint at once
	actStop                // the client went away: stop, count nothing
)

// result is one attempt's classification.
type result struct {
	act        action
	outcome    breaker.Outcome
	status     int
	errType    string
	msg        string
	bodyHead   string
	retryAfter time.Duration
}

var neutral = breaker.Outcome{Kind: breaker.Neutral}

func failure(r breaker.Reason) breaker.Outcome {
	return breaker.Outcome{Kind: breaker.Failure, Reason: r}
}

// runAttempts is the attempt loop of docs/BEHAVIOUR.md#attempt-loop over cands, which are in
// routable-list order. It walks the candidates once from the strategy's
// starting point, giving each at most two attempts in a row, within the
// budget of max(1, 2×candidates) (3 on one endpoint when explicit).
//
// It reports false, having written nothing, when every candidate's breaker
// refused a permit before any attempt (another request took a HalfOpen
// probe between routing and the loop): the caller routes again.
func (q *request) runAttempts(cands []*endpoint) bool {
	budget := max(1, 2*len(cands))
	if q.explicit != nil {
		budget = 3
	}
	seen := q.s.cursors[q.proto].Load()
	pos := q.startPos(cands, seen)
	ctx := q.r.Context()
	for visited := 0; visited < len(cands) && q.rec.AttemptCount < budget; visited++ {
		e := cands[pos]
		failed := false // the loop leaves e because it failed (not because its breaker refused)
		for tries := 0; q.rec.AttemptCount < budget; tries++ {
			if tries > 0 {
				if err := sleepCtx(ctx, q.snap.cfg.RetryDelay); err != nil {
					q.clientGone(err)
					return true
				}
			}
			permit, err := q.permit(e)
			if err != nil {
				q.s.log.Debug().Str("endpoint", e.Name).Err(err).Msg("breaker refused a candidate")
				break
			}
			res := q.attempt(e, permit)
			failed = true
			switch res.act {
			case actDone:
				return true
			case actStop:
				q.clientGone(nil)
				return true
			case actRetry:
				if tries == 0 || (q.explicit != nil) {
					continue
				}
			}
			break
		}
		if failed && q.explicit == nil {
			seen = q.leave(e, seen)
		}
		pos = (pos + 1) % len(cands)
	}
	if len(q.rec.Attempts) == 0 {
		return false
	}
	q.exhausted(cands)
	return true
}

// permit takes the breaker permit for one attempt: explicit requests skip
// the breaker's verdict but still report to it (docs/BEHAVIOUR.md#explicit-endpoint).
func (q *request) permit(e *endpoint) (breaker.Permit, error) {
	cfg := &q.snap.cfg
	// A permit whose request never reports must not wedge a HalfOpen
	// breaker; a longer stream reporting to an expired permit changes nothing.
	deadline := time.Now().Add(cfg.FirstByteTimeout + permitGrace)
	b := q.s.breakers.Get(e.ID)
	if q.explicit != nil {
		return b.Bypass(e.profile, deadline), nil
	}
	p, err := b.Allow(e.profile, deadline)
	if err != nil {
		return p, fmt.Errorf("breaker of %s: %w", e.Name, err)
	}
	return p, nil
}

const permitGrace = 10 * time.Minute

// startPos picks where the walk over cands starts (docs/BEHAVIOUR.md#rotation).
func (q *request) startPos(cands []*endpoint, cursor int64) int {
	n := int64(len(q.snap.lists[q.proto]))
	if q.explicit != nil || n == 0 {
		return 0
	}
	var at int64
	switch q.snap.strategy {
	case StrategyPriority:
		return 0
	case StrategyRoundRobin:
		at = (q.s.cursors[q.proto].Add(1) - 1) % n
	default:
		at = cursor % n
	}
	for i, e := range cands {
		if int64(e.listIndex) >= at {
			return i
		}
	}
	return 0
}

// leave moves the sticky cursor past e, which the loop leaves because it
// failed. The compare-and-swap from the value this request last saw keeps
// concurrent failures on the same endpoint from skipping a healthy one.
func (q *request) leave(e *endpoint, seen int64) int64 {
	if q.snap.strategy != StrategySticky {
		return seen
	}
	next := int64((e.listIndex + 1) % len(q.snap.lists[q.proto]))
	if q.s.cursors[q.proto].CompareAndSwap(seen, next) {
		return next
	}
	return q.s.cursors[q.proto].Load()
}

// attempt runs one attempt on e, reports its outcome to the permit and
// appends it to the failover history.
func (q *request) attempt(e *endpoint, permit breaker.Permit) result {
	start := time.Now()
	q.rec.AttemptCount++
	q.rec.EndpointID, q.rec.Endpoint = e.ID, e.Name
	q.rec.TokensIn, q.rec.TokensOut = 0, 0
	res := q.forward(e)
	if res.act == actStop {
		res.outcome = neutral
	}
	permit.Done(res.outcome)
	a := Attempt{
		EndpointID:     e.ID,
		Endpoint:       e.Name,
		ErrorType:      res.errType,
		Status:         res.status,
		Message:        res.msg,
		BodyHead:       res.bodyHead,
		StartedAt:      start,
		DurationMs:     time.Since(start).Milliseconds(),
		BreakerCounted: res.outcome.Kind != breaker.Neutral,
		Outcome:        outcomeName(res.outcome.Kind),
	}
	if res.retryAfter > 0 {
		if q.retryAfters == nil {
			q.retryAfters = map[int]time.Duration{}
		}
		q.retryAfters[len(q.rec.Attempts)] = res.retryAfter
	}
	q.rec.Attempts = append(q.rec.Attempts, a)
	if res.act != actDone && res.act != actStop {
		// The message may quote the upstream's body: it goes to the request
		// log only, never to the process log.
		q.s.log.Debug().Str("endpoint", e.Name).Int("attempt", q.rec.AttemptCount).
			Int("code", res.status).Str("error_type", res.errType).Msg("attempt failed")
	}
	return res
}

func outcomeName(k breaker.Kind) string {
	switch k {
	case breaker.Success:
		return "success"
	case breaker.Failure:
		return "failure"
	}
	return "neutral"
}

// neutralStatus are the 4xx of docs/BEHAVIOUR.md#attempt-loop that are the request's own fault.
func neutralStatus(code int) bool {
	switch code {
	case 400, 405, 406, 413, 414, 415, 422:
		return true
	}
	return false
}

// classify applies docs/BEHAVIOUR.md#attempt-loop's table (first matching row wins) to an
// upstream status with its headers and decoded body.
func classify(status int, h http.Header, body []byte, keyInjected bool) result {
	now := time.Now()
	res := result{status: status, errType: errTypeStatus}
	var cl breaker.Class
	switch status {
	case 400, 402, 403, 429:
		cl = breaker.Classify(status, h, body, now)
		if cl.Reason == breaker.QuotaExhausted {
			res.act, res.outcome, res.errType = actNext, failure(breaker.QuotaExhausted), errTypeQuota
			return res
		}
	}
	switch {
	case neutralStatus(status), status == 401 && !keyInjected:
		res.act, res.outcome = actDone, neutral
	case status >= 500, status == 408:
		res.act, res.outcome = actRetry, failure(breaker.Broken)
	case status == 429:
		ra := cl.RetryAfter
		if cl.Reason != breaker.RateLimited || ra <= 0 {
			ra, _ = breaker.ParseRetryAfter(h, now)
		}
		res.act, res.errType, res.retryAfter = actNext, errTypeRateLimit, ra
		res.outcome = breaker.Outcome{Kind: breaker.Failure, Reason: breaker.RateLimited, RetryAfter: ra}
	case status == 402:
		res.act, res.outcome, res.errType = actNext, failure(breaker.QuotaExhausted), errTypeQuota
	case status >= 400:
		res.act, res.outcome = actNext, failure(breaker.Broken)
	default: // 1xx/3xx: not an error, hand it over as it is
		res.act, res.outcome, res.errType = actDone, neutral, ""
	}
	return res
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
	all429 := true
	for _, a := range atts {
		all429 = all429 && a.ErrorType == errTypeRateLimit
	}
	advice := "retry shortly; ccmesh skips failing endpoints on its own"
	if all429 {
		secs := q.retryAfterSecs(cands)
		status = http.StatusTooManyRequests
		q.w.Header().Set("Retry-After", strconv.Itoa(secs))
		advice = fmt.Sprintf("all are rate limited; retry in %d s", secs)
	}
	q.s.log.Warn().Str("endpoint", q.rec.Endpoint).Int("attempts", len(atts)).Int("code", status).
		Str("model", q.model).Msg("no endpoint served the request")
	q.fail(status, historyMessage(atts, advice))
}

// retryAfterSecs is when the earliest candidate is free again, rounded up.
func (q *request) retryAfterSecs(cands []*endpoint) int {
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
	return max(1, int(math.Ceil(earliest.Sub(now).Seconds())))
}

// retryAt is when endpoint id's last 429 said to come back.
func (q *request) retryAt(id int64) (time.Time, bool) {
	for i := len(q.rec.Attempts) - 1; i >= 0; i-- {
		a := &q.rec.Attempts[i]
		if a.EndpointID == id && q.retryAfters != nil {
			if d, ok := q.retryAfters[i]; ok {
				return a.StartedAt.Add(time.Duration(a.DurationMs)*time.Millisecond + d), true
			}
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
