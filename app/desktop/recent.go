package desktop

import (
	"context"
	"slices"
	"sync"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/store"
)

// Recent keeps the latest breaker changes for the tray, newest first, as
// the audit trail records them (docs/BEHAVIOUR.md#tray): loaded from it at
// start, then added as transitions are reported, so the tray never reads
// the database. Restores at start-up are left out: they bring back a
// state, they do not change it. The zero value holds none.
type Recent struct {
	mu   sync.Mutex
	list []store.BreakerEvent
}

// AuditTrail is the store as Recent reads it at start. *store.DB is one.
type AuditTrail interface {
	// ListBreakerEvents lists the audit trail newest first: every
	// endpoint's (endpointID 0), at most limit rows.
	ListBreakerEvents(ctx context.Context, endpointID int64, limit int) ([]store.BreakerEvent, error)
}

// recentLoad is how many audit rows Load reads to find TrayBreakerLines
// that are not restores.
const recentLoad = 50

// Load replaces what r holds with the latest changes of db's audit trail.
func (r *Recent) Load(ctx context.Context, db AuditTrail) error {
	evs, err := db.ListBreakerEvents(ctx, 0, recentLoad)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = nil
	for _, ev := range evs { // newest first, in the order they were written
		if ev.Cause != breaker.CauseRestore.String() && len(r.list) < TrayBreakerLines {
			r.list = append(r.list, ev)
		}
	}
	return nil
}

// Note records a reported transition of the endpoint named endpoint, as
// the audit trail will. It runs on the request path: a lock and a copy of
// a few words.
func (r *Recent) Note(t breaker.Transition, endpoint string) {
	if t.Cause == breaker.CauseRestore {
		return
	}
	r.Add(store.BreakerEvent{At: t.At, EndpointID: t.ID, Endpoint: endpoint,
		Cause: t.Cause.String(), From: t.From.String(), To: t.To.String(), Reason: t.Reason.String()})
}

// Add puts ev in its place by time (one reported at the same moment as
// another goes first): transitions of concurrent requests may be
// reported out of order.
func (r *Recent) Add(ev store.BreakerEvent) {
	if ev.Cause == breaker.CauseRestore.String() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	i := len(r.list)
	for i > 0 && !ev.At.Before(r.list[i-1].At) {
		i--
	}
	if i >= TrayBreakerLines {
		return
	}
	r.list = slices.Insert(r.list, i, ev)
	if len(r.list) > TrayBreakerLines {
		r.list = r.list[:TrayBreakerLines]
	}
}

// Get is the changes held, newest first.
func (r *Recent) Get() []store.BreakerEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}
