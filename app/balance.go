package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/ccmesh/ccmesh/app/balance"
	"github.com/ccmesh/ccmesh/app/desktop"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/store"
)

// Balances (docs/BEHAVIOUR.md#balance): an endpoint's connector is read on
// demand, after a quota error from it, and on the balance_refresh_minutes
// schedule; the last reading is kept, shown, and steers its breaker.

// BalanceReply is an endpoint's balance as the admin API shows it.
type BalanceReply struct {
	EndpointID int64  `json:"endpoint_id"`
	Endpoint   string `json:"endpoint"`
	// Connector is the template's name, "custom", or "" when the endpoint
	// has none.
	Connector string `json:"connector"`
	// Reading is the last one; null before the first.
	Reading      *balance.Reading `json:"reading"`
	Low          bool             `json:"low"` // under its low threshold (the UI's badge)
	LowThreshold *float64         `json:"low_threshold"`
}

// BalanceTotal is what the known readings of one unit add up to.
type BalanceTotal struct {
	Unit      balance.Unit `json:"unit"`
	Remaining float64      `json:"remaining"`
	Endpoints int          `json:"endpoints"`
}

// BalancesReply is GET /api/balances: every endpoint with a connector, and
// the totals per currency (USD, CNY) for the dashboard.
type BalancesReply struct {
	Balances []BalanceReply `json:"balances"`
	Totals   []BalanceTotal `json:"totals"`
}

// BalanceTemplatesReply is GET /api/balance-templates.
type BalanceTemplatesReply struct {
	Templates []balance.Template `json:"templates"`
	Units     []balance.Unit     `json:"units"`
}

// storedBalance is the document a reading is stored as: the reading and
// whether the endpoint was under its threshold, so a crossing notifies
// once, across restarts too.
type storedBalance struct {
	Reading balance.Reading `json:"reading"`
	Low     bool            `json:"low"`
}

// balances holds the last readings and runs the reads off the request path.
type balances struct {
	a        *App
	reader   balance.Reader
	schedule *balance.Schedule
	queue    chan int64 // endpoint ids to read; 0 is all

	mu   sync.Mutex // guards last and the sequence numbers; held while a reading is applied
	last map[int64]storedBalance
	// started and applied number each endpoint's reads in the order they
	// began: a read that finishes after a later one (the schedule's and a
	// refresh at once) is stale and changes nothing.
	started, applied map[int64]uint64
}

func newBalances(a *App, rt http.RoundTripper) *balances {
	b := &balances{a: a, reader: balance.Reader{Transport: rt}, queue: make(chan int64, 64), last: map[int64]storedBalance{},
		started: map[int64]uint64{}, applied: map[int64]uint64{}}
	b.schedule = balance.NewSchedule(func(ctx context.Context) { b.readAll(ctx) })
	return b
}

// load reads the stored readings at start.
func (b *balances) load(ctx context.Context) error {
	rows, err := b.a.db.LoadBalanceReadings(ctx)
	if err != nil {
		return err
	}
	for _, r := range rows {
		var s storedBalance
		if err := json.Unmarshal(r.Reading, &s); err != nil {
			b.a.log.Warn().Err(err).Int64("endpoint_id", r.EndpointID).Msg("skipping an unreadable balance reading")
			continue
		}
		b.last[r.EndpointID] = s
	}
	return nil
}

// run reads what is queued until ctx ends.
func (b *balances) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-b.queue:
			if id == 0 {
				b.readAll(ctx)
				continue
			}
			if e, ok := b.a.endpointByID(id); ok {
				b.read(ctx, e)
			}
		}
	}
}

// ask queues a read of endpoint id (0: all) without waiting; a full queue
// already has reads to do.
func (b *balances) ask(id int64) {
	if b == nil {
		return
	}
	select {
	case b.queue <- id:
	default:
	}
}

// configure follows a new snapshot: the schedule runs only while some
// endpoint has a connector.
func (b *balances) configure(st *State) {
	any := slices.ContainsFunc(st.Endpoints, func(e store.Endpoint) bool { return !connectorOf(e).Empty() })
	b.schedule.Set(time.Duration(st.Settings.BalanceRefreshMinutes)*time.Minute, any)
}

func (b *balances) readAll(ctx context.Context) {
	for _, e := range b.a.state.Load().Endpoints {
		if ctx.Err() != nil {
			return
		}
		if !connectorOf(e).Empty() {
			b.read(ctx, e)
		}
	}
}

