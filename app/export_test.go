package app

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/app/backup"
)

func TestExportImportRoundTrip(t *testing.T) {
	h := newHarness(t)
	h.mustCreate(`{"name":"one","base_url":"https://a.example","protocol":"anthropic","api_key":"k1-abcdefghijkl","models":["claude-*"]}`)
	exp := h.exportWithKeys()
	other := newHarness(t)
	if r := other.do("POST", "/api/import", string(exp)); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	var list []EndpointReply
	other.do("GET", "/api/endpoints", "").decode(t, &list)
	if len(list) != 1 || list[0].Name != "one" || !list[0].HasKey || !slices.Equal(list[0].Models, []string{"claude-*"}) {
		t.Errorf("imported = %+v", list)
	}
	bad := `{"version":1,"endpoints":[{"name":"ok","base_url":"https://a.example","protocol":"anthropic"},{"name":"bad name","base_url":"https://a.example","protocol":"anthropic"}]}`
	if r := other.do("POST", "/api/import", bad); r.status != 422 {
		t.Errorf("bad import: got %d, want 422", r.status)
	}
	other.do("GET", "/api/endpoints", "").decode(t, &list)
	if len(list) != 1 {
		t.Errorf("a rejected import changed the endpoints: %d now", len(list))
	}
}

const exportToken = "client-token-0123456789abcdef"

// exportSource is a harness with two endpoints with keys (one in the fast
// queue), a client token and a price row of the user's.
func exportSource(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t)
	h.mustCreate(`{"name":"one","base_url":"https://a.example","protocol":"anthropic","api_key":"` + secretKey + `","fast":true}`)
	h.mustCreate(`{"name":"two","base_url":"https://b.example","protocol":"openai-chat","api_key":"` + secretKey + `-two"}`)
	if r := h.do("PUT", "/api/settings", `{"client_token":"`+exportToken+`","strategy":"priority"}`); r.status != 200 {
		t.Fatalf("settings: %d %s", r.status, r.body)
	}
	if r := h.do("PUT", "/api/prices", `{"rows":[{"model":"my-model","input":1,"output":2}]}`); r.status != 200 {
		t.Fatalf("prices: %d %s", r.status, r.body)
	}
	return h
}

// Without keys, no byte of a key or of the client token leaves: not in
// POST /api/export's file, not in GET /api/export.
func TestExportWithoutKeys(t *testing.T) {
	h := exportSource(t)
	for _, r := range []resp{h.do("POST", "/api/export", `{"keys":false}`), h.do("POST", "/api/export", `{}`), h.do("GET", "/api/export", "")} {
		if r.status != 200 {
			t.Fatalf("export: %d %s", r.status, r.body)
		}
		for _, secret := range []string{secretKey, "0123456789abcdef", exportToken, "secret-0123"} {
			if bytes.Contains(r.body, []byte(secret)) {
				t.Errorf("export without keys holds %q:\n%s", secret, r.body)
			}
		}
		var doc backup.Doc[Settings]
		r.decode(t, &doc)
		if doc.Version != backup.Schema || doc.Keys || doc.ExportedAt.IsZero() || len(doc.Endpoints) != 2 ||
			!*doc.Endpoints[0].Fast || len(doc.Settings.Prices) != 1 || doc.Settings.Strategy != "priority" {
			t.Errorf("export = %s", r.body)
		}
	}
	r := h.do("POST", "/api/export", `{"keys":false}`)
	if ct, cd := r.header.Get("Content-Type"), r.header.Get("Content-Disposition"); ct != "application/json" ||
		!strings.HasPrefix(cd, `attachment; filename="ccmesh-backup-`) || !strings.HasSuffix(cd, `.json"`) {
		t.Errorf("plain file headers: %q %q", ct, cd)
	}
}

