package app

import (
	"fmt"
	"net/http"

	"github.com/ccmesh/ccmesh/app/balance"
	"github.com/ccmesh/ccmesh/app/desktop"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/store"
)

// Balances (docs/BEHAVIOUR.md#balance): the routes, and what a reading
// does outside the book — a notice, an event. The readings, their schedule
// and how they steer breakers are app/balance's Book.

// The balance replies are app/balance's.
type (
	// BalanceReply is an endpoint's balance as the admin API shows it.
	BalanceReply = balance.BalanceReply
	// BalanceTotal is what the known readings of one unit add up to.
	BalanceTotal = balance.BalanceTotal
	// BalancesReply is GET /api/balances.
	BalancesReply = balance.BalancesReply
)

// BalanceTemplatesReply is GET /api/balance-templates.
type BalanceTemplatesReply struct {
	Templates []balance.Template `json:"templates"`
	Units     []balance.Unit     `json:"units"`
}

// balanceHost is the app as the book sees it (balance.Host).
type balanceHost struct{ a *App }

func (h balanceHost) Endpoints() []store.Endpoint { return h.a.state.Load().Endpoints }

func (h balanceHost) EndpointByID(id int64) (store.Endpoint, bool) { return h.a.endpointByID(id) }

func (h balanceHost) TransportFor(e store.Endpoint) http.RoundTripper { return h.a.transportFor(e) }

func (h balanceHost) Breaker(id int64) *breaker.Breaker { return h.a.breakers.Get(id) }

func (h balanceHost) LowBalance(e store.Endpoint, r balance.Reading) { h.a.notifyLowBalance(e, r) }

func (h balanceHost) Read(rep BalanceReply) { h.a.events.Publish("balance", rep) }

func newBalances(a *App, rt http.RoundTripper) *balance.Book {
	return balance.NewBook(balanceHost{a}, a.db, a.log, rt)
}

// notifyLowBalance tells the desktop an endpoint went under its threshold.
func (a *App) notifyLowBalance(e store.Endpoint, r balance.Reading) {
	n := a.notifier.Load()
	if n == nil || !a.state.Load().Settings.Notifications {
		return
	}
	title, body := desktop.LowBalanceNotice(a.state.Load().Settings.Language, e.Name, balance.Words(r))
	go func() {
		if err := (*n)(title, body); err != nil {
			a.log.Debug().Err(err).Msg("desktop notification not shown")
		}
	}()
}

// noteQuotaError asks for a read of an endpoint whose answer just said its
// quota or credit is spent (the breaker opened for it).
func (a *App) noteQuotaError(t breaker.Transition) {
	if t.Cause == breaker.CauseRequest && t.To == breaker.Open && t.Reason == breaker.QuotaExhausted {
		a.bal.Ask(t.ID)
	}
}

// getBalance is GET /api/endpoints/{id}/balance: the last reading.
func (a *App) getBalance(w http.ResponseWriter, r *http.Request) error {
	e, err := a.pathEndpoint(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a.bal.Reply(e))
	return nil
}

// refreshBalance is POST /api/endpoints/{id}/balance: read it now.
func (a *App) refreshBalance(w http.ResponseWriter, r *http.Request) error {
	e, err := a.pathEndpoint(r)
	if err != nil {
		return err
	}
	rep, ok := a.bal.Read(r.Context(), e)
	if !ok {
		return &apiError{Status: http.StatusConflict, Code: "no_balance_connector",
			Message: fmt.Sprintf("endpoint %s has no balance connector: pick a template or describe one in its balance field", e.Name)}
	}
	// The breaker change a reading made is in the audit trail before the reply.
	if err := a.persist.Flush(r.Context()); err != nil {
		a.log.Warn().Err(err).Int64("endpoint_id", e.ID).Msg("breaker change of a balance reading not saved yet")
	}
	a.events.Publish("health", a.Health())
	writeJSON(w, http.StatusOK, rep)
	return nil
}

// listBalances is GET /api/balances.
func (a *App) listBalances(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, a.bal.All())
	return nil
}

// balanceTemplates is GET /api/balance-templates: the built-in connectors
// and the units a custom one may name.
func (a *App) balanceTemplates(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, BalanceTemplatesReply{Templates: balance.Templates(), Units: balance.Units})
	return nil
}
