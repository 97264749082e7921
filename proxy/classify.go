package proxy

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/translate"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Everything ccmesh knows about what an upstream's answer means lives here
// and in quota.go and retryafter.go: the table of docs/BEHAVIOUR.md#attempt-loop
// for statuses, transport failures and streams. The breaker only hears the
// resulting breaker.Outcome.

// action is what the attempt loop does after one attempt.
type action uint8

const (
	actDone  action = iota // a response was written to the client
	actRetry               // 5xx/408/transport: the same endpoint once more, then the next
	actNext                // the next endpoint at once
	actStop                // the client went away: stop, count nothing
)

// verdict is the classification of one attempt: what the loop does next
// and what the breaker hears.
type verdict struct {
	act     action
	outcome breaker.Outcome
	errType ErrorType
	// retryAfter is a 429's retry time; zero when the upstream gave none.
	retryAfter time.Duration
	// keyRefused: the protocol's error body says the key is refused,
	// whatever the status (Gemini's API_KEY_INVALID comes as a 400).
	keyRefused bool
}

var (
	success = breaker.Outcome{Kind: breaker.Success}
	neutral = breaker.Outcome{Kind: breaker.Neutral}
)

func failure(r breaker.Reason) breaker.Outcome {
	return breaker.Outcome{Kind: breaker.Failure, Reason: r}
}

// Verdicts that do not depend on the answer's content.
var (
	// delivered: a 2xx reached the client whole.
	delivered = verdict{act: actDone, outcome: success}
	// clientLeft: the client went away; nothing is counted.
	clientLeft = verdict{act: actStop, outcome: neutral, errType: ErrClientGone}
	// brokenRetry: a transport failure or a stream that died before content:
	// the same endpoint once more, then the next.
	brokenRetry = verdict{act: actRetry, outcome: failure(breaker.Broken)}
	// brokenAfterContent: the answer broke after the client got part of it;
	// nothing can be retried.
	brokenAfterContent = verdict{act: actDone, outcome: failure(breaker.Broken), errType: ErrStreamEnd}
)

// neutralStatus are the 4xx that are the request's own fault: the client
// gets them as they came and no breaker counts them.
func neutralStatus(code int) bool {
	switch code {
	case 400, 405, 406, 413, 414, 415, 422, 431:
		return true
	}
	return false
}

// classifyStatus applies the status rows of the table (the first matching
// row wins) to an upstream's non-2xx answer: its status, headers and
// decoded body. keyInjected says ccmesh sent the endpoint's own key, so a
// 401 is about that key and not the client's.
func classifyStatus(status int, h http.Header, body []byte, keyInjected bool, now time.Time) verdict {
	var lc limitClass
	switch status {
	case 400, 402, 403, 429:
		lc = classifyLimit(status, h, body, now)
		if lc.Reason == breaker.QuotaExhausted {
			return verdict{act: actNext, outcome: failure(breaker.QuotaExhausted), errType: ErrQuota}
		}
	}
	switch {
	case neutralStatus(status), status == 401 && !keyInjected:
		return verdict{act: actDone, outcome: neutral, errType: ErrStatus}
	case status >= 500, status == 408:
		return verdict{act: actRetry, outcome: failure(breaker.Broken), errType: ErrStatus}
	case status == 429:
		ra := lc.RetryAfter
		if lc.Reason != breaker.RateLimited || ra <= 0 {
			ra, _ = parseRetryAfter(h, now)
		}
		return verdict{act: actNext, errType: ErrRateLimit, retryAfter: ra,
			outcome: breaker.Outcome{Kind: breaker.Failure, Reason: breaker.RateLimited, RetryAfter: ra}}
	case status == 402:
		return verdict{act: actNext, outcome: failure(breaker.QuotaExhausted), errType: ErrQuota}
	}
	// Any other 4xx, and a 3xx: never followed (the key would go to the
	// Location host) nor handed over as if it were an answer.
	return verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrStatus}
}

