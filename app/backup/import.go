package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/ccmesh/ccmesh/app/apierr"
	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/store"
)

// Reading an export file back (docs/BEHAVIOUR.md#backup-and-sync): POST
// /api/import/preview says what POST /api/import would change, and the
// import makes the stored configuration the file's, in one transaction.
// An import replaces: endpoints the file does not name are removed.

// PassphraseHeader carries an encrypted file's passphrase to the import
// routes (never the URL), percent-encoded UTF-8 as encodeURIComponent
// writes it, since header values are bytes without a charset.
const PassphraseHeader = "X-Ccmesh-Passphrase"

// CodeNewerSchema is the code of a file a newer ccmesh wrote (422).
const CodeNewerSchema = "newer_schema"

// importDoc is an export file as an import decodes it: its endpoints are
// inputs the admin API validates.
type importDoc[S any] struct {
	Version    int                    `json:"version"`
	ExportedAt *time.Time             `json:"exported_at"`
	Keys       *bool                  `json:"keys"` // absent from version 1
	Settings   *S                     `json:"settings,omitempty"`
	Endpoints  []config.EndpointInput `json:"endpoints"`
}

// importFile is an export file as read: its document, with the settings
// laid over the defaults (nil when the file has none), and how it came.
type importFile[S any] struct {
	doc       importDoc[S]
	settings  *S
	keys      bool
	encrypted bool
}

// readFile reads an export file's bytes: JSON, or an age file opened
// with passphrase.
func (b *Service[S]) readFile(ctx context.Context, body []byte, passphrase string) (*importFile[S], error) {
	plain, encrypted, err := Open(ctx, body, passphrase, b.maxBody)
	if err != nil {
		return nil, err
	}
	f, err := b.parse(plain)
	if err != nil {
		return nil, err
	}
	f.encrypted = encrypted
	return f, nil
}

// parse decodes a plain export file, refusing one from a newer schema
// before its fields are looked at.
func (b *Service[S]) parse(plain []byte) (*importFile[S], error) {
	var head struct {
		Version any `json:"version"`
	}
	if json.Unmarshal(plain, &head) == nil {
		if v, ok := head.Version.(float64); ok && v > Schema {
			return nil, &apierr.Error{Status: http.StatusUnprocessableEntity, Code: CodeNewerSchema, Field: "version",
				Message: fmt.Sprintf("this file was written by a newer ccmesh (schema %v); this one reads up to %d: "+
					"update ccmesh to import it", v, Schema)}
		}
	}
	f := &importFile[S]{}
	if err := apierr.Decode(plain, &f.doc); err != nil {
		return nil, err
	}
	if f.doc.Version < 1 {
		return nil, apierr.BadRequest("bad_version", "version", "this is not a ccmesh export (version %d; want 1 to %d)",
			f.doc.Version, Schema)
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
		s, err := b.h.FileSettings(raw.Settings)
		if err != nil {
			return nil, err
		}
		f.settings = &s
	}
	switch {
	case f.doc.Keys != nil:
		f.keys = *f.doc.Keys
	default: // version 1 said nothing: it had keys if it shows one
		f.keys = f.doc.Settings != nil && (*f.doc.Settings).Token() != ""
		for _, e := range f.doc.Endpoints {
			f.keys = f.keys || e.APIKey != nil || e.Keys != nil
		}
	}
	return f, nil
}

// passphraseOf reads the passphrase header.
func passphraseOf(r *http.Request) (string, error) {
	v := r.Header.Get(PassphraseHeader)
	p, err := url.PathUnescape(v)
	if err != nil {
		return "", apierr.BadRequest("bad_passphrase_header", "passphrase",
			"the %s header must be the passphrase percent-encoded as UTF-8 (encodeURIComponent): %v", PassphraseHeader, err)
	}
	return p, nil
}

// moveKeysOf reads the import's confirmation that the stored keys a
// keyless file points at other hosts go along (?move_keys=1).
func moveKeysOf(r *http.Request) bool {
	v := r.URL.Query().Get("move_keys")
	return v == "1" || v == "true"
}

// requestFile reads the file a preview or import request carries.
func (b *Service[S]) requestFile(r *http.Request) (*importFile[S], error) {
	body, err := b.h.ReadBody(r)
	if err != nil {
		return nil, err
	}
	pass, err := passphraseOf(r)
	if err != nil {
		return nil, err
	}
	return b.readFile(r.Context(), body, pass)
}

// importPlan is a file made ready to apply to the configuration it was
// planned on.
type importPlan[S any] struct {
	patches  []store.EndpointPatch
	settings *S // nil: the file has none, the stored ones stay
	report   ImportReport
}

