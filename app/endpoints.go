package app

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/internal/logcode"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// EndpointReply is an endpoint as the admin API shows it: every field but
// the key, which appears only masked.
type EndpointReply struct {
	store.Endpoint
	APIKeyMasked string `json:"api_key_masked"`
	HasKey       bool   `json:"has_key"`
	// ProxyURL is the endpoint's proxy_url with its password shown as
	// proxy.MaskedPassword; sent back as shown, it keeps the password.
	ProxyURL string `json:"proxy_url"`
	// Keys is its key pool, each key masked (docs/BEHAVIOUR.md#key-pools).
	Keys []KeyReply `json:"keys"`
}

// endpointInput is the body of POST and PUT /api/endpoints, and an
// endpoint of an import (config.EndpointInput).
type endpointInput = config.EndpointInput

func reply(e store.Endpoint) EndpointReply {
	if e.Models == nil {
		e.Models = []string{}
	}
	if e.ModelMap == nil {
		e.ModelMap = map[string]string{}
	}
	return EndpointReply{Endpoint: e, APIKeyMasked: proxy.MaskKey(e.APIKey), HasKey: e.APIKey != "", ProxyURL: proxy.MaskProxyURL(e.ProxyURL), Keys: keyReplies(e.Keys)}
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

// endpointCreate decodes and validates the body of POST /api/endpoints,
// giving the patch the store creates the endpoint from (which checks what
// storage relies on: store.CheckEndpoint).
func endpointCreate(body []byte) (store.EndpointPatch, error) {
	var in endpointInput
	if err := decodeBody(body, &in); err != nil {
		return store.EndpointPatch{}, err
	}
	if err := in.Validate(true); err != nil {
		return store.EndpointPatch{}, err
	}
	return in.Patch()
}

func (a *App) createEndpoint(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	p, err := endpointCreate(body)
	if err != nil {
		return err
	}
	var created store.Endpoint
	err = a.mutate(r.Context(), func(ctx context.Context) error {
		var err error
		created, err = a.db.CreateEndpoint(ctx, p)
		if err == nil {
			// Ids are never reused (docs/BEHAVIOUR.md#bad-input-and-faults);
			// should one be, it must not inherit an old breaker.
			a.breakers.Remove(created.ID)
		}
		return err
	})
	if err != nil {
		return err
	}
	a.log.Info().Int64("endpoint_id", created.ID).Str("endpoint", created.Name).Msg("endpoint added")
	if p.Balance != nil {
		a.bal.Ask(created.ID)
	}
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
	var in endpointInput
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	var updated store.Endpoint
	err = a.mutate(r.Context(), func(ctx context.Context) error {
		before, err := a.db.GetEndpoint(ctx, id)
		if err != nil {
			return err
		}
		// After the lookup: an unknown id is 404 whatever the body says.
		if err := in.Validate(false); err != nil {
			return err
		}
		if in.BaseURL == nil {
			if err := in.CheckBalance(before.BaseURL); err != nil {
				return err
			}
		}
		p, err := in.Patch()
		if err != nil {
			return err
		}
		if p.ProxyURL != nil {
			v := keepProxyPassword(*p.ProxyURL, before.ProxyURL)
			p.ProxyURL = &v
		}
		if p.BaseURL != nil && *p.BaseURL != before.BaseURL && p.Drops == nil {
			// Another upstream may take what this one refused: what was
			// learned goes, what the user entered stays (docs/BEHAVIOUR.md#refused-fields).
			manual := manualDrops(before.Drops)
			p.Drops = &manual
		}
		if updated, err = a.db.UpdateEndpoint(ctx, id, p); err != nil {
			return err
		}
		// docs/BEHAVIOUR.md#endpoints: a new key or URL is a new upstream; its old failures say
		// nothing about it.
		if before.APIKey != updated.APIKey || before.BaseURL != updated.BaseURL || before.ProxyURL != updated.ProxyURL {
			a.breakers.Get(id).ForceClose()
		}
		a.resetChangedKeys(before, updated)
		return nil
	})
	if err != nil {
		return err
	}
	if in.Balance != nil {
		a.bal.Ask(id)
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

// codeNotSaved answers a force action that took effect but could not be
// saved (docs/BEHAVIOUR.md#manual-control).
const codeNotSaved = "not_saved"

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
		action, state := "force-close", "closed"
		if open {
			action, state = "force-open", "open"
			b.ForceOpen()
		} else {
			b.ForceClose()
		}
		if err := a.persist.Flush(r.Context()); err != nil {
			// The breaker has changed and routing follows it: the answer
			// says so, and the UI shows it, rather than a bare failure.
			a.log.Error().Err(err).Str(logcode.Field, logcode.ForceNotSaved).Int64("endpoint_id", id).Str("action", action).
				Msg("breaker forced but not saved")
			a.events.Publish("health", a.Health())
			return &apiError{Status: http.StatusInternalServerError, Code: codeNotSaved,
				Message: fmt.Sprintf("endpoint %s's breaker is forced %s now, and routing follows it, but saving that failed (%v); "+
					"ccmesh saves it with the next breaker change or at shutdown, and if it stops before then the breaker "+
					"comes back as last saved", e.Name, state, err)}
		}
		a.log.Info().Int64("endpoint_id", id).Str("endpoint", e.Name).Str("action", action).Msg("breaker forced")
		h := a.endpointHealth(e, time.Now())
		a.events.Publish("health", a.Health())
		writeJSON(w, http.StatusOK, h)
		return nil
	}
}

// keepProxyPassword is the proxy_url to store when an edit sends in: the
// password the API showed masked, sent back as it was shown, stands for
// the stored one (docs/BEHAVIOUR.md#upstream-proxy).
func keepProxyPassword(in, stored string) string {
	u, err := url.Parse(in)
	if err != nil || u.User == nil {
		return in
	}
	if p, ok := u.User.Password(); !ok || p != proxy.MaskedPassword {
		return in
	}
	old := proxy.ProxyPassword(stored)
	if old == "" {
		u.User = url.User(u.User.Username())
	} else {
		u.User = url.UserPassword(u.User.Username(), old)
	}
	return u.String()
}
