package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/ccmesh/ccmesh/app/backup"
	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/store"
)

// Export, import and sync are the package app/backup's
// (docs/BEHAVIOUR.md#backup-and-sync): its Service answers their routes,
// and reaches the app through backupHost.

// backups is the service of the export, import and sync routes.
func (a *App) backups() *backup.Service[Settings] {
	return backup.New(backupHost{a}, a.db, a.log, maxAdminBody)
}

// backupConfig is st's configuration as app/backup reads it.
func backupConfig(st *State) backup.Config[Settings] {
	return backup.Config[Settings]{Endpoints: st.Endpoints, Settings: st.Settings}
}

// backupHost is the app as app/backup needs it (backup.Host).
type backupHost struct{ a *App }

func (h backupHost) Config() backup.Config[Settings] { return backupConfig(h.a.state.Load()) }

func (h backupHost) Mutate(ctx context.Context, write func(context.Context) error) error {
	return h.a.mutate(ctx, write)
}

func (h backupHost) Reload(ctx context.Context) error { return h.a.reload(ctx) }

func (h backupHost) Removed(id int64) { h.a.breakers.Remove(id) }

func (h backupHost) Renewed(e store.Endpoint) {
	h.a.breakers.Get(e.ID).ForceClose()
	for _, k := range e.Keys {
		h.a.keyBreakers.Get(k.ID).ForceClose()
	}
}

func (h backupHost) SettingsChanged() { h.a.events.Publish("settings", h.a.state.Load().Settings) }

func (h backupHost) FileSettings(doc json.RawMessage) (Settings, error) {
	return mergeSettings(DefaultSettings(), doc)
}

func (h backupHost) CheckSettings(s Settings, targets config.Targets) error {
	if err := validateSettings(s, h.a.opts.Listen); err != nil {
		return err
	}
	_, err := validateRules(s.Rules, targets)
	return err
}

func (h backupHost) ReadBody(r *http.Request) ([]byte, error) { return readBody(r) }

func (h backupHost) WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// Token, AtLogin and Local are the settings as app/backup sees them
// (backup.Settings): the client token is a key, start at login this
// machine's.
func (s Settings) Token() string { return s.ClientToken }

func (s Settings) AtLogin() bool { return s.StartAtLogin }

func (s Settings) Local(token string, atLogin bool) Settings {
	s = s.clone()
	s.ClientToken, s.StartAtLogin = token, atLogin
	return s
}

// Reading an export file back (docs/BEHAVIOUR.md#backup-and-sync): POST
// /api/import/preview says what POST /api/import would change, and the
// import makes the stored configuration the file's, in one transaction.
// An import replaces: endpoints the file does not name are removed.

// passphraseHeader carries an encrypted file's passphrase to the import
// routes (never the URL), percent-encoded UTF-8 as encodeURIComponent
// writes it, since header values are bytes without a charset.
const passphraseHeader = "X-Ccmesh-Passphrase"

// Codes of a file that cannot be read (422).
const (
	codeBadPassphrase = backup.CodeBadPassphrase
	codeCorruptFile   = backup.CodeCorruptFile
	codeNewerSchema   = "newer_schema"
)

// importDoc is an export file as an import decodes it: its endpoints are
// inputs the admin API validates.
type importDoc struct {
	Version    int             `json:"version"`
	ExportedAt *time.Time      `json:"exported_at"`
	Keys       *bool           `json:"keys"` // absent from version 1
	Settings   *Settings       `json:"settings,omitempty"`
	Endpoints  []endpointInput `json:"endpoints"`
}

// backupFile is an export file as read: its document, with the settings
// laid over the defaults (nil when the file has none), and how it came.
type backupFile struct {
	doc       importDoc
	settings  *Settings
	keys      bool
	encrypted bool
}

// The report of an import, under the names the API types use.
type (
	ImportReport = backup.ImportReport
	KeyMove      = backup.KeyMove
)

// diffImport says what replacing st's configuration with patches and
// settings (nil: kept) changes.
func diffImport(st *State, patches []store.EndpointPatch, settings *Settings) ImportReport {
	return backup.Diff(st.Endpoints, st.Settings, patches, settings)
}

