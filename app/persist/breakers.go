package persist

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/internal/logcode"
	"github.com/ccmesh/ccmesh/store"
)

// BreakerStore is the store as Breakers writes to it: the state rows and
// the audit entries of a batch in one transaction. *store.DB is one.
type BreakerStore interface {
	SaveBreakerTransitions(ctx context.Context, states []store.BreakerState, events []store.BreakerEvent) error
}

// Source is what a flush reads at the time it runs, not when Breakers is
// made: Breakers exists before the breakers (restoring them reports
// transitions), and the endpoint list changes.
type Source interface {
	// Endpoint is the name of endpoint id; false once it is deleted.
	Endpoint(id int64) (name string, ok bool)
	// Snapshot is endpoint id's breaker as it is now.
	Snapshot(id int64) breaker.Snapshot
}

// Breakers saves breaker transitions: the state row and the audit entry.
// Transitions are reported on the request path, so Queue only takes note;
// the writes happen on Run's goroutine, or in a synchronous Flush for
// admin actions.
type Breakers struct {
	db  BreakerStore
	log zerolog.Logger
	src Source

	mu      sync.Mutex // guards pending
	pending []breaker.Transition
	sig     chan struct{}
	flushMu sync.Mutex // one flush at a time, so a synchronous flush waits for a running one
}

// NewBreakers writes to db what src says of the queued transitions.
func NewBreakers(db BreakerStore, log zerolog.Logger, src Source) *Breakers {
	return &Breakers{db: db, log: log, src: src, sig: make(chan struct{}, 1)}
}

// MaxPendingTransitions bounds the queue if the database stalls; the state
// row is still written from the breaker's current snapshot on the next flush.
const MaxPendingTransitions = 10_000

// Queue runs on whatever goroutine reported the transition, often a
// request's, so it never waits on the database.
func (p *Breakers) Queue(t breaker.Transition) {
	p.mu.Lock()
	if len(p.pending) < MaxPendingTransitions {
		p.pending = append(p.pending, t)
	}
	p.mu.Unlock()
	select {
	case p.sig <- struct{}{}:
	default:
	}
}

// Run flushes what is queued whenever something is, until ctx ends.
func (p *Breakers) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.sig:
			// Not cancelled by Close: a flush cut in half would lose the
			// transitions it had taken from the queue.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			if err := p.Flush(fctx); err != nil {
				p.log.Error().Err(err).Str(logcode.Field, logcode.BreakerNotPersisted).Msg("persisting breaker state failed; will retry")
			}
			cancel()
		}
	}
}

// Flush writes every queued transition to the audit trail and each touched
// breaker's current state row, all in one store transaction: if it fails,
// nothing of it was written and the whole batch is queued again for the
// next flush, so no audit entry is ever written twice.
func (p *Breakers) Flush(ctx context.Context) error {
	p.flushMu.Lock()
	defer p.flushMu.Unlock()
	p.mu.Lock()
	batch := p.pending
	p.pending = nil
	p.mu.Unlock()
	var (
		kept   []breaker.Transition
		states []store.BreakerState
		events []store.BreakerEvent
		saved  = map[int64]bool{}
	)
	for _, t := range batch {
		name, ok := p.src.Endpoint(t.ID)
		if !ok {
			continue // deleted meanwhile
		}
		kept = append(kept, t)
		if !saved[t.ID] {
			// The breaker's current snapshot, not the transition's: callbacks
			// from concurrent requests may have queued out of order.
			saved[t.ID] = true
			states = append(states, StateRow(t.ID, p.src.Snapshot(t.ID)))
		}
		events = append(events, store.BreakerEvent{
			At: t.At, EndpointID: t.ID, Endpoint: name,
			Cause: t.Cause.String(), From: t.From.String(), To: t.To.String(), Reason: t.Reason.String(),
		})
	}
	if len(kept) == 0 {
		return nil
	}
	if err := p.db.SaveBreakerTransitions(ctx, states, events); err != nil {
		p.mu.Lock()
		p.pending = append(kept, p.pending...)
		p.mu.Unlock()
		return err
	}
	return nil
}
