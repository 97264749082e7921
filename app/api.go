package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/ccmesh/ccmesh/app/apierr"
	"github.com/ccmesh/ccmesh/app/clients"
	"github.com/ccmesh/ccmesh/internal/logcode"
	"github.com/ccmesh/ccmesh/store"
)

// The admin API's plumbing: the route table, the write path every change
// takes, and the error and decoding rules every handler shares. The
// handlers live with their area (endpoints.go, settings.go, logs.go, …).

// api registers the admin routes on mux (paths under /api/).
func (a *App) api(mux *http.ServeMux) {
	h := func(pattern string, f func(http.ResponseWriter, *http.Request) error) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			// For readBody's deadline.
			r = r.WithContext(context.WithValue(r.Context(), controllerKey{}, http.NewResponseController(w)))
			if err := f(w, r); err != nil {
				a.writeErr(w, r, err)
			}
		})
	}
	bk := a.backups() // export, import and sync
	h("GET /api/info", a.getInfo)
	h("POST /api/pause", a.pauseHandler)
	h("POST /api/resume", a.resumeHandler)
	h("GET /api/endpoints", a.listEndpoints)
	h("POST /api/endpoints", a.createEndpoint)
	h("GET /api/endpoints/{id}", a.getEndpoint)
	h("PUT /api/endpoints/{id}", a.updateEndpoint)
	h("DELETE /api/endpoints/{id}", a.deleteEndpoint)
	h("POST /api/endpoints/{id}/force-open", a.forceBreaker(true))
	h("POST /api/endpoints/{id}/force-close", a.forceBreaker(false))
	h("POST /api/endpoints/{id}/keys/{key}/force-open", a.forceKey(true))
	h("POST /api/endpoints/{id}/keys/{key}/force-close", a.forceKey(false))
	h("POST /api/endpoints/{id}/test", a.testEndpoint)
	h("POST /api/endpoints/{id}/fetch-models", a.fetchModels)
	h("GET /api/endpoints/{id}/balance", a.getBalance)
	h("POST /api/endpoints/{id}/balance", a.refreshBalance)
	h("GET /api/balances", a.listBalances)
	h("GET /api/balance-templates", a.balanceTemplates)
	h("PUT /api/fast-queue", a.putIDs((*store.DB).SetFastQueue))
	h("PUT /api/order", a.putIDs((*store.DB).SetOrder))
	h("GET /api/health", a.getHealth)
	h("GET /api/logs", a.listLogs)
	h("GET /api/logs/{id}", a.getLog)
	h("GET /api/logs/{id}/capture", a.getCapture)
	h("POST /api/logs/{id}/resend", a.resend)
	h("GET /api/logs/{id}/curl", a.curlCommand)
	h("GET /api/breaker-events", a.breakerEvents)
	h("GET /api/stats", a.statsHandler)
	h("GET /api/stats.csv", a.statsCSVHandler)
	h("GET /api/route", a.routeHandler)
	h("GET /api/presets", a.presetsHandler)
	h("GET /api/droppable", a.handleDroppable)
	h("GET /api/settings", a.getSettings)
	h("GET /api/update", a.getUpdate)
	h("POST /api/update/check", a.checkUpdate)
	h("PUT /api/settings", a.putSettings)
	h("GET /api/prices", a.getPrices)
	h("PUT /api/prices", a.putPrices)
	h("GET /api/export", bk.Export)
	h("POST /api/export", bk.ExportFile)
	h("POST /api/import/preview", bk.ImportPreview)
	h("POST /api/import", bk.Import)
	h("GET /api/sync", bk.GetSync)
	h("PUT /api/sync", bk.PutSync)
	h("POST /api/sync/push", bk.Push)
	h("POST /api/sync/pull", bk.Pull)
	h("GET /api/claude-code", a.clientPreview(clients.ClaudeCodeClient))
	h("POST /api/claude-code/apply", a.clientApply(clients.ClaudeCodeClient))
	h("GET /api/codex", a.clientPreview(clients.CodexClient))
	h("POST /api/codex/apply", a.clientApply(clients.CodexClient))
	h("GET /api/gemini-cli", a.clientPreview(clients.GeminiCLIClient))
	h("POST /api/gemini-cli/apply", a.clientApply(clients.GeminiCLIClient))
	h("POST /api/window/show", a.showWindowHandler)
	mux.HandleFunc("GET /api/events", a.eventStream)
	h("/api/", func(w http.ResponseWriter, r *http.Request) error {
		return &apiError{Status: http.StatusNotFound, Code: "not_found",
			Message: "no admin API route " + r.Method + " " + r.URL.Path}
	})
}

// mutate runs one store write and publishes the new snapshot before the
// reply, so the next request and the next GET both see the change.
func (a *App) mutate(ctx context.Context, write func(ctx context.Context) error) error {
	a.writeMu.Lock()
	defer a.writeMu.Unlock()
	if err := write(ctx); err != nil {
		return err
	}
	if err := a.reload(ctx); err != nil {
		return err
	}
	a.events.Publish("endpoints", a.endpointReplies())
	a.events.Publish("health", a.Health())
	return nil
}