// readBackup reads an export file's bytes: JSON, or an age file opened
// with passphrase.
func readBackup(ctx context.Context, body []byte, passphrase string) (*backupFile, error) {
	plain, encrypted, err := openFile(ctx, body, passphrase)
	if err != nil {
		return nil, err
	}
	f, err := parseBackup(plain)
	if err != nil {
		return nil, err
	}
	f.encrypted = encrypted
	return f, nil
}

// openFile returns the plain bytes of a file (backup.Open): body itself
// unless it is an age file, which must open with passphrase; what it
// refuses is the admin API's 422.
func openFile(ctx context.Context, body []byte, passphrase string) (plain []byte, encrypted bool, err error) {
	return backup.Open(ctx, body, passphrase, maxAdminBody)
}

// parseBackup decodes a plain export file, refusing one from a newer
// schema before its fields are looked at.
func parseBackup(plain []byte) (*backupFile, error) {
	var head struct {
		Version any `json:"version"`
	}
	if json.Unmarshal(plain, &head) == nil {
		if v, ok := head.Version.(float64); ok && v > backup.Schema {
			return nil, &apiError{Status: http.StatusUnprocessableEntity, Code: codeNewerSchema, Field: "version",
				Message: fmt.Sprintf("this file was written by a newer ccmesh (schema %v); this one reads up to %d: "+
					"update ccmesh to import it", v, backup.Schema)}
		}
	}
	f := &backupFile{}
	if err := decodeBody(plain, &f.doc); err != nil {
		return nil, err
	}
	if f.doc.Version < 1 {
		return nil, errBadRequest("bad_version", "version", "this is not a ccmesh export (version %d; want 1 to %d)",
			f.doc.Version, backup.Schema)
	}
	if f.doc.Settings != nil {
		// Laid over the defaults: a setting the file predates gets its
		// default, as in a new database.
		var raw struct {
			Settings json.RawMessage `json:"settings"`
		}
		if err := json.Unmarshal(plain, &raw); err != nil {
			return nil, err
		}
		s, err := mergeSettings(DefaultSettings(), raw.Settings)
		if err != nil {
			return nil, err
		}
		f.settings = &s
	}
	switch {
	case f.doc.Keys != nil:
		f.keys = *f.doc.Keys
	default: // version 1 said nothing: it had keys if it shows one
		f.keys = f.doc.Settings != nil && f.doc.Settings.ClientToken != ""
		for _, e := range f.doc.Endpoints {
			f.keys = f.keys || e.APIKey != nil || e.Keys != nil
		}
	}
	return f, nil
}

// passphraseOf reads the passphrase header.
func passphraseOf(r *http.Request) (string, error) {
	v := r.Header.Get(passphraseHeader)
	p, err := url.PathUnescape(v)
	if err != nil {
		return "", errBadRequest("bad_passphrase_header", "passphrase",
			"the %s header must be the passphrase percent-encoded as UTF-8 (encodeURIComponent): %v", passphraseHeader, err)
	}
	return p, nil
}

// moveKeysOf reads the import's confirmation that the stored keys a
// keyless file points at other hosts go along (?move_keys=1).
func moveKeysOf(r *http.Request) bool {
	v := r.URL.Query().Get("move_keys")
	return v == "1" || v == "true"
}

// requestBackup reads the file a preview or import request carries.
func requestBackup(r *http.Request) (*backupFile, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	pass, err := passphraseOf(r)
	if err != nil {
		return nil, err
	}
	return readBackup(r.Context(), body, pass)
}

// importPlan is a file made ready to apply to the state it was planned on.
type importPlan struct {
	patches  []store.EndpointPatch
	settings *Settings // nil: the file has none, the stored ones stay
	report   ImportReport
}

