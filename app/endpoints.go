package app

import (
	"context"
	"net/http"
	"time"

	"github.com/ccmesh/ccmesh/store"
)

// EndpointReply is an endpoint as the admin API shows it: every field but
// the key, which appears only masked.
type EndpointReply struct {
	store.Endpoint
	APIKeyMasked string `json:"api_key_masked"`
	HasKey       bool   `json:"has_key"`
}

// MaskKey shows enough of a key to recognise it and never enough to use it.
func MaskKey(k string) string {
	switch {
	case k == "":
		return ""
	case len(k) < 12:
		return "…" + k[len(k)-min(2, len(k)):]
	}
	return k[:3] + "…" + k[len(k)-4:]
}

func reply(e store.Endpoint) EndpointReply {
	if e.Models == nil {
		e.Models = []string{}
	}
	if e.ModelMap == nil {
		e.ModelMap = map[string]string{}
	}
	return EndpointReply{Endpoint: e, APIKeyMasked: MaskKey(e.APIKey), HasKey: e.APIKey != ""}
}

func (a *App) endpointReplies() []EndpointReply {
	eps := a.state.Load().Endpoints
	out := make([]EndpointReply, len(eps))
	for i, e := range eps {
		out[i] = reply(e)
	}
	return out
}

func (a *App) listEndpoints(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, a.endpointReplies())
	return nil
}

func (a *App) createEndpoint(w http.ResponseWriter, r *http.Request) error {
	var p store.EndpointPatch
	if err := decodeJSON(r, &p); err != nil {
		return err
	}
	var created store.Endpoint
	err := a.mutate(r.Context(), func(ctx context.Context) error {
		var err error
		created, err = a.db.CreateEndpoint(ctx, p)
		if err == nil {
			// A reused id must not inherit an old breaker.
			a.breakers.Remove(created.ID)
		}
		return err
	})
	if err != nil {
		return err
	}
	a.log.Info().Int64("endpoint_id", created.ID).Str("endpoint", created.Name).Msg("endpoint added")
	writeJSON(w, http.StatusCreated, reply(created))
	return nil
}

// pathEndpoint is the endpoint named by the {id} in the path.
func (a *App) pathEndpoint(r *http.Request) (store.Endpoint, error) {
	id, err := pathID(r)
	if err != nil {
		return store.Endpoint{}, err
	}
	e, ok := a.endpointByID(id)
	if !ok {
		return store.Endpoint{}, store.ErrNotFound
	}
	return e, nil
}

func (a *App) getEndpoint(w http.ResponseWriter, r *http.Request) error {
	e, err := a.pathEndpoint(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, reply(e))
	return nil
}

func (a *App) updateEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var p store.EndpointPatch
	if err := decodeJSON(r, &p); err != nil {
		return err
	}
	var updated store.Endpoint
	err = a.mutate(r.Context(), func(ctx context.Context) error {
		before, err := a.db.GetEndpoint(ctx, id)
		if err != nil {
			return err
		}
		if updated, err = a.db.UpdateEndpoint(ctx, id, p); err != nil {
			return err
		}
		// docs/BEHAVIOUR.md#endpoints: a new key or URL is a new upstream; its old failures say
		// nothing about it.
		if before.APIKey != updated.APIKey || before.BaseURL != updated.BaseURL {
			a.breakers.Get(id).ForceClose()
		}
		return nil
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, reply(updated))
	return nil
}

func (a *App) deleteEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	err = a.mutate(r.Context(), func(ctx context.Context) error {
		if err := a.db.DeleteEndpoint(ctx, id); err != nil {
			return err
		}
		a.breakers.Remove(id)
		return nil
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *App) putIDs(set func(*store.DB, context.Context, []int64) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			IDs *[]int64 `json:"ids"`
		}
		if err := decodeJSON(r, &body); err != nil {
			return err
		}
		if body.IDs == nil {
			return errBadRequest("required", "ids", `body must be {"ids":[…]}, a list of endpoint ids`)
		}
		if err := a.mutate(r.Context(), func(ctx context.Context) error { return set(a.db, ctx, *body.IDs) }); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, a.endpointReplies())
		return nil
	}
}

// forceBreaker force-opens or force-closes an endpoint's breaker
// (docs/BEHAVIOUR.md#manual-control); the state and the audit entry are saved before the reply.
func (a *App) forceBreaker(open bool) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		e, err := a.pathEndpoint(r)
		if err != nil {
			return err
		}
		id := e.ID
		b := a.breakers.Get(id)
		action := "force-close"
		if open {
			action = "force-open"
			b.ForceOpen()
		} else {
			b.ForceClose()
		}
		if err := a.persist.flush(r.Context()); err != nil {
			return err
		}
		a.log.Info().Int64("endpoint_id", id).Str("endpoint", e.Name).Str("action", action).Msg("breaker forced")
		h := a.healthOf(id, e.Name, e.Enabled, time.Now())
		a.events.Publish("health", a.Health())
		writeJSON(w, http.StatusOK, h)
		return nil
	}
}
