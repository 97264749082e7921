package app

import (
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// usageDeltas prices a record's attempts and says what the record adds to
// the statistics (docs/BEHAVIOUR.md#statistics), per attempt: each attempt
// is a request to its endpoint for the model it was sent; an attempt the
// loop moved on from is an error, and so is the last one when the request
// failed (a status ≥ 400, or a stream that did not end complete). A
// request that reached no endpoint counts once under endpoint 0 and the
// model asked. Each attempt's Cost is filled in here, off the request path.
func usageDeltas(rec *proxy.Record, price func(model string, endpointID int64, u proxy.Usage) proxy.Cost) []store.UsageDelta {
	failed := rec.Status >= 400 || (rec.StreamEnd != "" && rec.StreamEnd != proxy.StreamComplete)
	if len(rec.Attempts) == 0 {
		return []store.UsageDelta{{Model: rec.ModelAsked, Requests: 1, Errors: b2i(failed)}}
	}
	out := make([]store.UsageDelta, len(rec.Attempts))
	last := len(rec.Attempts) - 1
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
		d := store.UsageDelta{EndpointID: at.EndpointID, Endpoint: at.Endpoint, Model: model,
			Requests: 1, Errors: b2i(i < last || failed), Hedges: b2i(at.Hedge != "" && inRace == 2)}
		if u := at.Usage; u != nil {
			d.Input, d.Output, d.CacheRead, d.CacheWrite, d.Reasoning = u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Reasoning
			c := price(model, at.EndpointID, *u)
			at.Cost = &c
			if c.Priced {
				d.CostUSD = c.USD
			} else {
				d.Unpriced = 1
			}
		}
		out[i] = d
	}
	return out
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// price is the cost of usage u of model on endpoint endpointID: the price
// table's, times the endpoint's price multiplier (docs/BEHAVIOUR.md#cost).
func (a *App) price(model string, endpointID int64, u proxy.Usage) proxy.Cost {
	st := a.state.Load()
	if st == nil || st.Prices == nil {
		return proxy.Cost{}
	}
	mult := 1.0
	for i := range st.Endpoints {
		if st.Endpoints[i].ID == endpointID {
			mult = st.Endpoints[i].PriceMultiplier
			break
		}
	}
	usd, ok := st.Prices.Cost(model, u, mult)
	return proxy.Cost{USD: usd, Priced: ok}
}
