package balance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/store"
)

// The book of readings (docs/BEHAVIOUR.md#balance): an endpoint's
// connector is read on demand, after a quota error from it, and on the
// balance_refresh_minutes schedule; the last reading is kept, shown, and
// steers its breaker.

// BalanceReply is an endpoint's balance as the admin API shows it.
type BalanceReply struct {
	EndpointID int64  `json:"endpoint_id"`
	Endpoint   string `json:"endpoint"`
	// Connector is the template's name, "custom", or "" when the endpoint
	// has none.
	Connector string `json:"connector"`
	// Reading is the last one; null before the first.
	Reading      *Reading `json:"reading"`
	Low          bool     `json:"low"` // under its low threshold (the UI's badge)
	LowThreshold *float64 `json:"low_threshold"`
}

// BalanceTotal is what the known readings of one unit add up to.
type BalanceTotal struct {
	Unit      Unit    `json:"unit"`
	Remaining float64 `json:"remaining"`
	Endpoints int     `json:"endpoints"`
}

// BalancesReply is GET /api/balances: every endpoint with a connector, and
// the totals per currency (USD, CNY) for the dashboard.
type BalancesReply struct {
	Balances []BalanceReply `json:"balances"`
	Totals   []BalanceTotal `json:"totals"`
}

// Host is what the book needs from the app.
type Host interface {
	// Endpoints is the current snapshot's list.
	Endpoints() []store.Endpoint
	// EndpointByID is an endpoint of the current snapshot.
	EndpointByID(id int64) (store.Endpoint, bool)
	// TransportFor is how e's own requests go out (its upstream proxy).
	TransportFor(e store.Endpoint) http.RoundTripper
	// Breaker is the breaker of endpoint id, which readings steer.
	Breaker(id int64) *breaker.Breaker
	// LowBalance is told when e goes under its low threshold.
	LowBalance(e store.Endpoint, r Reading)
	// Read is told every reading applied, as the API shows it.
	Read(rep BalanceReply)
}

// Saver keeps readings across restarts (the store).
type Saver interface {
	LoadBalanceReadings(ctx context.Context) ([]store.BalanceReading, error)
	SaveBalanceReading(ctx context.Context, endpointID int64, at time.Time, reading json.RawMessage) error
}

// storedBalance is the document a reading is stored as: the reading and
// whether the endpoint was under its threshold, so a crossing notifies
// once, across restarts too.
type storedBalance struct {
	Reading Reading `json:"reading"`
	Low     bool    `json:"low"`
}

// Book holds the last readings and runs the reads off the request path.
type Book struct {
	host     Host
	db       Saver
	log      zerolog.Logger
	reader   Reader
	schedule *Schedule
	queue    chan int64 // endpoint ids to read; 0 is all

	mu   sync.Mutex // guards last and the sequence numbers; held while a reading is applied
	last map[int64]storedBalance
	// started and applied number each endpoint's reads in the order they
	// began: a read that finishes after a later one (the schedule's and a
	// refresh at once) is stale and changes nothing.
	started, applied map[int64]uint64
}

// NewBook returns an empty book whose reads go out through rt.
func NewBook(host Host, db Saver, log zerolog.Logger, rt http.RoundTripper) *Book {
	b := &Book{host: host, db: db, log: log, reader: Reader{Transport: rt}, queue: make(chan int64, 64),
		last: map[int64]storedBalance{}, started: map[int64]uint64{}, applied: map[int64]uint64{}}
	b.schedule = NewSchedule(func(ctx context.Context) { b.readAll(ctx) })
	return b
}

// Schedule is the book's schedule, which the app runs.
func (b *Book) Schedule() *Schedule { return b.schedule }

// Load reads the stored readings at start.
func (b *Book) Load(ctx context.Context) error {
	rows, err := b.db.LoadBalanceReadings(ctx)
	if err != nil {
		return err
	}
	for _, r := range rows {
		var s storedBalance
		if err := json.Unmarshal(r.Reading, &s); err != nil {
			b.log.Warn().Err(err).Int64("endpoint_id", r.EndpointID).Msg("skipping an unreadable balance reading")
			continue
		}
		b.last[r.EndpointID] = s
	}
	return nil
}

// Run reads what is queued until ctx ends.
func (b *Book) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-b.queue:
			if id == 0 {
				b.readAll(ctx)
				continue
			}
			if e, ok := b.host.EndpointByID(id); ok {
				b.Read(ctx, e)
			}
		}
	}
}

// Ask queues a read of endpoint id (0: all) without waiting; a full queue
// already has reads to do.
func (b *Book) Ask(id int64) {
	if b == nil {
		return
	}
	select {
	case b.queue <- id:
	default:
	}
}

// Configure follows a new snapshot: the schedule runs only while some
// endpoint has a connector.
func (b *Book) Configure(endpoints []store.Endpoint, refreshMinutes int) {
	any := slices.ContainsFunc(endpoints, func(e store.Endpoint) bool { return !ConnectorOf(e).Empty() })
	b.schedule.Set(time.Duration(refreshMinutes)*time.Minute, any)
}

