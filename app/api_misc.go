package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/ccmesh/ccmesh/store"
)

// Info is GET /api/info: what the header and the tray show.
type Info struct {
	Version  string `json:"version"`
	Listen   string `json:"listen"`
	ProxyURL string `json:"proxy_url"`
	DataDir  string `json:"data_dir"`
	Paused   bool   `json:"paused"`
	Headless bool   `json:"headless"`
}

// Version is set at build time with -ldflags "-X github.com/ccmesh/ccmesh/app.Version=…".
var Version = "dev"

// Info describes the running instance.
func (a *App) Info() Info {
	return Info{
		Version:  Version,
		Listen:   a.opts.Listen,
		ProxyURL: a.ProxyURL(),
		DataDir:  a.opts.DataDir,
		Paused:   a.paused.Load(),
		Headless: a.opts.Headless,
	}
}

// ProxyURL is the base URL clients point at.
func (a *App) ProxyURL() string { return "http://" + a.opts.Listen }

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

func (a *App) statsHandler(w http.ResponseWriter, r *http.Request) error {
	minutes, err := queryInt(r, "minutes", 60, 1, 24*60)
	if err != nil {
		return err
	}
	pts, err := a.db.Stats(r.Context(), time.Now().Add(-time.Duration(minutes)*time.Minute))
	if err != nil {
		return err
	}
	if pts == nil {
		pts = []store.StatPoint{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"points": pts})
	return nil
}

func (a *App) putSettings(w http.ResponseWriter, r *http.Request) error {
	var saved store.Settings
	err := a.mutate(r.Context(), func(ctx context.Context) error {
		// Decoding onto a copy of the current settings merges: fields the
		// body leaves out keep their values.
		s := a.state.Load().Settings
		if err := decodeJSON(r, &s); err != nil {
			return err
		}
		if err := validateSettings(s); err != nil {
			return err
		}
		saved = s
		return a.db.PutSettings(ctx, s)
	})
	if err != nil {
		return err
	}
	a.events.Publish("settings", saved)
	writeJSON(w, http.StatusOK, saved)
	return nil
}

func invalid(field, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusUnprocessableEntity, Code: "invalid_setting", Field: field,
		Message: fmt.Sprintf(format, args...)}
}

func validateSettings(s store.Settings) error {
	if s.Listen != "" {
		host, port, err := net.SplitHostPort(s.Listen)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return invalid("listen", "listen must be host:port, e.g. 127.0.0.1:3457, not %q", s.Listen)
		}
		if !ListenerIsLoopback(s.Listen) && s.ClientToken == "" {
			return invalid("listen", "a non-loopback address (%s) needs a client token: set client_token first", s.Listen)
		}
	}
	switch s.Strategy {
	case "sticky", "priority", "round-robin":
	default:
		return invalid("strategy", "strategy must be sticky, priority or round-robin, not %q", s.Strategy)
	}
	switch s.Language {
	case "en", "zh-CN":
	default:
		return invalid("language", "language must be en or zh-CN, not %q", s.Language)
	}
	positive := []struct {
		field string
		v     int64
	}{
		{"first_byte_timeout_ms", s.FirstByteTimeoutMs},
		{"idle_timeout_ms", s.IdleTimeoutMs},
		{"max_body_bytes", s.MaxBodyBytes},
		{"log_retention_rows", int64(s.LogRetentionRows)},
		{"log_retention_days", int64(s.LogRetentionDays)},
	}
	for _, p := range positive {
		if p.v <= 0 {
			return invalid(p.field, "%s must be greater than 0", p.field)
		}
	}
	for name, p := range map[string]store.BreakerParams{"claude": s.Breaker.Claude, "openai": s.Breaker.OpenAI} {
		if err := store.ValidateBreakerParams("breaker."+name, p); err != nil {
			return err
		}
	}
	return nil
}

// exportDoc is the shape of GET /api/export and POST /api/import.
type exportDoc struct {
	Version   int                   `json:"version"`
	Settings  *store.Settings       `json:"settings,omitempty"`
	Endpoints []store.EndpointPatch `json:"endpoints"`
}

func (a *App) export(w http.ResponseWriter, r *http.Request) error {
	withKeys := r.URL.Query().Get("keys") == "1" || r.URL.Query().Get("keys") == "true"
	st := a.state.Load()
	doc := exportDoc{Version: 1, Settings: &st.Settings, Endpoints: make([]store.EndpointPatch, 0, len(st.Endpoints))}
	if !withKeys {
		s := st.Settings
		s.ClientToken = ""
		doc.Settings = &s
	}
	for _, e := range st.Endpoints {
		p := patchOf(e)
		if !withKeys {
			p.APIKey = nil
		}
		doc.Endpoints = append(doc.Endpoints, p)
	}
	w.Header().Set("Content-Disposition", `attachment; filename="ccmesh-export.json"`)
	writeJSON(w, http.StatusOK, doc)
	return nil
}

func patchOf(e store.Endpoint) store.EndpointPatch {
	return store.EndpointPatch{
		Name: &e.Name, BaseURL: &e.BaseURL, APIKey: &e.APIKey, Protocol: &e.Protocol, Auth: &e.Auth,
		Models: &e.Models, ModelMap: &e.ModelMap, Enabled: &e.Enabled, Fast: &e.Fast,
		FastSortOrder: &e.FastSortOrder, SortOrder: &e.SortOrder, BreakerOverrides: &e.BreakerOverrides,
	}
}

// importHandler adds the document's endpoints (an existing name is updated)
// and replaces the settings if given, all in one transaction.
func (a *App) importHandler(w http.ResponseWriter, r *http.Request) error {
	var doc exportDoc
	if err := decodeJSON(r, &doc); err != nil {
		return err
	}
	if doc.Version != 1 {
		return errBadRequest("bad_version", "version", "this is not a ccmesh export (version %d; want 1)", doc.Version)
	}
	if doc.Settings != nil {
		if err := validateSettings(*doc.Settings); err != nil {
			return err
		}
	}
	var n int
	err := a.mutate(r.Context(), func(ctx context.Context) error {
		var err error
		n, err = a.db.Import(ctx, doc.Endpoints, doc.Settings)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"endpoints": n})
	return nil
}

// eventStream is GET /api/events: server-sent events for the UI. It sends
// the current lists at once, then every change.
func (a *App) eventStream(w http.ResponseWriter, r *http.Request) {
	ch, unsubscribe := a.events.Subscribe()
	defer unsubscribe()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	write := func(name string, data []byte) bool {
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data); err != nil {
			return false
		}
		_ = rc.Flush() // Wails' writer streams without being a Flusher (docs/DESKTOP.md)
		return true
	}
	for _, ev := range []struct {
		name string
		v    any
	}{{"info", a.Info()}, {"endpoints", a.endpointReplies()}, {"health", a.Health()}, {"settings", a.state.Load().Settings}} {
		data, _ := json.Marshal(ev.v)
		if !write(ev.name, data) {
			return
		}
	}
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-a.closing:
			return
		case ev := <-ch:
			if !write(ev.Name, ev.Data) {
				return
			}
		case <-keepAlive.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			_ = rc.Flush()
		}
	}
}
