package persist

import (
	"fmt"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/store"
)

// A breaker's state row holds its state and reason as their words; the
// store keeps them as plain strings.

var stateNames = map[string]breaker.State{
	breaker.Closed.String():   breaker.Closed,
	breaker.Open.String():     breaker.Open,
	breaker.HalfOpen.String(): breaker.HalfOpen,
}

var reasonNames = map[string]breaker.Reason{
	breaker.ReasonNone.String():     breaker.ReasonNone,
	breaker.Broken.String():         breaker.Broken,
	breaker.RateLimited.String():    breaker.RateLimited,
	breaker.QuotaExhausted.String(): breaker.QuotaExhausted,
	breaker.Manual.String():         breaker.Manual,
}

// StateRow is the state row of endpoint id's breaker at snapshot s.
func StateRow(id int64, s breaker.Snapshot) store.BreakerState {
	return store.BreakerState{
		EndpointID:          id,
		State:               s.State.String(),
		Reason:              s.Reason.String(),
		OpenedAt:            s.OpenedAt,
		Until:               s.Until,
		ConsecutiveFailures: s.ConsecutiveFailures,
		HalfOpenSuccesses:   s.HalfOpenSuccesses,
		Reopens:             s.Reopens,
		Balance:             s.Balance,
		UpdatedAt:           time.Now(),
	}
}

// SnapshotFrom is the breaker snapshot a state row restores; a state or
// reason it does not know is an error.
func SnapshotFrom(r store.BreakerState) (breaker.Snapshot, error) {
	st, ok := stateNames[r.State]
	if !ok {
		return breaker.Snapshot{}, fmt.Errorf("endpoint %d: unknown breaker state %q", r.EndpointID, r.State)
	}
	reason, ok := reasonNames[r.Reason]
	if !ok {
		return breaker.Snapshot{}, fmt.Errorf("endpoint %d: unknown breaker reason %q", r.EndpointID, r.Reason)
	}
	return breaker.Snapshot{
		State:               st,
		Reason:              reason,
		OpenedAt:            r.OpenedAt,
		Until:               r.Until,
		ConsecutiveFailures: r.ConsecutiveFailures,
		HalfOpenSuccesses:   r.HalfOpenSuccesses,
		Reopens:             r.Reopens,
		Balance:             r.Balance,
	}, nil
}
