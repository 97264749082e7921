package backup

import (
	"bytes"
	"encoding/json"
	"net"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/ccmesh/ccmesh/store"
)

// What an import changes (docs/BEHAVIOUR.md#backup-and-sync): import.go
// validates the file and applies it; the report of what it changes is
// worked out here, from the stored configuration and the file's.

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

// KeyMoves finds the patches of a file without keys that keep a stored
// key (they set none) while moving its endpoint to another host: the key
// would go where its owner never sent it. Unless moveKeys, such a patch
// gets an empty key, so the endpoint keeps none.
func KeyMoves(stored []store.Endpoint, patches []store.EndpointPatch, moveKeys bool) []KeyMove {
	byName := make(map[string]store.Endpoint, len(stored))
	for _, e := range stored {
		byName[e.Name] = e
	}
	var moves []KeyMove
	for i, p := range patches {
		e, ok := byName[*p.Name] // the caller requires a name
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

// Diff says what replacing the stored endpoints and settings
// (storedSettings, a struct) with patches and settings (nil: kept)
// changes. Every patch names its endpoint.
func Diff[S any](stored []store.Endpoint, storedSettings S, patches []store.EndpointPatch, settings *S) ImportReport {
	rep := ImportReport{Replace: true, Added: []string{}, Changed: []string{}, Removed: []string{},
		Fields: map[string][]string{}, Settings: []string{}, Endpoints: len(patches)}
	byName := make(map[string]store.Endpoint, len(stored))
	for _, e := range stored {
		byName[e.Name] = e
	}
	named := make(map[string]bool, len(patches))
	for _, p := range patches {
		name := *p.Name // the caller requires one
		named[name] = true
		e, ok := byName[name]
		if !ok {
			rep.Added = append(rep.Added, name)
			continue
		}
		if fields := patchChanges(store.PatchOf(e), p); len(fields) > 0 {
			rep.Changed = append(rep.Changed, name)
			rep.Fields[name] = fields
		}
	}
	for _, e := range stored {
		if !named[e.Name] {
			rep.Removed = append(rep.Removed, e.Name)
		}
	}
	if settings != nil {
		rep.Settings = settingsChanges(storedSettings, *settings)
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
func settingsChanges[S any](from, to S) []string {
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
		if !SameJSON(fv.Field(i).Interface(), tv.Field(i).Interface()) {
			name, _, _ := strings.Cut(fv.Type().Field(i).Tag.Get("json"), ",")
			out = append(out, name)
		}
	}
	return out
}

// SameJSON reports whether a and b encode alike, an empty list or object
// being the same as none.
func SameJSON(a, b any) bool {
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
