package app

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// exportDoc is the shape of GET /api/export and POST /api/import.
type exportDoc struct {
	Version   int                   `json:"version"`
	Settings  *Settings             `json:"settings,omitempty"`
	Endpoints []store.EndpointPatch `json:"endpoints"`
}

// importDoc is an exportDoc as POST /api/import decodes it: its endpoints
// are inputs the admin API validates.
type importDoc struct {
	Version   int             `json:"version"`
	Settings  *Settings       `json:"settings,omitempty"`
	Endpoints []endpointInput `json:"endpoints"`
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
		PriceMultiplier: &e.PriceMultiplier, HedgeAfterMs: &e.HedgeAfterMs,
	}
}

// importHandler adds the document's endpoints (an existing name is updated)
// and replaces the settings if given, all in one transaction.
func (a *App) importHandler(w http.ResponseWriter, r *http.Request) error {
	var doc importDoc
	if err := decodeJSON(r, &doc); err != nil {
		return err
	}
	if doc.Version != 1 {
		return errBadRequest("bad_version", "version", "this is not a ccmesh export (version %d; want 1)", doc.Version)
	}
	var settings json.RawMessage
	if doc.Settings != nil {
		if doc.Settings.Capture == "" { // an export from before the setting
			doc.Settings.Capture = proxy.CaptureOff
		}
		if err := validateSettings(*doc.Settings, a.opts.Listen); err != nil {
			return err
		}
		var err error
		if settings, err = json.Marshal(*doc.Settings); err != nil {
			return err
		}
	}
	var n int
	err := a.mutate(r.Context(), func(ctx context.Context) error {
		// Inside the write lock: whether an endpoint is new depends on the
		// endpoints stored now.
		if err := validateImport(doc.Endpoints, a.state.Load().Endpoints); err != nil {
			return err
		}
		patches := make([]store.EndpointPatch, len(doc.Endpoints))
		for i, in := range doc.Endpoints {
			var err error
			if patches[i], err = in.patch(); err != nil {
				return err
			}
		}
		var err error
		n, err = a.db.Import(ctx, patches, settings)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"endpoints": n})
	return nil
}