func TestExportWithKeysIsEncrypted(t *testing.T) {
	h := exportSource(t)
	for _, tc := range []struct {
		body, code string
	}{
		{`{"keys":true}`, backup.CodePassphraseRequired},
		{`{"keys":true,"passphrase":""}`, backup.CodePassphraseRequired},
		{`{"keys":true,"passphrase":"short"}`, "short_passphrase"},
	} {
		r := h.do("POST", "/api/export", tc.body)
		if got := r.apiErr(t); r.status != 422 || got.Code != tc.code || got.Field != "passphrase" {
			t.Errorf("export %s: %d %s, want 422 %s at passphrase", tc.body, r.status, r.body, tc.code)
		}
	}
	if r := h.do("POST", "/api/export", `{"keys":true,"pasphrase":"x"}`); r.status != 400 || r.errCode() != "unknown_field" {
		t.Errorf("misspelled field: %d %s", r.status, r.body)
	}

	r := h.do("POST", "/api/export", `{"keys":true,"passphrase":"correct horse battery"}`)
	if r.status != 200 {
		t.Fatalf("export: %d %s", r.status, r.body)
	}
	if !bytes.HasPrefix(r.body, []byte("age-encryption.org/v1\n-> scrypt ")) {
		t.Errorf("an export with keys is not an age scrypt file: %.60q", r.body)
	}
	for _, secret := range []string{secretKey, exportToken, `"endpoints"`} {
		if bytes.Contains(r.body, []byte(secret)) {
			t.Errorf("the encrypted file shows %q", secret)
		}
	}
	if ct, cd := r.header.Get("Content-Type"), r.header.Get("Content-Disposition"); ct != "application/octet-stream" || !strings.HasSuffix(cd, `.age"`) {
		t.Errorf("encrypted file headers: %q %q", ct, cd)
	}
	plain, encrypted, err := backup.Open(t.Context(), r.body, "correct horse battery", maxAdminBody)
	if err != nil || !encrypted {
		t.Fatalf("open the file: %v", err)
	}
	var doc backup.Doc[Settings]
	if err := json.Unmarshal(plain, &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Keys || doc.Settings.ClientToken != exportToken || *doc.Endpoints[1].APIKey != secretKey+"-two" {
		t.Errorf("the decrypted file lacks the keys: %s", plain)
	}
}

// The configuration's hash names what it holds, not when it was written.
func TestConfigHash(t *testing.T) {
	h := exportSource(t)
	st := h.app.Snapshot()
	before := backup.ConfigHash(backupConfig(st))
	var doc backup.Doc[Settings]
	if err := json.Unmarshal(h.exportWithKeys(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Hash() != before {
		t.Errorf("the exported document's hash differs from the state's")
	}
	h.do("PUT", "/api/settings", `{"strategy":"sticky"}`)
	if after := backup.ConfigHash(backupConfig(h.app.Snapshot())); after == before {
		t.Errorf("a changed setting left the hash as it was")
	}
}

// exportWithKeys is h's export file with keys, decrypted: what a backup
// carries.
func (h *harness) exportWithKeys() []byte {
	h.t.Helper()
	const pass = "test export passphrase"
	r := h.do("POST", "/api/export", `{"keys":true,"passphrase":"`+pass+`"}`)
	if r.status != 200 {
		h.t.Fatalf("export with keys: %d %s", r.status, r.body)
	}
	plain, _, err := backup.Open(h.t.Context(), r.body, pass, maxAdminBody)
	if err != nil {
		h.t.Fatalf("open the export: %v", err)
	}
	return plain
}

// GET /api/export never carries keys: asked for them, it says how to get
// them encrypted, and shows none.
func TestGetExportRefusesKeys(t *testing.T) {
	h := exportSource(t)
	for _, q := range []string{"?keys=1", "?keys=true", "?keys=yes"} {
		r := h.do("GET", "/api/export"+q, "")
		got := r.apiErr(t)
		if r.status != 400 || got.Code != "keys_need_passphrase" || got.Field != "keys" || !strings.Contains(got.Message, "only encrypted") {
			t.Errorf("GET /api/export%s: %d %s, want 400 keys_need_passphrase", q, r.status, r.body)
		}
		if bytes.Contains(r.body, []byte(secretKey)) || bytes.Contains(r.body, []byte(exportToken)) {
			t.Errorf("GET /api/export%s shows a key or the token", q)
		}
	}
	for _, q := range []string{"", "?keys=0", "?keys=false"} {
		if r := h.do("GET", "/api/export"+q, ""); r.status != 200 || bytes.Contains(r.body, []byte(secretKey)) {
			t.Errorf("GET /api/export%s: %d, want 200 without keys", q, r.status)
		}
	}
}

// exportOf is st's export document (backup.DocOf).
func exportOf(st *State, keys bool, now time.Time) backup.Doc[Settings] {
	return backup.DocOf(backupConfig(st), keys, now)
}