// connectorOf decodes e's stored connector; the admin API checked it.
func connectorOf(e store.Endpoint) balance.Connector {
	var c balance.Connector
	if len(e.Balance) > 0 {
		_ = json.Unmarshal(e.Balance, &c) // {} or a checked connector
	}
	return c
}

// read reads e's balance and applies the reading; an endpoint without a
// connector has nothing to read.
func (b *balances) read(ctx context.Context, e store.Endpoint) (BalanceReply, bool) {
	c := connectorOf(e)
	if c.Empty() {
		return BalanceReply{}, false
	}
	rd := b.reader
	if e.ProxyURL != "" {
		// Through the endpoint's proxy, as its requests go.
		rd.Transport = b.a.transportFor(e)
	}
	b.mu.Lock()
	b.started[e.ID]++
	n := b.started[e.ID]
	b.mu.Unlock()
	r := rd.Read(ctx, c, balance.Target{BaseURL: e.BaseURL, APIKey: e.APIKey})
	return b.apply(ctx, e, c, r, n), true
}

// apply keeps r as e's last reading, notifies a crossing of the low
// threshold, and steers e's breaker: nothing left opens it, credit closes
// what a reading opened, an unknown reading changes nothing.
func (b *balances) apply(ctx context.Context, e store.Endpoint, c balance.Connector, r balance.Reading, n uint64) BalanceReply {
	b.mu.Lock()
	if n < b.applied[e.ID] {
		// A later read was applied first: this one is stale.
		s := b.last[e.ID]
		b.mu.Unlock()
		return b.replyOf(e, c, s, true)
	}
	b.applied[e.ID] = n
	prev := b.last[e.ID]
	s := storedBalance{Reading: r, Low: prev.Low}
	if r.Known() {
		s.Low = r.Below(c.LowThreshold)
	}
	b.last[e.ID] = s
	// The breaker follows under the same lock, so readings steer it in
	// the order they are kept.
	br := b.a.breakers.Get(e.ID)
	switch {
	case r.Exhausted(time.Now()):
		br.BalanceOpen(r.ResetAt)
	case r.HasCredit():
		br.BalanceClose()
	}
	b.mu.Unlock()

	doc, err := json.Marshal(s)
	if err == nil {
		err = b.a.db.SaveBalanceReading(ctx, e.ID, r.At, doc)
	}
	if err != nil {
		b.a.log.Warn().Err(err).Int64("endpoint_id", e.ID).Msg("balance reading not saved")
	}
	log := b.a.log.Info()
	if !r.Known() {
		log = b.a.log.Warn().Str("error", r.Error).Int("status", r.Status)
	}
	log.Int64("endpoint_id", e.ID).Str("endpoint", e.Name).Bool("exhausted", r.Exhausted(time.Now())).Msg("balance read")

	if s.Low && !prev.Low {
		b.a.notifyLowBalance(e, r)
	}
	reply := b.replyOf(e, c, s, true)
	b.a.events.Publish("balance", reply)
	return reply
}

func (b *balances) replyOf(e store.Endpoint, c balance.Connector, s storedBalance, read bool) BalanceReply {
	rep := BalanceReply{EndpointID: e.ID, Endpoint: e.Name, Connector: c.Template, LowThreshold: c.LowThreshold}
	if c.Template == "" && !c.Empty() {
		rep.Connector = "custom"
	}
	if read {
		r := s.Reading
		rep.Reading, rep.Low = &r, s.Low
	}
	return rep
}

// reply is e's balance as last read.
func (b *balances) reply(e store.Endpoint) BalanceReply {
	b.mu.Lock()
	s, ok := b.last[e.ID]
	b.mu.Unlock()
	return b.replyOf(e, connectorOf(e), s, ok)
}

