package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"

	"github.com/ccmesh/ccmesh/store"
)

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
	codePassphraseRequired = "passphrase_required"
	codeBadPassphrase      = "bad_passphrase"
	codeCorruptFile        = "corrupt_file"
	codeNewerSchema        = "newer_schema"
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

// ImportReport is what an import changes (POST /api/import/preview) or
// changed (POST /api/import).
type ImportReport struct {
	// Replace is always true: an import makes the configuration the file's,
	// so the endpoints it does not name are removed.
	Replace    bool       `json:"replace"`
	Schema     int        `json:"schema"`      // the file's version
	ExportedAt *time.Time `json:"exported_at"` // when the file was written; null before schema 2
	Encrypted  bool       `json:"encrypted"`
	// Keys says whether the file carries keys and the client token;
	// without them the stored ones are kept.
	Keys bool `json:"keys"`
	// Endpoint names: new, changed, removed.
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Removed []string `json:"removed"`
	// Fields names, for each changed endpoint, the fields that change.
	Fields map[string][]string `json:"fields"`
	// Settings names the settings that change ([] when none).
	Settings  []string `json:"settings"`
	Endpoints int      `json:"endpoints"` // how many endpoints the file has
	// KeyMoves names the endpoints whose stored key a file without keys
	// would send to another host: base_url's scheme, host or port changes
	// while the key stays ([] when none).
	KeyMoves []KeyMove `json:"key_moves"`
	// KeysMoved says whether those keys go along (the request's
	// ?move_keys=1); else the import drops them, and those endpoints have
	// no key after it.
	KeysMoved bool `json:"keys_moved"`
}

