package backup

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ccmesh/ccmesh/app/apierr"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// The export file (docs/BEHAVIOUR.md#backup-and-sync): the whole
// configuration — endpoints in list order with their fast-queue places,
// settings with the user's price rows — as JSON, and with keys only
// encrypted with a passphrase (age, scrypt). import.go reads it back;
// sync.go pushes and pulls it.

// Schema is the version of the export document this build writes, and
// the newest it reads. 2 added exported_at and keys.
const Schema = 2

// Doc is the export file: GET /api/export, POST /api/export. S is the
// app's settings document.
type Doc[S any] struct {
	Version    int       `json:"version"`
	ExportedAt time.Time `json:"exported_at"`
	// Keys says whether the endpoints' keys and the client token are in
	// the file; without them, an import keeps the stored ones.
	Keys      bool                  `json:"keys"`
	Settings  *S                    `json:"settings,omitempty"`
	Endpoints []store.EndpointPatch `json:"endpoints"`
}

// ExportRequest is the body of POST /api/export.
type ExportRequest struct {
	Keys bool `json:"keys"`
	// Passphrase encrypts the file; required with keys.
	Passphrase string `json:"passphrase"`
}

// DocOf is the export document of c, with or without keys.
func DocOf[S Settings[S]](c Config[S], keys bool, now time.Time) Doc[S] {
	token := c.Settings.Token()
	if !keys {
		token = ""
	}
	// Start at login belongs to this machine, not to the configuration a
	// file carries to another (docs/BEHAVIOUR.md#start-at-login).
	s := c.Settings.Local(token, false)
	doc := Doc[S]{Version: Schema, ExportedAt: now, Keys: keys, Settings: &s,
		Endpoints: make([]store.EndpointPatch, 0, len(c.Endpoints))}
	for _, e := range c.Endpoints {
		p := store.PatchOf(e)
		if !keys {
			p.APIKey, p.Keys = nil, nil
			// A proxy's password is a key too: without keys the file
			// carries no proxy_url that has one, and an import keeps the
			// stored one.
			if proxy.ProxyPassword(e.ProxyURL) != "" {
				p.ProxyURL = nil
			}
		}
		doc.Endpoints = append(doc.Endpoints, p)
	}
	return doc
}

// FileBytes is doc as the file holds it: indented JSON.
func (doc Doc[S]) FileBytes() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode the export: %w", err)
	}
	return b.Bytes(), nil
}

// Hash names the configuration doc holds, whenever and however it was
// written: two documents with the same endpoints and settings have the
// same hash (the sync's "changed since the last sync", sync.go).
func (doc Doc[S]) Hash() string {
	doc.Version, doc.ExportedAt, doc.Keys = Schema, time.Time{}, true
	b, err := json.Marshal(doc)
	if err != nil { // settings and patches always encode
		panic(fmt.Sprintf("encode the configuration: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ConfigHash is the hash of c's configuration, keys included.
func ConfigHash[S Settings[S]](c Config[S]) string { return DocOf(c, true, time.Time{}).Hash() }

// Export answers GET /api/export: the plain document, without keys. Keys
// leave only encrypted (POST /api/export with a passphrase): ?keys= asking
// for them here is refused rather than ignored, so that a script that
// relied on it learns why its file has no keys.
func (b *Service[S]) Export(w http.ResponseWriter, r *http.Request) error {
	if k := r.URL.Query().Get("keys"); k != "" && k != "0" && k != "false" {
		return apierr.BadRequest("keys_need_passphrase", "keys", "keys and the client token leave ccmesh only encrypted: "+
			`POST /api/export {"keys":true,"passphrase":"…"} writes them in a file encrypted with the passphrase`)
	}
	w.Header().Set("Content-Disposition", `attachment; filename="ccmesh-export.json"`)
	b.h.WriteJSON(w, http.StatusOK, DocOf(b.h.Config(), false, time.Now().UTC()))
	return nil
}

// ExportFile answers POST /api/export: the file to keep, plain JSON
// without keys, or encrypted with the passphrase (which keys require).
func (b *Service[S]) ExportFile(w http.ResponseWriter, r *http.Request) error {
	var req ExportRequest
	if err := b.decode(r, &req); err != nil {
		return err
	}
	if req.Keys && req.Passphrase == "" {
		return &apierr.Error{Status: http.StatusUnprocessableEntity, Code: CodePassphraseRequired, Field: "passphrase",
			Message: "a file with keys is encrypted: give a passphrase to encrypt it with (you will need it to import the file)"}
	}
	if req.Passphrase != "" {
		if err := checkNewPassphrase("passphrase", req.Passphrase); err != nil {
			return err
		}
	}
	now := time.Now().UTC()
	body, err := DocOf(b.h.Config(), req.Keys, now).FileBytes()
	if err != nil {
		return err
	}
	name, ctype := "ccmesh-backup-"+now.Format("20060102-150405"), "application/json"
	if req.Passphrase != "" {
		if body, err = Seal(r.Context(), body, req.Passphrase); err != nil {
			return err
		}
		name, ctype = name+".age", "application/octet-stream"
	} else {
		name += ".json"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(body) // the client may be gone; nothing to do about it
	return nil
}

// checkNewPassphrase checks a passphrase that will encrypt files.
func checkNewPassphrase(field, p string) *apierr.Error {
	if n := len([]rune(p)); n < MinPassphrase {
		return &apierr.Error{Status: http.StatusUnprocessableEntity, Code: "short_passphrase", Field: field,
			Message: fmt.Sprintf("the passphrase must be at least %d characters long, not %d", MinPassphrase, n)}
	}
	return nil
}

// decode reads r's body (Host.ReadBody) and decodes it into v as every
// admin route does (apierr.Decode).
func (b *Service[S]) decode(r *http.Request, v any) error {
	body, err := b.h.ReadBody(r)
	if err != nil {
		return err
	}
	return apierr.Decode(body, v)
}