// planImport validates f's endpoints and settings as an import onto st
// applies them, and says what would change. moveKeys keeps the stored
// keys that a file without keys would point at another host; without it
// they are dropped.
func (a *App) planImport(st *State, f *backupFile, moveKeys bool) (*importPlan, error) {
	// Validated on a copy: validate fills in defaults, and a preview's file
	// may be applied to another state later.
	eps := slices.Clone(f.doc.Endpoints)
	if err := config.ValidateImport(eps, st.Endpoints); err != nil {
		return nil, err
	}
	p := &importPlan{patches: make([]store.EndpointPatch, len(eps))}
	for i, in := range eps {
		if in.Name == nil {
			return nil, rejected(store.CodeRequired, fmt.Sprintf("endpoints[%d].name", i),
				"endpoint %d: name is required: an import matches endpoints by name", i+1)
		}
		var err error
		if p.patches[i], err = in.Patch(); err != nil {
			return nil, err
		}
	}
	var moves []KeyMove
	if !f.keys {
		moves = backup.KeyMoves(st.Endpoints, p.patches, moveKeys)
	}
	// What the store's Replace would refuse (names given twice, URLs,
	// names, keys, patterns), refused here too: a preview that passes is
	// an import that passes, on the same state.
	if err := store.CheckReplace(st.Endpoints, p.patches); err != nil {
		return nil, err
	}
	if f.settings != nil {
		s := f.settings.clone()
		if !f.keys {
			s.ClientToken = st.Settings.ClientToken
		}
		s.StartAtLogin = st.Settings.StartAtLogin // this machine's, whatever the file says
		if err := validateSettings(s, a.opts.Listen); err != nil {
			return nil, err
		}
		if _, err := validateRules(s.Rules, config.ImportTargets(st.Endpoints, p.patches)); err != nil {
			return nil, err
		}
		p.settings = &s
	}
	p.report = diffImport(st, p.patches, p.settings)
	p.report.Schema, p.report.ExportedAt, p.report.Encrypted, p.report.Keys = f.doc.Version, f.doc.ExportedAt, f.encrypted, f.keys
	p.report.KeyMoves, p.report.KeysMoved = append([]KeyMove{}, moves...), moveKeys && len(moves) > 0
	return p, nil
}

// applyImport replaces the stored configuration with the plan's. The
// caller holds writeMu (it runs inside mutate); st is the state planned
// on, which must still be the current one.
func (a *App) applyImport(ctx context.Context, st *State, p *importPlan) error {
	var settings json.RawMessage
	if p.settings != nil {
		var err error
		if settings, err = json.Marshal(*p.settings); err != nil {
			return err
		}
	}
	removed, err := a.db.Replace(ctx, p.patches, settings)
	if err != nil {
		return err
	}
	for _, id := range removed {
		a.breakers.Remove(id)
	}
	// docs/BEHAVIOUR.md#endpoints: a new key or URL is a new upstream; its
	// old failures say nothing about it.
	for _, e := range st.Endpoints {
		fields := p.report.Fields[e.Name]
		if slices.Contains(fields, "api_key") || slices.Contains(fields, "base_url") {
			a.breakers.Get(e.ID).ForceClose()
			for _, k := range e.Keys {
				a.keyBreakers.Get(k.ID).ForceClose()
			}
		}
	}
	return nil
}

// importPreview answers POST /api/import/preview: what the import of the
// body's file would change. Nothing is changed.
func (a *App) importPreview(w http.ResponseWriter, r *http.Request) error {
	f, err := requestBackup(r)
	if err != nil {
		return err
	}
	p, err := a.planImport(a.state.Load(), f, moveKeysOf(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p.report)
	return nil
}

// importHandler answers POST /api/import: the configuration becomes the
// body's file's, in one transaction, and the answer says what changed.
func (a *App) importHandler(w http.ResponseWriter, r *http.Request) error {
	f, err := requestBackup(r)
	if err != nil {
		return err
	}
	var p *importPlan
	err = a.mutate(r.Context(), func(ctx context.Context) error {
		// Planned inside the write lock: what changes depends on what is
		// stored now.
		st := a.state.Load()
		var err error
		if p, err = a.planImport(st, f, moveKeysOf(r)); err != nil {
			return err
		}
		return a.applyImport(ctx, st, p)
	})
	if err != nil {
		return err
	}
	if len(p.report.Settings) > 0 {
		a.events.Publish("settings", a.state.Load().Settings)
	}
	a.log.Info().Int("added", len(p.report.Added)).Int("changed", len(p.report.Changed)).
		Int("removed", len(p.report.Removed)).Bool("settings", len(p.report.Settings) > 0).Msg("configuration imported")
	writeJSON(w, http.StatusOK, p.report)
	return nil
}
