package app

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/ccmesh/ccmesh/app/pricing"
	"github.com/ccmesh/ccmesh/store"
)

// The price table is the package app/pricing; the app keeps the user's
// rows in its settings document and serves them on /api/prices. The
// aliases keep the settings document's and the API's types where the
// rest of the app names them.
type (
	PriceRow      = pricing.PriceRow
	PriceRowReply = pricing.PriceRowReply
	PricesReply   = pricing.PricesReply
	Prices        = pricing.Prices
)

// NewPrices is the price table with the user's rows user in front of the
// shipped ones.
func NewPrices(user []PriceRow) *Prices { return pricing.NewPrices(user) }

// validPriceRows checks the user's price rows found at field
// (pricing.Validate), as the admin API's 422.
func validPriceRows(field string, rows []PriceRow) *apiError {
	if err := pricing.Validate(field, rows); err != nil {
		return rejected(err.Code, err.Field, "%s", err.Message)
	}
	return nil
}

// pricesReply is the user's rows of s, then the shipped rows.
func pricesReply(s Settings) PricesReply {
	shipped := pricing.Shipped()
	out := PricesReply{Rows: make([]PriceRowReply, 0, len(s.Prices)+len(shipped))}
	for _, r := range s.Prices {
		out.Rows = append(out.Rows, PriceRowReply{PriceRow: r})
	}
	for _, r := range shipped {
		out.Rows = append(out.Rows, PriceRowReply{PriceRow: r, Shipped: true})
	}
	return out
}

func (a *App) getPrices(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, pricesReply(a.state.Load().Settings))
	return nil
}

// putPrices replaces the user's price rows, kept in the settings document.
func (a *App) putPrices(w http.ResponseWriter, r *http.Request) error {
	var in pricing.Doc
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	if in.Rows == nil {
		return rejected(store.CodeRequired, "rows", `rows is required: the list of your price rows ("rows": [] removes them all)`)
	}
	if err := validPriceRows("rows", in.Rows); err != nil {
		return err
	}
	err := a.mutate(r.Context(), func(ctx context.Context) error {
		s := a.state.Load().Settings // inside the write lock: the settings stored now
		s.Prices = in.Rows
		doc, err := json.Marshal(s)
		if err != nil {
			return err
		}
		return a.db.PutSettings(ctx, doc)
	})
	if err != nil {
		return err
	}
	saved := a.state.Load().Settings
	a.events.Publish("settings", saved)
	writeJSON(w, http.StatusOK, pricesReply(saved))
	return nil
}
