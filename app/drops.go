package app

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/ccmesh/ccmesh/app/persist"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// An endpoint's drops are the parts of a request it refuses and gets
// without (docs/BEHAVIOUR.md#refused-fields): the proxy learns them,
// app/persist saves them off the request path (persist.Drops), the app
// keeps them with the endpoint, where the user sees, edits and removes
// them, and export, import and sync carry them.

// Bounds of an endpoint's drops.
const (
	maxDrops     = persist.MaxDrops
	maxDropError = persist.MaxDropError
)

// Drop sources.
const (
	dropLearned = persist.DropLearned
	dropManual  = "manual"
)

// validDrops checks and completes the drops an input sets: each a part
// ccmesh may leave out, once; a source of learned or manual (manual when
// left out); a time (now when left out); an error of at most 512 bytes.
func validDrops(ds []store.EndpointDrop, now time.Time) *apiError {
	if len(ds) > maxDrops {
		return invalid("drops", "an endpoint keeps at most %d drops, got %d", maxDrops, len(ds))
	}
	seen := make(map[string]int, len(ds))
	for i := range ds {
		d := &ds[i]
		field := fmt.Sprintf("drops[%d]", i)
		if _, ok := proxy.Drop(d.Drop).Why(); !ok {
			return invalid(field+".drop", "%q is not a part ccmesh may leave out: name one of GET /api/droppable's parts, or beta:<value> for an anthropic-beta value", d.Drop)
		}
		if j, dup := seen[d.Drop]; dup {
			return invalid(field+".drop", "%q is given twice (drops %d and %d)", d.Drop, j, i)
		}
		seen[d.Drop] = i
		switch d.Source {
		case "":
			d.Source = dropManual
		case dropLearned, dropManual:
		default:
			return invalid(field+".source", "source %q is not learned or manual", d.Source)
		}
		if d.At.IsZero() {
			d.At = now.UTC().Truncate(time.Millisecond)
		}
		if len(d.Error) > maxDropError {
			return invalid(field+".error", "the error is %d bytes, more than %d", len(d.Error), maxDropError)
		}
	}
	return nil
}

// manualDrops are the drops of ds the user entered.
func manualDrops(ds []store.EndpointDrop) []store.EndpointDrop {
	out := []store.EndpointDrop{}
	for _, d := range ds {
		if d.Source == dropManual {
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
