package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/breaker"
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
				p.log.Error().Err(err).Str("code", "APP-001").Msg("persisting breaker state failed; will retry")
			}
			cancel()
		}
	}
}

// flush writes every queued transition to the audit trail and each touched
// breaker's current state row. What fails to be written is queued again
// for the next flush.
func (p *breakerPersister) flush(ctx context.Context) error {
	p.flushMu.Lock()
	defer p.flushMu.Unlock()
	p.mu.Lock()
	batch := p.pending
	p.pending = nil
	p.mu.Unlock()
	var errs []error
	var retry []breaker.Transition
	saved := map[int64]error{}
	for _, t := range batch {
		if _, ok := p.src.endpointByID(t.ID); !ok {
			continue // deleted meanwhile
		}
		if _, done := saved[t.ID]; !done {
			// The breaker's current snapshot, not the transition's: callbacks
			// from concurrent requests may have queued out of order.
			saved[t.ID] = p.db.SaveBreakerState(ctx, stateRow(t.ID, p.src.Breakers().Get(t.ID).Snapshot()))
			if err := saved[t.ID]; err != nil {
				errs = append(errs, fmt.Errorf("save breaker state of endpoint %d: %w", t.ID, err))
			}
		}
		ev := store.BreakerEvent{
			At: t.At, EndpointID: t.ID, Endpoint: p.src.endpointName(t.ID),
			Cause: t.Cause.String(), From: t.From.String(), To: t.To.String(), Reason: t.Reason.String(),
		}
		_, err := p.db.AddBreakerEvent(ctx, ev)
		if err != nil {
			errs = append(errs, fmt.Errorf("audit breaker event of endpoint %d: %w", t.ID, err))
		}
		if err != nil || saved[t.ID] != nil {
			retry = append(retry, t)
		}
	}
	if len(retry) > 0 {
		p.mu.Lock()
		p.pending = append(retry, p.pending...)
		p.mu.Unlock()
	}
	return errors.Join(errs...)
}
