package persist

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/internal/logcode"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// DropStore is the store as Drops writes to it. *store.DB is one.
type DropStore interface {
	// AddEndpointDrops adds ds to endpoint id's drops; store.ErrNotFound
	// when the endpoint is gone.
	AddEndpointDrops(ctx context.Context, id int64, ds []store.EndpointDrop) (bool, error)
}

// Host is the app as Drops needs it.
type Host interface {
	// Mutate runs write as the admin API's writes run, and publishes the
	// endpoints after it.
	Mutate(ctx context.Context, write func(ctx context.Context) error) error
}

// Drops saves what the proxy learns off the request path: the proxy
// tells it on a request's goroutine (Queue), its loop writes and reloads.
type Drops struct {
	host Host
	db   DropStore
	log  zerolog.Logger

	mu      sync.Mutex
	pending map[int64][]store.EndpointDrop
	sig     chan struct{}
}

// NewDrops writes to db inside host's writes.
func NewDrops(host Host, db DropStore, log zerolog.Logger) *Drops {
	return &Drops{host: host, db: db, log: log, pending: map[int64][]store.EndpointDrop{}, sig: make(chan struct{}, 1)}
}

// MaxPendingDrops bounds what waits for the database per endpoint.
const MaxPendingDrops = config.MaxDrops

// Queue takes note of one learned part; it never blocks.
func (p *Drops) Queue(id int64, l proxy.Learned) {
	msg := l.Error
	if len(msg) > config.MaxDropError {
		msg = msg[:config.MaxDropError]
	}
	p.mu.Lock()
	if ds := p.pending[id]; len(ds) < MaxPendingDrops && !slices.ContainsFunc(ds, func(d store.EndpointDrop) bool { return d.Drop == string(l.Drop) }) {
		p.pending[id] = append(ds, store.EndpointDrop{Drop: string(l.Drop), At: l.At.UTC().Truncate(time.Millisecond), Error: msg, Source: config.DropLearned})
	}
	p.mu.Unlock()
	select {
	case p.sig <- struct{}{}:
	default:
	}
}

// Run flushes whenever something is queued; when ctx ends it flushes
// once more and returns.
func (p *Drops) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			p.Flush(context.Background())
			return
		case <-p.sig:
			p.Flush(ctx)
		}
	}
}

// Flush writes what is pending and publishes the endpoints once. A
// failure is logged: what was learned is kept in memory until restart.
func (p *Drops) Flush(ctx context.Context) {
	p.mu.Lock()
	pending := p.pending
	p.pending = map[int64][]store.EndpointDrop{}
	p.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	err := p.host.Mutate(ctx, func(ctx context.Context) error {
		for id, ds := range pending {
			if _, err := p.db.AddEndpointDrops(ctx, id, ds); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		p.log.Error().Err(err).Str(logcode.Field, logcode.DropsNotSaved).Msg("saving what an endpoint refuses failed; it is kept in memory until restart")
	}
}