// apiError is the admin API's error body: {"error":{"code","message","field"}}.
// Its fields are apierr.Error's; it is declared here, under the name the
// API's generated types give it (frontend/src/api/types.gen.ts). The
// app's own errors are made as one; a concern package's *apierr.Error is
// answered the same (apiErrorOf).
type apiError apierr.Error

func (e *apiError) Error() string { return e.Message }

// apiErrorOf finds the admin API error in err's chain: the app's own, or
// a concern package's apierr.Error.
func apiErrorOf(err error) (*apiError, bool) {
	if ae, ok := errors.AsType[*apiError](err); ok {
		return ae, true
	}
	if pe, ok := errors.AsType[*apierr.Error](err); ok {
		return (*apiError)(pe), true
	}
	return nil, false
}

func errBadRequest(code, field, format string, args ...any) *apiError {
	return (*apiError)(apierr.BadRequest(code, field, format, args...))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client may be gone; nothing to do about it
}

// writeErr answers with err mapped to a status: an admin API error
// (apiErrorOf) as given, store validation errors as 422 (409 for a
// duplicate), ErrNotFound as 404, and anything else as 500 with the
// detail logged rather than shown.
func (a *App) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	ae, isAPI := apiErrorOf(err)
	var ve *store.ValidationError
	switch {
	case isAPI:
	case errors.As(err, &ve):
		status := http.StatusUnprocessableEntity
		if ve.IsConflict() {
			status = http.StatusConflict
		}
		ae = &apiError{Status: status, Code: ve.Code, Message: ve.Message, Field: ve.Field}
	case errors.Is(err, store.ErrNotFound):
		ae = &apiError{Status: http.StatusNotFound, Code: "not_found", Message: "no such " + notFoundWhat(r)}
	default:
		a.log.Error().Err(err).Str(logcode.Field, logcode.AdminAPIFailed).Str("path", r.URL.Path).Msg("admin API call failed")
		ae = &apiError{Status: http.StatusInternalServerError, Code: "internal",
			Message: "ccmesh could not complete this: " + err.Error()}
	}
	writeJSON(w, ae.Status, map[string]*apiError{"error": ae})
}

func notFoundWhat(r *http.Request) string {
	if r.PathValue("id") != "" {
		return "id " + r.PathValue("id")
	}
	return "item"
}

// maxAdminBody bounds admin API request bodies (an import of many endpoints
// fits easily).
const maxAdminBody = 4 << 20

// adminBodyTimeout bounds how long an admin API request body may take to
// arrive (docs/BEHAVIOUR.md#bad-input-and-faults).
const adminBodyTimeout = 10 * time.Second

// controllerKey is the request context key of the handler's
// *http.ResponseController, which api's routes put there.
type controllerKey struct{}

// decodeJSON reads the request body (readBody) and decodes it into v
// (decodeBody). Handlers call it before taking any lock.
func decodeJSON(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeBody(body, v)
}

// readBody reads an admin API request body: at most maxAdminBody bytes,
// arriving within adminBodyTimeout, so that a client trickling a body
// holds nothing for long. Read it before taking a lock.
func readBody(r *http.Request) ([]byte, error) {
	// A writer without deadlines (the desktop window's in-process asset
	// server) has no network to wait on.
	rc, _ := r.Context().Value(controllerKey{}).(*http.ResponseController)
	deadline := rc != nil && rc.SetReadDeadline(time.Now().Add(adminBodyTimeout)) == nil
	body, err := io.ReadAll(io.LimitReader(r.Body, maxAdminBody+1))
	if deadline && err == nil && len(body) <= maxAdminBody {
		// Cleared once the whole body is read: a deadline passing while the
		// handler works would make the server cancel the request's context.
		// Otherwise it stays, so that the server gives up on the rest of
		// the body at once instead of waiting for it before the answer.
		_ = rc.SetReadDeadline(time.Time{}) // it was set just before
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, &apiError{Status: http.StatusRequestTimeout, Code: "body_timeout",
			Message: fmt.Sprintf("the request body did not arrive within %v; send it again", adminBodyTimeout)}
	case err != nil:
		return nil, errBadRequest("bad_body", "", "could not read the request body: %v", err)
	case len(body) > maxAdminBody:
		return nil, &apiError{Status: http.StatusRequestEntityTooLarge, Code: "too_large",
			Message: fmt.Sprintf("request body is larger than %d bytes", maxAdminBody)}
	}
	return body, nil
}

// decodeBody decodes one JSON value into v, with errors a user can act on
// (a 400 with the field named): apierr.Decode.
func decodeBody(body []byte, v any) error { return apierr.Decode(body, v) }

func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, errBadRequest("bad_id", "id", "%q is not an endpoint id (a positive integer)", r.PathValue("id"))
	}
	return id, nil
}

func queryInt(r *http.Request, name string, def, lo, hi int64) (int64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < lo || v > hi {
		return 0, errBadRequest("bad_query", name, "query %s=%q must be a whole number from %d to %d", name, s, lo, hi)
	}
	return v, nil
}
