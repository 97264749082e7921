package app

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/internal/logcode"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// An endpoint's drops are the parts of a request it refuses and gets
// without (docs/BEHAVIOUR.md#refused-fields): the proxy learns them, the
// app keeps them with the endpoint, where the user sees, edits and
// removes them, and export, import and sync carry them.

// manualDrops are the drops of ds the user entered.
func manualDrops(ds []store.EndpointDrop) []store.EndpointDrop {
	out := []store.EndpointDrop{}
	for _, d := range ds {
		if d.Source == config.DropManual {
			out = append(out, d)
		}
	}
	return out
}

// proxyDrops are an endpoint's drops as the proxy takes them.
func proxyDrops(ds []store.EndpointDrop) proxy.Drops {
	if len(ds) == 0 {
		return nil
	}
	out := make(proxy.Drops, len(ds))
	for i, d := range ds {
		out[i] = proxy.Drop(d.Drop)
	}
	return out
}

// DroppablePart is one part of a request ccmesh may leave out, and why
// that is safe.
type DroppablePart struct {
	Drop string `json:"drop"`
	Why  string `json:"why"`
}

// DroppableReply is GET /api/droppable.
type DroppableReply struct {
	Parts []DroppablePart `json:"parts"`
	// BetaPrefix starts a drop of one anthropic-beta value.
	BetaPrefix string `json:"beta_prefix"`
}

func (a *App) handleDroppable(w http.ResponseWriter, r *http.Request) error {
	var out DroppableReply
	for _, p := range proxy.DroppableParts() {
		out.Parts = append(out.Parts, DroppablePart{Drop: string(p.Drop), Why: p.Why})
	}
	out.BetaPrefix = proxy.DropPrefixBeta
	writeJSON(w, http.StatusOK, out)
	return nil
}

// learnPersister saves what the proxy learns off the request path: the
// proxy tells it on a request's goroutine, its loop writes and reloads.
type learnPersister struct {
	a   *App
	log zerolog.Logger

	mu      sync.Mutex
	pending map[int64][]store.EndpointDrop
	sig     chan struct{}
}

func newLearnPersister(a *App) *learnPersister {
	return &learnPersister{a: a, log: a.log, pending: map[int64][]store.EndpointDrop{}, sig: make(chan struct{}, 1)}
}

// maxPendingDrops bounds what waits for the database per endpoint.
const maxPendingDrops = config.MaxDrops

// queue takes note of one learned part; it never blocks.
func (p *learnPersister) queue(id int64, l proxy.Learned) {
	msg := l.Error
	if len(msg) > config.MaxDropError {
		msg = msg[:config.MaxDropError]
	}
	p.mu.Lock()
	if ds := p.pending[id]; len(ds) < maxPendingDrops && !slices.ContainsFunc(ds, func(d store.EndpointDrop) bool { return d.Drop == string(l.Drop) }) {
		p.pending[id] = append(ds, store.EndpointDrop{Drop: string(l.Drop), At: l.At.UTC().Truncate(time.Millisecond), Error: msg, Source: config.DropLearned})
	}
	p.mu.Unlock()
	select {
	case p.sig <- struct{}{}:
	default:
	}
}

func (p *learnPersister) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			p.flush(context.Background())
			return
		case <-p.sig:
			p.flush(ctx)
		}
	}
}

// flush writes what is pending and publishes the endpoints once.
func (p *learnPersister) flush(ctx context.Context) {
	p.mu.Lock()
	pending := p.pending
	p.pending = map[int64][]store.EndpointDrop{}
	p.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	err := p.a.mutate(ctx, func(ctx context.Context) error {
		for id, ds := range pending {
			if _, err := p.a.db.AddEndpointDrops(ctx, id, ds); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		p.log.Error().Err(err).Str(logcode.Field, logcode.DropsNotSaved).Msg("saving what an endpoint refuses failed; it is kept in memory until restart")
	}
}
