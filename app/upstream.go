package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/ccmesh/ccmesh/app/probe"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// The admin side's calls to an upstream, Test and Fetch models
// (docs/BEHAVIOUR.md#health): the routes, and where Test's results are
// kept. The calls, their wording and the model list's paging are the
// package app/probe.

// TestResult is the outcome of the Test action (probe.Result). Declared
// here rather than aliased, so that the generated TypeScript names it as
// the app's (frontend/src/api/types.gen.ts).
type TestResult probe.Result

// FetchModelsReply is POST /api/endpoints/{id}/fetch-models: the models
// the upstream lists (probe.ModelList), declared as TestResult is.
type FetchModelsReply probe.ModelList

// probeHost is the app as the probe sees it (probe.Host).
type probeHost struct{ a *App }

func (h probeHost) Upstream(e store.Endpoint) proxy.Endpoint {
	return proxyConfig([]store.Endpoint{e}, DefaultSettings(), "").Endpoints[0]
}

func (h probeHost) Transport(e store.Endpoint) http.RoundTripper { return h.a.transportFor(e) }

func (h probeHost) ClientToken() string { return h.a.state.Load().Settings.ClientToken }

// transportFor is the transport that reaches e the way the proxy's
// requests do: through its proxy_url's (docs/BEHAVIOUR.md#upstream-proxy),
// else the app's own.
func (a *App) transportFor(e store.Endpoint) http.RoundTripper {
	if e.ProxyURL == "" || a.proxy == nil {
		return a.upstream
	}
	return a.proxy.TransportFor(e.ProxyURL)
}

// keepTest stores res as endpoint id's last test. Under writeMu, so that a
// delete of the endpoint comes either before (the store refuses the row)
// or after (reload forgets the result).
func (a *App) keepTest(ctx context.Context, id int64, res probe.Result) error {
	a.writeMu.Lock()
	defer a.writeMu.Unlock()
	return a.tests.Keep(ctx, id, res)
}

// testEndpoint sends GET /v1/models, or a 1-token message where the
// upstream does not serve the model list, and keeps the result for health,
// in memory and in the database (docs/BEHAVIOUR.md#health). With ?key=<id>
// it tests that key of the pool, and keeps the result for the key's health
// (in memory only).
func (a *App) testEndpoint(w http.ResponseWriter, r *http.Request) error {
	e, err := a.pathEndpoint(r)
	if err != nil {
		return err
	}
	id := e.ID
	keyID, err := testKey(r, &e)
	if err != nil {
		return err
	}
	res := probe.Test(r.Context(), probeHost{a}, e)
	if keyID != 0 {
		a.tests.KeepKey(keyID, res)
	} else if err := a.keepTest(r.Context(), id, res); err != nil {
		return err
	}
	a.events.Publish("health", a.Health())
	writeJSON(w, http.StatusOK, TestResult(res))
	return nil
}

// testKey reads Test's ?key=<id>: e then sends that key of its pool; 0
// when the query names none.
func testKey(r *http.Request, e *store.Endpoint) (int64, error) {
	raw := r.URL.Query().Get("key")
	if raw == "" {
		return 0, nil
	}
	if kid, err := strconv.ParseInt(raw, 10, 64); err == nil {
		if k, ok := probe.WithKey(*e, kid); ok {
			*e = k
			return kid, nil
		}
	}
	return 0, &apiError{Status: http.StatusNotFound, Code: "not_found",
		Message: fmt.Sprintf("endpoint %s has no key %s", e.Name, raw)}
}

// fetchModels reads the upstream's model list and returns the ids without
// saving them (probe.FetchModels).
func (a *App) fetchModels(w http.ResponseWriter, r *http.Request) error {
	e, err := a.pathEndpoint(r)
	if err != nil {
		return err
	}
	list, err := probe.FetchModels(r.Context(), probeHost{a}, e)
	if pe, ok := errors.AsType[*probe.Error](err); ok {
		return &apiError{Status: http.StatusBadGateway, Code: pe.Code, Message: pe.Message}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, FetchModelsReply(list))
	return nil
}
