package app

import (
	"github.com/ccmesh/ccmesh/breaker"
)

// Breaker transitions are saved off the request path by app/persist
// (docs/BEHAVIOUR.md#breaker-persistence): onTransition queues them, its
// loop writes the state rows and audit entries, admin actions flush.

// breakerSource is the app as persist.Breakers reads it at each flush
// (persist.Source): the endpoint list and the breakers as they are then.
type breakerSource struct{ a *App }

func (s breakerSource) Endpoint(id int64) (string, bool) {
	e, ok := s.a.endpointByID(id)
	return e.Name, ok
}

func (s breakerSource) Snapshot(id int64) breaker.Snapshot { return s.a.Breakers().Get(id).Snapshot() }