// all is every endpoint with a connector or a reading, and the totals.
func (b *balances) all() BalancesReply {
	out := BalancesReply{Balances: []BalanceReply{}, Totals: []BalanceTotal{}}
	totals := map[balance.Unit]*BalanceTotal{}
	for _, e := range b.a.state.Load().Endpoints {
		rep := b.reply(e)
		if rep.Connector == "" {
			continue
		}
		out.Balances = append(out.Balances, rep)
		if r := rep.Reading; r != nil && r.Known() && !r.Unlimited && (r.Unit == balance.USD || r.Unit == balance.CNY) {
			t := totals[r.Unit]
			if t == nil {
				t = &BalanceTotal{Unit: r.Unit}
				totals[r.Unit] = t
			}
			t.Remaining += *r.Remaining
			t.Endpoints++
		}
	}
	for _, u := range []balance.Unit{balance.USD, balance.CNY} {
		if t := totals[u]; t != nil {
			out.Totals = append(out.Totals, *t)
		}
	}
	return out
}

// lowest is the known reading with the least left among endpoints whose
// unit is a currency, for the tray; false when there is none.
func (b *balances) lowest() (BalanceReply, bool) {
	var best BalanceReply
	found := false
	for _, rep := range b.all().Balances {
		r := rep.Reading
		if r == nil || !r.Known() || r.Unlimited || (r.Unit != balance.USD && r.Unit != balance.CNY) {
			continue
		}
		if !found || *r.Remaining < *best.Reading.Remaining {
			best, found = rep, true
		}
	}
	return best, found
}

// notifyLowBalance tells the desktop an endpoint went under its threshold.
func (a *App) notifyLowBalance(e store.Endpoint, r balance.Reading) {
	n := a.notifier.Load()
	if n == nil || !a.state.Load().Settings.Notifications {
		return
	}
	title, body := desktop.LowBalanceNotice(a.state.Load().Settings.Language, e.Name, balanceWords(r))
	go func() {
		if err := (*n)(title, body); err != nil {
			a.log.Debug().Err(err).Msg("desktop notification not shown")
		}
	}()
}

// balanceWords is a known reading's remaining amount with its unit.
func balanceWords(r balance.Reading) string {
	if r.Remaining == nil {
		return "?"
	}
	switch r.Unit {
	case balance.USD:
		return fmt.Sprintf("$%.2f", *r.Remaining)
	case balance.CNY:
		return fmt.Sprintf("¥%.2f", *r.Remaining)
	case balance.Percent:
		return fmt.Sprintf("%.0f %%", *r.Remaining)
	}
	return fmt.Sprintf("%.0f %s", *r.Remaining, r.Unit)
}

// noteQuotaError asks for a read of an endpoint whose answer just said its
// quota or credit is spent (the breaker opened for it).
func (a *App) noteQuotaError(t breaker.Transition) {
	if t.Cause == breaker.CauseRequest && t.To == breaker.Open && t.Reason == breaker.QuotaExhausted {
		a.bal.ask(t.ID)
	}
}

// getBalance is GET /api/endpoints/{id}/balance: the last reading.
func (a *App) getBalance(w http.ResponseWriter, r *http.Request) error {
	e, err := a.pathEndpoint(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a.bal.reply(e))
	return nil
}

// refreshBalance is POST /api/endpoints/{id}/balance: read it now.
func (a *App) refreshBalance(w http.ResponseWriter, r *http.Request) error {
	e, err := a.pathEndpoint(r)
	if err != nil {
		return err
	}
	rep, ok := a.bal.read(r.Context(), e)
	if !ok {
		return &apiError{Status: http.StatusConflict, Code: "no_balance_connector",
			Message: fmt.Sprintf("endpoint %s has no balance connector: pick a template or describe one in its balance field", e.Name)}
	}
	// The breaker change a reading made is in the audit trail before the reply.
	if err := a.persist.flush(r.Context()); err != nil {
		a.log.Warn().Err(err).Int64("endpoint_id", e.ID).Msg("breaker change of a balance reading not saved yet")
	}
	a.events.Publish("health", a.Health())
	writeJSON(w, http.StatusOK, rep)
	return nil
}

// listBalances is GET /api/balances.
func (a *App) listBalances(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, a.bal.all())
	return nil
}

// balanceTemplates is GET /api/balance-templates: the built-in connectors
// and the units a custom one may name.
func (a *App) balanceTemplates(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, BalanceTemplatesReply{Templates: balance.Templates(), Units: balance.Units})
	return nil
}

// checkBalance validates the connector in against the base URL it will
// read for.
func (in *endpointInput) checkBalance(baseURL string) *apiError {
	if in.Balance == nil {
		return nil
	}
	if field, msg := in.Balance.Check(baseURL); field != "" {
		return rejected("invalid_balance", field, "%s", msg)
	}
	return nil
}
