package app

import "github.com/ccmesh/ccmesh/proxy"

// price is the cost of usage u of model on endpoint endpointID: the price
// table's, times the endpoint's price multiplier (docs/BEHAVIOUR.md#cost).
// The log sink gives it to stats.FillUsage.
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
