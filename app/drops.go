package app

import (
	"context"
	"net/http"

	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// An endpoint's drops are the parts of a request it refuses and gets
// without (docs/BEHAVIOUR.md#refused-fields): the proxy learns them,
// app/persist saves them off the request path (persist.Drops), the app
// keeps them with the endpoint, where the user sees, edits and removes
// them, and export, import and sync carry them.

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

// dropsHost is the app as persist.Drops, which saves what the proxy
// learns, needs it (persist.Host).
type dropsHost struct{ a *App }

func (h dropsHost) Mutate(ctx context.Context, write func(ctx context.Context) error) error {
	return h.a.mutate(ctx, write)
}
