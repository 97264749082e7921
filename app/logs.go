package app

import (
	"net/http"

	"github.com/ccmesh/ccmesh/store"
)

func (a *App) listLogs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := queryInt(r, "limit", 50, 1, 500)
	if err != nil {
		return err
	}
	before, err := queryInt(r, "before", 0, 0, 1<<62)
	if err != nil {
		return err
	}
	status, err := queryInt(r, "status", 0, 0, 999)
	if err != nil {
		return err
	}
	items, next, err := a.db.ListLogs(r.Context(), store.LogFilter{
		Limit: int(limit), Before: before, Endpoint: q.Get("endpoint"), Status: int(status), Model: q.Get("model"),
	})
	if err != nil {
		return err
	}
	if items == nil {
		items = []store.RequestLog{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "next_before": next})
	return nil
}

func (a *App) getLog(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	row, err := a.db.GetLog(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, row)
	return nil
}

func (a *App) breakerEvents(w http.ResponseWriter, r *http.Request) error {
	ep, err := queryInt(r, "endpoint", 0, 0, 1<<62)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	evs, err := a.db.ListBreakerEvents(r.Context(), ep, int(limit))
	if err != nil {
		return err
	}
	if evs == nil {
		evs = []store.BreakerEvent{}
	}
	writeJSON(w, http.StatusOK, evs)
	return nil
}