func (b *Book) readAll(ctx context.Context) {
	for _, e := range b.host.Endpoints() {
		if ctx.Err() != nil {
			return
		}
		if !ConnectorOf(e).Empty() {
			b.Read(ctx, e)
		}
	}
}

// ConnectorOf decodes e's stored connector; the admin API checked it.
func ConnectorOf(e store.Endpoint) Connector {
	var c Connector
	if len(e.Balance) > 0 {
		_ = json.Unmarshal(e.Balance, &c) // {} or a checked connector
	}
	return c
}

// Read reads e's balance and applies the reading; an endpoint without a
// connector has nothing to read.
func (b *Book) Read(ctx context.Context, e store.Endpoint) (BalanceReply, bool) {
	c := ConnectorOf(e)
	if c.Empty() {
		return BalanceReply{}, false
	}
	rd := b.reader
	if e.ProxyURL != "" {
		// Through the endpoint's proxy, as its requests go.
		rd.Transport = b.host.TransportFor(e)
	}
	n := b.Start(e.ID)
	r := rd.Read(ctx, c, Target{BaseURL: e.BaseURL, APIKey: e.APIKey})
	return b.Apply(ctx, e, c, r, n), true
}

// Start numbers a read of endpoint id that begins now, for Apply.
func (b *Book) Start(id int64) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.started[id]++
	return b.started[id]
}

// Apply keeps r, the reading of read n (Start), as e's last reading,
// notifies a crossing of the low threshold, and steers e's breaker:
// nothing left opens it, credit closes what a reading opened, an unknown
// reading changes nothing.
func (b *Book) Apply(ctx context.Context, e store.Endpoint, c Connector, r Reading, n uint64) BalanceReply {
	b.mu.Lock()
	if n < b.applied[e.ID] {
		// A later read was applied first: this one is stale.
		s := b.last[e.ID]
		b.mu.Unlock()
		return replyOf(e, c, s, true)
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
	br := b.host.Breaker(e.ID)
	switch {
	case r.Exhausted(time.Now()):
		br.BalanceOpen(r.ResetAt)
	case r.HasCredit():
		br.BalanceClose()
	}
	b.mu.Unlock()

	doc, err := json.Marshal(s)
	if err == nil {
		err = b.db.SaveBalanceReading(ctx, e.ID, r.At, doc)
	}
	if err != nil {
		b.log.Warn().Err(err).Int64("endpoint_id", e.ID).Msg("balance reading not saved")
	}
	log := b.log.Info()
	if !r.Known() {
		log = b.log.Warn().Str("error", r.Error).Int("status", r.Status)
	}
	log.Int64("endpoint_id", e.ID).Str("endpoint", e.Name).Bool("exhausted", r.Exhausted(time.Now())).Msg("balance read")

	if s.Low && !prev.Low {
		b.host.LowBalance(e, r)
	}
	reply := replyOf(e, c, s, true)
	b.host.Read(reply)
	return reply
}

func replyOf(e store.Endpoint, c Connector, s storedBalance, read bool) BalanceReply {
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

// Reply is e's balance as last read.
func (b *Book) Reply(e store.Endpoint) BalanceReply {
	b.mu.Lock()
	s, ok := b.last[e.ID]
	b.mu.Unlock()
	return replyOf(e, ConnectorOf(e), s, ok)
}

// All is every endpoint with a connector or a reading, and the totals.
func (b *Book) All() BalancesReply {
	out := BalancesReply{Balances: []BalanceReply{}, Totals: []BalanceTotal{}}
	totals := map[Unit]*BalanceTotal{}
	for _, e := range b.host.Endpoints() {
		rep := b.Reply(e)
		if rep.Connector == "" {
			continue
		}
		out.Balances = append(out.Balances, rep)
		if r := rep.Reading; r != nil && r.Known() && !r.Unlimited && (r.Unit == USD || r.Unit == CNY) {
			t := totals[r.Unit]
			if t == nil {
				t = &BalanceTotal{Unit: r.Unit}
				totals[r.Unit] = t
			}
			t.Remaining += *r.Remaining
			t.Endpoints++
		}
	}
	for _, u := range []Unit{USD, CNY} {
		if t := totals[u]; t != nil {
			out.Totals = append(out.Totals, *t)
		}
	}
	return out
}

// Lowest is the known reading with the least left among endpoints whose
// unit is a currency, for the tray; false when there is none.
func (b *Book) Lowest() (BalanceReply, bool) {
	var best BalanceReply
	found := false
	for _, rep := range b.All().Balances {
		r := rep.Reading
		if r == nil || !r.Known() || r.Unlimited || (r.Unit != USD && r.Unit != CNY) {
			continue
		}
		if !found || *r.Remaining < *best.Reading.Remaining {
			best, found = rep, true
		}
	}
	return best, found
}

// Words is a known reading's remaining amount with its unit.
func Words(r Reading) string {
	if r.Remaining == nil {
		return "?"
	}
	switch r.Unit {
	case USD:
		return fmt.Sprintf("$%.2f", *r.Remaining)
	case CNY:
		return fmt.Sprintf("¥%.2f", *r.Remaining)
	case Percent:
		return fmt.Sprintf("%.0f %%", *r.Remaining)
	}
	return fmt.Sprintf("%.0f %s", *r.Remaining, r.Unit)
}
