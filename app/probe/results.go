package probe

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/internal/logcode"
	"github.com/ccmesh/ccmesh/store"
)

// Saver is the store as Results needs it.
type Saver interface {
	LoadEndpointTests(ctx context.Context) ([]store.EndpointTest, error)
	SaveEndpointTest(ctx context.Context, t store.EndpointTest) error
}

// Results keeps the last Test of each endpoint, in memory and in the
// store, and of each pool key, in memory only (docs/BEHAVIOUR.md#health,
// docs/BEHAVIOUR.md#key-pools).
type Results struct {
	db  Saver
	log zerolog.Logger

	mu        sync.Mutex
	endpoints map[int64]Result
	keys      map[int64]Result
}

// NewResults keeps results in db; Load reads those stored before.
func NewResults(db Saver, log zerolog.Logger) *Results {
	return &Results{db: db, log: log, endpoints: map[int64]Result{}, keys: map[int64]Result{}}
}

// Load reads the stored last test of every endpoint.
func (r *Results) Load(ctx context.Context) error {
	rows, err := r.db.LoadEndpointTests(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range rows {
		r.endpoints[t.EndpointID] = Result{OK: t.OK, Status: t.Status, LatencyMs: t.LatencyMs, Message: t.Message, At: t.At}
	}
	return nil
}

// Keep stores res as endpoint id's last test. The caller holds the lock
// its deletes of endpoints take, so that a delete comes either before
// (the store refuses the row: an error wrapping store.ErrNotFound) or
// after (Forget drops the result).
func (r *Results) Keep(ctx context.Context, id int64, res Result) error {
	err := r.db.SaveEndpointTest(ctx, store.EndpointTest{EndpointID: id, At: res.At, OK: res.OK,
		Status: res.Status, LatencyMs: res.LatencyMs, Message: res.Message})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return err // deleted while its test ran
	case err != nil:
		// Health still shows the result until the next start.
		r.log.Warn().Err(err).Str(logcode.Field, logcode.TestNotStored).Int64("endpoint", id).Msg("could not store the test result")
	}
	r.mu.Lock()
	r.endpoints[id] = res
	r.mu.Unlock()
	return nil
}

// Forget drops the results of endpoints that are gone; the database
// dropped their rows with them.
func (r *Results) Forget(eps []store.Endpoint) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range r.endpoints {
		if !slices.ContainsFunc(eps, func(e store.Endpoint) bool { return e.ID == id }) {
			delete(r.endpoints, id)
		}
	}
}

// Last is endpoint id's last test; nil when it has none.
func (r *Results) Last(id int64) *Result { return r.get(r.endpoints, id) }

// KeepKey keeps res as pool key id's last test.
func (r *Results) KeepKey(id int64, res Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys[id] = res
}

// LastKey is pool key id's last test; nil when it has none.
func (r *Results) LastKey(id int64) *Result { return r.get(r.keys, id) }

func (r *Results) get(m map[int64]Result, id int64) *Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := m[id]; ok {
		return &t
	}
	return nil
}
