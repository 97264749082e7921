// Package stats is what the request log adds up to
// (docs/BEHAVIOUR.md#statistics): the usage, cost and counts a request
// record adds (FillUsage), the buckets of GET /api/stats summed per time
// and key and their CSV (Read, WriteCSV), and today's totals for the tray
// (Today). It reads the store's buckets through the port Reader.
package stats

import (
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// RequestOK reports whether a request succeeded: it ended 2xx, and a
// stream it started ended complete (a stream broken after a 200 is not a
// success).
func RequestOK(rec *proxy.Record) bool {
	return rec.Status >= 200 && rec.Status < 300 && (rec.StreamEnd == "" || rec.StreamEnd == proxy.StreamComplete)
}

// answering is the index of the attempt whose answer the client got: the
// hedge that won its race, else the last one (the one the loop ended on).
func answering(atts []proxy.Attempt) int {
	for i := range atts {
		if atts[i].Hedge == proxy.HedgeWon {
			return i
		}
	}
	return len(atts) - 1
}

// Price is the cost of usage u of model on endpoint endpointID.
type Price func(model string, endpointID int64, u proxy.Usage) proxy.Cost

// FillUsage prices a record's attempts (each attempt's Cost is filled in
// here, off the request path) and sets what row keeps of them: the sum of
// their usage and cost (docs/BEHAVIOUR.md#request-log) and what the
// request adds to the statistics (docs/BEHAVIOUR.md#statistics), per
// attempt: each attempt is an attempt on its endpoint for the model it
// was sent; the attempts the loop moved on from are errors, and so is the
// answering one when the request failed. The request itself counts once,
// under the answering attempt's endpoint and model, or under endpoint 0
// and the model asked when it reached none.
func FillUsage(row *store.RequestLog, rec *proxy.Record, price Price) {
	ok := RequestOK(rec)
	row.Usage = &store.LogUsage{}
	if len(rec.Attempts) == 0 {
		row.Deltas = []store.UsageDelta{{Model: rec.ModelAsked, Counts: store.Counts{Requests: 1, Succeeded: b2i(ok)}}}
		return
	}
	deltas := make([]store.UsageDelta, len(rec.Attempts))
	answer := answering(rec.Attempts)
	var cost *float64
	// A race may start from any attempt (docs/BEHAVIOUR.md#hedging): its
	// two sides are the attempts with a part in it, the hedge the second.
	inRace := 0
	for i := range rec.Attempts {
		at := &rec.Attempts[i]
		model := at.Model
		if model == "" {
			model = rec.ModelForwarded
		}
		if at.Hedge != "" {
			inRace++
		}
		d := store.UsageDelta{EndpointID: at.EndpointID, Endpoint: at.Endpoint, Model: model, KeyID: at.KeyID, Key: at.Key,
			Counts: store.Counts{Attempts: 1, Errors: b2i(i != answer || !ok), Hedges: b2i(at.Hedge != "" && inRace == 2)}}
		if i == answer {
			d.Requests, d.Succeeded = 1, b2i(ok)
		}
		if u := at.Usage; u != nil {
			d.Tokens = tokensOf(u)
			row.Usage.Add(d.Tokens)
			row.Usage.Estimated = row.Usage.Estimated || u.Estimated
			c := price(model, at.EndpointID, *u)
			at.Cost = &c
			if c.Priced {
				d.CostUSD = c.USD
				cost = addCost(cost, c.USD)
			} else {
				d.Unpriced = 1
			}
		}
		deltas[i] = d
	}
	row.Deltas, row.CostUSD = deltas, cost
}

// tokensOf is an attempt's usage in the store's counts: the proxy's names
// are the store's (docs/BEHAVIOUR.md#usage).
func tokensOf(u *proxy.Usage) store.Tokens {
	return store.Tokens{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Reasoning: u.Reasoning}
}

// addCost adds usd to sum; a nil sum (no price yet) starts at usd.
func addCost(sum *float64, usd float64) *float64 {
	if sum == nil {
		return &usd
	}
	*sum += usd
	return sum
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
