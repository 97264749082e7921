package app

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/internal/logcode"
	"github.com/ccmesh/ccmesh/store"
)

// breakerPersister saves breaker transitions: the state row and the audit
// entry. Transitions are reported on the request path, so queue only takes
// note; the writes happen on run's goroutine, or in a synchronous flush for
// admin actions (docs/BEHAVIOUR.md#breaker-persistence).
type breakerPersister struct {
	db  *store.DB
	log zerolog.Logger
	src breakerSource

	mu      sync.Mutex // guards pending
	pending []breaker.Transition
	sig     chan struct{}
	flushMu sync.Mutex // one flush at a time, so a synchronous flush waits for a running one
}

// breakerSource is what a flush reads at the time it runs, not when the
// persister is made: the persister exists before the breakers (restoring
// them reports transitions), and the endpoint list changes. *App is one.
type breakerSource interface {
	Breakers() *breaker.Set
	endpointByID(id int64) (store.Endpoint, bool)
	endpointName(id int64) string
}

func newBreakerPersister(db *store.DB, log zerolog.Logger, src breakerSource) *breakerPersister {
	return &breakerPersister{db: db, log: log, src: src, sig: make(chan struct{}, 1)}
}

// maxPendingTransitions bounds the queue if the database stalls; the state
// row is still written from the breaker's current snapshot on the next flush.
const maxPendingTransitions = 10_000

// queue runs on whatever goroutine reported the transition, often a
// request's, so it never waits on the database.
func (p *breakerPersister) queue(t breaker.Transition) {
	p.mu.Lock()
	if len(p.pending) < maxPendingTransitions {
		p.pending = append(p.pending, t)
	}
	p.mu.Unlock()
	select {
	case p.sig <- struct{}{}:
	default:
	}
}

func (p *breakerPersister) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.sig:
			// Not cancelled by Close: a flush cut in half would lose the
			// transitions it had taken from the queue.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			if err := p.flush(fctx); err != nil {
				p.log.Error().Err(err).Str(logcode.Field, logcode.BreakerNotPersisted).Msg("persisting breaker state failed; will retry")
			}
			cancel()
		}
	}
}

// flush writes every queued transition to the audit trail and each touched
// breaker's current state row, all in one store transaction: if it fails,
// nothing of it was written and the whole batch is queued again for the
// next flush, so no audit entry is ever written twice.
func (p *breakerPersister) flush(ctx context.Context) error {
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
		if _, ok := p.src.endpointByID(t.ID); !ok {
			continue // deleted meanwhile
		}
		kept = append(kept, t)
		if !saved[t.ID] {
			// The breaker's current snapshot, not the transition's: callbacks
			// from concurrent requests may have queued out of order.
			saved[t.ID] = true
			states = append(states, stateRow(t.ID, p.src.Breakers().Get(t.ID).Snapshot()))
		}
		events = append(events, store.BreakerEvent{
			At: t.At, EndpointID: t.ID, Endpoint: p.src.endpointName(t.ID),
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