// plan validates f's endpoints and settings as an import onto c applies
// them, and says what would change. moveKeys keeps the stored keys that a
// file without keys would point at another host; without it they are
// dropped.
func (b *Service[S]) plan(c Config[S], f *importFile[S], moveKeys bool) (*importPlan[S], error) {
	// Validated on a copy: validate fills in defaults, and a preview's file
	// may be applied to another state later.
	eps := slices.Clone(f.doc.Endpoints)
	if err := config.ValidateImport(eps, c.Endpoints); err != nil {
		return nil, err
	}
	p := &importPlan[S]{patches: make([]store.EndpointPatch, len(eps))}
	for i, in := range eps {
		if in.Name == nil {
			return nil, apierr.Rejected(store.CodeRequired, fmt.Sprintf("endpoints[%d].name", i),
				"endpoint %d: name is required: an import matches endpoints by name", i+1)
		}
		var err error
		if p.patches[i], err = in.Patch(); err != nil {
			return nil, err
		}
	}
	var moves []KeyMove
	if !f.keys {
		moves = KeyMoves(c.Endpoints, p.patches, moveKeys)
	}
	// What the store's Replace would refuse (names given twice, URLs,
	// names, keys, patterns), refused here too: a preview that passes is
	// an import that passes, on the same state.
	if err := store.CheckReplace(c.Endpoints, p.patches); err != nil {
		return nil, err
	}
	if f.settings != nil {
		token := (*f.settings).Token()
		if !f.keys {
			token = c.Settings.Token()
		}
		// Start at login is this machine's, whatever the file says.
		s := (*f.settings).Local(token, c.Settings.AtLogin())
		if err := b.h.CheckSettings(s, config.ImportTargets(c.Endpoints, p.patches)); err != nil {
			return nil, err
		}
		p.settings = &s
	}
	p.report = Diff(c.Endpoints, c.Settings, p.patches, p.settings)
	p.report.Schema, p.report.ExportedAt, p.report.Encrypted, p.report.Keys = f.doc.Version, f.doc.ExportedAt, f.encrypted, f.keys
	p.report.KeyMoves, p.report.KeysMoved = append([]KeyMove{}, moves...), moveKeys && len(moves) > 0
	return p, nil
}

// apply replaces the stored configuration with the plan's. The caller is
// inside Host.Mutate; c is the configuration planned on, which must still
// be the one served.
func (b *Service[S]) apply(ctx context.Context, c Config[S], p *importPlan[S]) error {
	var settings json.RawMessage
	if p.settings != nil {
		var err error
		if settings, err = json.Marshal(*p.settings); err != nil {
			return err
		}
	}
	removed, err := b.db.Replace(ctx, p.patches, settings)
	if err != nil {
		return err
	}
	for _, id := range removed {
		b.h.Removed(id)
	}
	// docs/BEHAVIOUR.md#endpoints: a new key or URL is a new upstream; its
	// old failures say nothing about it.
	for _, e := range c.Endpoints {
		fields := p.report.Fields[e.Name]
		if slices.Contains(fields, "api_key") || slices.Contains(fields, "base_url") {
			b.h.Renewed(e)
		}
	}
	return nil
}

// ImportPreview answers POST /api/import/preview: what the import of the
// body's file would change. Nothing is changed.
func (b *Service[S]) ImportPreview(w http.ResponseWriter, r *http.Request) error {
	f, err := b.requestFile(r)
	if err != nil {
		return err
	}
	p, err := b.plan(b.h.Config(), f, moveKeysOf(r))
	if err != nil {
		return err
	}
	b.h.WriteJSON(w, http.StatusOK, p.report)
	return nil
}

// Import answers POST /api/import: the configuration becomes the body's
// file's, in one transaction, and the answer says what changed.
func (b *Service[S]) Import(w http.ResponseWriter, r *http.Request) error {
	f, err := b.requestFile(r)
	if err != nil {
		return err
	}
	var p *importPlan[S]
	err = b.h.Mutate(r.Context(), func(ctx context.Context) error {
		// Planned inside the write lock: what changes depends on what is
		// stored now.
		c := b.h.Config()
		var err error
		if p, err = b.plan(c, f, moveKeysOf(r)); err != nil {
			return err
		}
		return b.apply(ctx, c, p)
	})
	if err != nil {
		return err
	}
	if len(p.report.Settings) > 0 {
		b.h.SettingsChanged()
	}
	b.log.Info().Int("added", len(p.report.Added)).Int("changed", len(p.report.Changed)).
		Int("removed", len(p.report.Removed)).Bool("settings", len(p.report.Settings) > 0).Msg("configuration imported")
	b.h.WriteJSON(w, http.StatusOK, p.report)
	return nil
}