// classifyProtocolError applies what a protocol's own error body says
// (conv.Spec.ReadError) over the status rows: a key refused is the key's
// failure when ccmesh sent the key, a spent quota is QuotaExhausted, a
// rate limit waits the time the body names (else the Retry-After). ok is
// false when the body says none of these: the status rows decide.
func classifyProtocolError(ue conv.UpstreamError, h http.Header, keyInjected bool, now time.Time) (verdict, bool) {
	switch {
	case ue.KeyRefused && keyInjected:
		return verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrStatus, keyRefused: true}, true
	case ue.Quota:
		return verdict{act: actNext, outcome: failure(breaker.QuotaExhausted), errType: ErrQuota}, true
	case ue.RateLimited:
		ra := ue.RetryAfter
		if ra <= 0 {
			ra, _ = parseRetryAfter(h, now)
		}
		return verdict{act: actNext, errType: ErrRateLimit, retryAfter: ra,
			outcome: breaker.Outcome{Kind: breaker.Failure, Reason: breaker.RateLimited, RetryAfter: ra}}, true
	}
	return verdict{}, false
}

// classifyStreamError classifies an error event that a 2xx stream sent
// before any content, as if the upstream had answered with the status its
// error type stands for. A half-started stream is never handed over, so
// the rows that would return it to the client move on instead.
func classifyStreamError(data []byte, now time.Time) verdict {
	v := classifyStatus(streamErrorStatus(data), nil, data, true, now)
	if v.act == actDone {
		v.act = actNext
	}
	v.errType = ErrStreamErr
	return v
}

// streamErrorStatus is the HTTP status an in-stream error event stands for:
// from its error type (Anthropic's error.type, OpenAI's error.type or
// error.code, Responses' response.error.code) where errorTypeStatus knows
// it, else from the words overloaded or rate_limit anywhere in the event
// (relays word them freely), else 500.
func streamErrorStatus(data []byte) int {
	var ev struct {
		Error    *errorFields `json:"error"`
		Response *struct {
			Error *errorFields `json:"error"`
		} `json:"response"`
	}
	if json.Unmarshal(data, &ev) == nil {
		e := ev.Error
		if e == nil && ev.Response != nil {
			e = ev.Response.Error
		}
		if e != nil {
			for _, t := range []string{e.Type, e.Code, e.Status} {
				if s, ok := errorTypeStatus[t]; ok {
					return s
				}
			}
		}
	}
	switch {
	case bytes.Contains(data, []byte("overloaded")):
		return 529
	case bytes.Contains(data, []byte("rate_limit")):
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

type errorFields struct {
	Type   string `json:"type"`
	Code   string `json:"code"`
	Status string `json:"status"` // Gemini's RESOURCE_EXHAUSTED, …
}

// UnmarshalJSON takes a code given as a number (some relays send the
// HTTP status there) as its text, so the event still decodes.
func (e *errorFields) UnmarshalJSON(b []byte) error {
	var raw struct {
		Type   json.RawMessage `json:"type"`
		Code   json.RawMessage `json:"code"`
		Status json.RawMessage `json:"status"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	e.Type, e.Code, e.Status = jsonText(raw.Type), jsonText(raw.Code), jsonText(raw.Status)
	return nil
}

func jsonText(b json.RawMessage) string {
	var s string
	if json.Unmarshal(b, &s) == nil {
		return s
	}
	return string(b)
}

// errorTypeStatus maps the error types and codes that upstreams put in
// stream error events to the status they stand for: every protocol's
// (conv.Spec.ErrorStatuses), since relays of one protocol borrow another's
// words. Any other error event counts as a 500: the stream's own failure,
// whatever it says.
var errorTypeStatus = func() map[string]int {
	m := map[string]int{}
	for _, s := range translate.Specs {
		maps.Copy(m, s.ErrorStatuses)
	}
	return m
}()
