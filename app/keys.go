package app

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ccmesh/ccmesh/app/health"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// Key pools (docs/BEHAVIOUR.md#key-pools): the API shows each key masked,
// health shows each key's breaker, and a key's breaker is forced open or
// closed by hand. Key breakers live in a.keyBreakers, keyed by key id, with
// their endpoint's parameters; their state is kept in memory only.

// KeyReply is one key of an endpoint's pool as the admin API shows it.
type KeyReply struct {
	ID        int64  `json:"id"`
	Label     string `json:"label"`
	KeyMasked string `json:"key_masked"`
	Weight    int    `json:"weight"`
	Enabled   bool   `json:"enabled"`
}

// KeyHealth is one key's part of an endpoint's health.
type KeyHealth struct {
	ID            int64      `json:"id"`
	Label         string     `json:"label"`
	KeyMasked     string     `json:"key_masked"`
	Enabled       bool       `json:"enabled"`
	Status        string     `json:"status"` // healthy | unhealthy | recovering | disabled
	State         string     `json:"state"`
	Reason        string     `json:"reason"`
	RetryInMs     int64      `json:"retry_in_ms"`
	LastError     string     `json:"last_error"`
	LastFailureAt *time.Time `json:"last_failure_at"`
	// LastTest is the key's last Test (POST …/test?key=<id>).
	LastTest *TestResult `json:"last_test"`
}

func keyReplies(keys []store.EndpointKey) []KeyReply {
	out := make([]KeyReply, len(keys))
	for i, k := range keys {
		out[i] = KeyReply{ID: k.ID, Label: k.Label, KeyMasked: proxy.MaskKey(k.Key), Weight: k.Weight, Enabled: k.Enabled}
	}
	return out
}

func proxyKeys(keys []store.EndpointKey) []proxy.Key {
	if len(keys) == 0 {
		return nil
	}
	out := make([]proxy.Key, len(keys))
	for i, k := range keys {
		out[i] = proxy.Key{ID: k.ID, Label: k.Label, Secret: k.Key, Weight: k.Weight, Enabled: k.Enabled}
	}
	return out
}

// keyHealth is the health of each key of e's pool now.
func (a *App) keyHealth(e store.Endpoint, now time.Time) []KeyHealth {
	out := make([]KeyHealth, 0, len(e.Keys))
	for _, k := range e.Keys {
		v := a.keyBreakers.Get(k.ID).View(now)
		h := KeyHealth{ID: k.ID, Label: k.Label, KeyMasked: proxy.MaskKey(k.Key), Enabled: k.Enabled,
			Status: health.Status(k.Enabled, v), State: v.State.String(), Reason: v.Reason.String(),
			RetryInMs: health.RetryIn(v, now), LastTest: (*TestResult)(a.tests.LastKey(k.ID))}
		h.LastError, h.LastFailureAt = a.keyFails.Last(k.ID)
		out = append(out, h)
	}
	return out
}

// onKeyTransition is told of each key breaker's transitions: health
// shows them, and a key whose quota is spent asks for its endpoint's
// balance, as the endpoint's own breaker does (balance.go).
func (a *App) onKeyTransition(t breaker.Transition) {
	a.health.Changed()
	if t.Cause != breaker.CauseRequest || t.To != breaker.Open || t.Reason != breaker.QuotaExhausted {
		return
	}
	st := a.state.Load()
	if st == nil {
		return
	}
	for _, e := range st.Endpoints {
		for _, k := range e.Keys {
			if k.ID == t.ID {
				a.bal.Ask(e.ID)
				return
			}
		}
	}
}

// configureKeyBreakers gives every key its endpoint's breaker parameters
// and drops the breakers of keys no pool holds any more.
func (a *App) configureKeyBreakers(eps []store.Endpoint, overrides []breaker.Overrides, cfg breaker.Config) {
	a.keyBreakers.SetConfig(cfg)
	live := map[int64]bool{}
	for i, e := range eps {
		for _, k := range e.Keys {
			live[k.ID] = true
			a.keyBreakers.SetOverrides(k.ID, overrides[i])
		}
	}
	for id := range a.knownKeys {
		if !live[id] {
			a.keyBreakers.Remove(id)
		}
	}
	a.knownKeys = live
}

// resetChangedKeys force-closes the breaker of every key whose secret
// changed under the same id: a new key says nothing of the old one's
// failures (docs/BEHAVIOUR.md#endpoints).
func (a *App) resetChangedKeys(before, after store.Endpoint) {
	old := make(map[int64]string, len(before.Keys))
	for _, k := range before.Keys {
		old[k.ID] = k.Key
	}
	for _, k := range after.Keys {
		if s, ok := old[k.ID]; ok && s != k.Key {
			a.keyBreakers.Get(k.ID).ForceClose()
		}
	}
}

// forceKey force-opens or force-closes one key's breaker
// (POST /api/endpoints/{id}/keys/{key}/force-open|force-close) and answers
// the endpoint's health.
func (a *App) forceKey(open bool) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		e, err := a.pathEndpoint(r)
		if err != nil {
			return err
		}
		kid, err := strconv.ParseInt(r.PathValue("key"), 10, 64)
		if err != nil {
			return errBadRequest("invalid_id", "key", "key must be the id of one of the endpoint's keys")
		}
		found := false
		for _, k := range e.Keys {
			found = found || k.ID == kid
		}
		if !found {
			return &apiError{Status: http.StatusNotFound, Code: "not_found",
				Message: fmt.Sprintf("endpoint %s has no key %d", e.Name, kid)}
		}
		b := a.keyBreakers.Get(kid)
		action := "force-close"
		if open {
			action = "force-open"
			b.ForceOpen()
		} else {
			b.ForceClose()
		}
		a.log.Info().Int64("endpoint_id", e.ID).Int64("key_id", kid).Str("action", action).Msg("key breaker forced")
		a.events.Publish("health", a.Health())
		writeJSON(w, http.StatusOK, a.endpointHealth(e, time.Now()))
		return nil
	}
}