// KeyMove is a stored key that an import would point at another host.
type KeyMove struct {
	Name string `json:"name"`
	From string `json:"from"` // the stored base_url's scheme://host[:port]
	To   string `json:"to"`   // the file's
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

// openFile returns the plain bytes of a file: body itself unless it is an
// age file (binary or armored), which must open with passphrase. Files
// open one at a time (see scryptSlot).
func openFile(ctx context.Context, body []byte, passphrase string) (plain []byte, encrypted bool, err error) {
	var src io.Reader
	switch trimmed := bytes.TrimLeft(body, " \t\r\n"); {
	case bytes.HasPrefix(body, []byte("age-encryption.org/")):
		src = bytes.NewReader(body)
	case bytes.HasPrefix(trimmed, []byte(armor.Header)):
		src = armor.NewReader(bytes.NewReader(trimmed))
	default:
		return body, false, nil
	}
	if passphrase == "" {
		return nil, true, &apiError{Status: http.StatusUnprocessableEntity, Code: codePassphraseRequired, Field: "passphrase",
			Message: "this file is encrypted: give the passphrase it was exported with"}
	}
	id, err := age.NewScryptIdentity(passphrase)
	if err != nil {
		return nil, true, err
	}
	id.SetMaxWorkFactor(maxScryptWorkFactor)
	release, err := takeScryptSlot(ctx)
	if err != nil {
		return nil, true, err
	}
	r, err := age.Decrypt(src, id)
	if err == nil {
		plain, err = io.ReadAll(io.LimitReader(r, maxAdminBody+1))
		if err == nil && len(plain) > maxAdminBody {
			err = fmt.Errorf("it holds more than %d bytes", maxAdminBody)
		}
	}
	release()
	var nomatch *age.NoIdentityMatchError
	switch {
	case err == nil:
		return plain, true, nil
	case errors.As(err, &nomatch) && !slices.Contains(nomatch.StanzaTypes, "scrypt"):
		return nil, true, &apiError{Status: http.StatusUnprocessableEntity, Code: codeBadPassphrase, Field: "passphrase",
			Message: "this age file is encrypted to a key, not a passphrase: ccmesh cannot open it"}
	case errors.As(err, &nomatch):
		return nil, true, &apiError{Status: http.StatusUnprocessableEntity, Code: codeBadPassphrase, Field: "passphrase",
			Message: "wrong passphrase: this file does not open with it; nothing was changed"}
	default:
		return nil, true, &apiError{Status: http.StatusUnprocessableEntity, Code: codeCorruptFile,
			Message: fmt.Sprintf("the file is damaged or incomplete, so nothing was changed (%v)", err)}
	}
}

// parseBackup decodes a plain export file, refusing one from a newer
// schema before its fields are looked at.
func parseBackup(plain []byte) (*backupFile, error) {
	var head struct {
		Version any `json:"version"`
	}
	if json.Unmarshal(plain, &head) == nil {
		if v, ok := head.Version.(float64); ok && v > exportSchema {
			return nil, &apiError{Status: http.StatusUnprocessableEntity, Code: codeNewerSchema, Field: "version",
				Message: fmt.Sprintf("this file was written by a newer ccmesh (schema %v); this one reads up to %d: "+
					"update ccmesh to import it", v, exportSchema)}
		}
	}
	f := &backupFile{}
	if err := decodeBody(plain, &f.doc); err != nil {
		return nil, err
	}
	if f.doc.Version < 1 {
		return nil, errBadRequest("bad_version", "version", "this is not a ccmesh export (version %d; want 1 to %d)",
			f.doc.Version, exportSchema)
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
	if err := validateImport(eps, st.Endpoints); err != nil {
		return nil, err
	}
	p := &importPlan{patches: make([]store.EndpointPatch, len(eps))}
	for i, in := range eps {
		if in.Name == nil {
			return nil, rejected(store.CodeRequired, fmt.Sprintf("endpoints[%d].name", i),
				"endpoint %d: name is required: an import matches endpoints by name", i+1)
		}
		var err error
		if p.patches[i], err = in.patch(); err != nil {
			return nil, err
		}
	}
	var moves []KeyMove
	if !f.keys {
		moves = keyMoves(st.Endpoints, p.patches, moveKeys)
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
		if _, err := validateRules(s.Rules, importTargets(st.Endpoints, p.patches)); err != nil {
			return nil, err
		}
		p.settings = &s
	}
	p.report = diffImport(st, p.patches, p.settings)
	p.report.Schema, p.report.ExportedAt, p.report.Encrypted, p.report.Keys = f.doc.Version, f.doc.ExportedAt, f.encrypted, f.keys
	p.report.KeyMoves, p.report.KeysMoved = append([]KeyMove{}, moves...), moveKeys && len(moves) > 0
	return p, nil
}

// importTargets are the names and tags a rule may name after an import:
// the endpoints stored now, with the import's laid over them by name.
func importTargets(stored []store.Endpoint, patches []store.EndpointPatch) ruleTargets {
	t := targetsOf(stored)
	for _, p := range patches {
		if p.Name != nil {
			t.names[*p.Name] = true
		}
		if p.Tags != nil {
			for _, tag := range *p.Tags {
				t.tags[tag] = true
			}
		}
	}
	return t
}

// keyMoves finds the patches of a file without keys that keep a stored
// key (they set none) while moving its endpoint to another host: the key
// would go where its owner never sent it. Unless moveKeys, such a patch
// gets an empty key, so the endpoint keeps none.
func keyMoves(stored []store.Endpoint, patches []store.EndpointPatch, moveKeys bool) []KeyMove {
	byName := make(map[string]store.Endpoint, len(stored))
	for _, e := range stored {
		byName[e.Name] = e
	}
	var moves []KeyMove
	for i, p := range patches {
		e, ok := byName[*p.Name] // planImport requires a name
		if !ok || e.APIKey == "" || p.APIKey != nil || p.Keys != nil || p.BaseURL == nil {
			continue
		}
		from, to := urlOrigin(e.BaseURL), urlOrigin(*p.BaseURL)
		if from == to {
			continue
		}
		moves = append(moves, KeyMove{Name: e.Name, From: from, To: to})
		if !moveKeys {
			patches[i].APIKey = new("")
		}
	}
	return moves
}

// urlOrigin is where a base URL sends requests: scheme://host[:port], in
// lower case, without the scheme's own port. A URL that does not parse is
// its own origin (the store refuses it anyway).
func urlOrigin(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return raw
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host
}

// diffImport says what replacing st's configuration with patches and
// settings (nil: kept) changes.
func diffImport(st *State, patches []store.EndpointPatch, settings *Settings) ImportReport {
	rep := ImportReport{Replace: true, Added: []string{}, Changed: []string{}, Removed: []string{},
		Fields: map[string][]string{}, Settings: []string{}, Endpoints: len(patches)}
	stored := make(map[string]store.Endpoint, len(st.Endpoints))
	for _, e := range st.Endpoints {
		stored[e.Name] = e
	}
	named := make(map[string]bool, len(patches))
	for _, p := range patches {
		name := *p.Name // validateImport requires one
		named[name] = true
		e, ok := stored[name]
		if !ok {
			rep.Added = append(rep.Added, name)
			continue
		}
		if fields := patchChanges(patchOf(e), p); len(fields) > 0 {
			rep.Changed = append(rep.Changed, name)
			rep.Fields[name] = fields
		}
	}
	for _, e := range st.Endpoints {
		if !named[e.Name] {
			rep.Removed = append(rep.Removed, e.Name)
		}
	}
	if settings != nil {
		rep.Settings = settingsChanges(st.Settings, *settings)
	}
	return rep
}

// patchChanges names the JSON fields that p sets to a value other than
// the one in stored (a patch of every field).
func patchChanges(stored, p store.EndpointPatch) []string {
	return changedFields(stored, p, true)
}

// settingsChanges names the settings whose values differ, in the order
// the settings document has them.
func settingsChanges(from, to Settings) []string {
	return append([]string{}, changedFields(from, to, false)...)
}

// changedFields names, in field order, the JSON fields of two values of
// one struct type that encode differently; with skipNil, the fields to
// leaves nil (a patch's "not given") are not compared.
func changedFields[T any](from, to T, skipNil bool) []string {
	var out []string
	fv, tv := reflect.ValueOf(from), reflect.ValueOf(to)
	for i := range fv.NumField() {
		if skipNil && tv.Field(i).IsNil() {
			continue
		}
		if !sameJSON(fv.Field(i).Interface(), tv.Field(i).Interface()) {
			name, _, _ := strings.Cut(fv.Type().Field(i).Tag.Get("json"), ",")
			out = append(out, name)
		}
	}
	return out
}

// sameJSON reports whether a and b encode alike, an empty list or object
// being the same as none.
func sameJSON(a, b any) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	if erra != nil || errb != nil {
		return false
	}
	empty := func(j []byte) bool {
		s := string(j)
		return s == "null" || s == "[]" || s == "{}"
	}
	return bytes.Equal(ja, jb) || empty(ja) && empty(jb)
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
