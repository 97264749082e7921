package proxy

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ccmesh/ccmesh/breaker"
)

// When an endpoint refuses a droppable part of a request (droppable.go),
// the attempt sends the request again without it, inside the same permit,
// and when that answer succeeds the endpoint keeps the part as learned
// (learn.go) and goes without it from then on (docs/BEHAVIOUR.md#refused-fields).

// maxSameEndpointTries bounds the tries of one attempt on its endpoint:
// refusals of parts one after another, and one adjusted retry (retry.go).
const maxSameEndpointTries = 4

// forward makes one attempt on e: forwardOnce, then again on e as long as
// e refuses parts it can go without or a retry with the request adjusted
// may help (retry.go), within maxSameEndpointTries.
func (q *request) forward(e *endpoint) result {
	q.drops = q.s.dropsFor(e)
	var (
		learned []Drop
		refusal string
		adj     adjustment
	)
	res := q.forwardOnce(e)
	for tries := 1; tries < maxSameEndpointTries; tries++ {
		switch {
		case len(res.refused) > 0:
			learned = append(learned, res.refused...)
			q.drops = append(slices.Clone(q.drops), res.refused...)
			if refusal == "" {
				refusal = fmt.Sprintf("%d: %s", res.status, res.msg)
			}
			q.s.log.Debug().Str("endpoint", e.Name).Strs("dropped", dropNames(res.refused)).Msg("retrying without the parts the endpoint refused")
		case res.adjust != adjustNone && adj == adjustNone:
			// One more try with the request adjusted: the breaker hears
			// only how the attempt ends.
			adj = res.adjust
			q.adjusted = adj
			q.s.log.Debug().Str("endpoint", e.Name).Str("adjustment", adj.String()).Msg("retrying with the request adjusted")
		default:
			tries = maxSameEndpointTries
			continue
		}
		res = q.forwardOnce(e)
	}
	q.adjusted = adjustNone
	if adj == adjustNone && refusal != "" {
		adj = adjustDropRefused
	}
	res.adjusted, res.dropped, res.refusal = adj, q.drops, refusal
	if len(learned) > 0 && res.outcome.Kind == breaker.Success {
		q.s.learn(e, learned, refusal)
	}
	return res
}

// withDrops is body, the request about to be sent, without the parts the
// attempt leaves out; it keeps body as sent for refusedParts.
func (q *request) withDrops(body []byte) []byte {
	q.sent = body
	return applyDrops(body, q.drops)
}

// dropBetas removes the anthropic-beta values the attempt leaves out.
func (q *request) dropBetas(h http.Header) {
	v := h.Get("Anthropic-Beta")
	if v == "" || len(q.drops) == 0 {
		return
	}
	if kept := q.drops.withoutBetas(v); kept != "" {
		h.Set("Anthropic-Beta", kept)
	} else {
		h.Del("Anthropic-Beta")
	}
}

// refusedParts is what a 400 or 422 answer refuses that the request can
// go without and still carries: sending it again without them differs
// from what was refused.
func (q *request) refusedParts(status int, body []byte) []Drop {
	if status != http.StatusBadRequest && status != http.StatusUnprocessableEntity || q.inbound.Count {
		return nil
	}
	var out []Drop
	for _, d := range refusedDrops(body) {
		if q.drops.Has(d) || !q.carries(d) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// carries reports whether the request as sent has d.
func (q *request) carries(d Drop) bool {
	if v, ok := strings.CutPrefix(string(d), dropPrefixBeta); ok {
		for got := range strings.SplitSeq(q.r.Header.Get("Anthropic-Beta"), ",") {
			if strings.TrimSpace(got) == v {
				return !q.drops.Has(d)
			}
		}
		return false
	}
	now := applyDrops(q.sent, q.drops)
	return !bytes.Equal(now, applyDrops(q.sent, append(slices.Clone(q.drops), d)))
}
