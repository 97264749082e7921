package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/app/backup"
	"github.com/ccmesh/ccmesh/store"
)

func init() {
	// Tests encrypt and decrypt often, under -race: age's default work
	// factor takes seconds there. The format is the same at any factor.
	backup.ScryptWorkFactor = 10
}

// withPassphrase sets the import routes' passphrase header as the UI does.
func withPassphrase(p string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set(backup.PassphraseHeader, url.PathEscape(p)) }
}

func (h *harness) endpointNames() []string {
	h.t.Helper()
	var list []EndpointReply
	h.do("GET", "/api/endpoints", "").decode(h.t, &list)
	names := []string{}
	for _, e := range list {
		names = append(names, e.Name)
	}
	return names
}

// An encrypted export with keys restores a fresh data dir whole: a
// request through the imported endpoint reaches the upstream with its key.
func TestEncryptedBackupRestores(t *testing.T) {
	up, keys := fakeAnthropic(t)
	src := newHarness(t)
	src.mustCreate(`{"name":"one","base_url":"` + up.URL + `","protocol":"anthropic","api_key":"` + secretKey + `"}`)
	if r := src.do("PUT", "/api/settings", `{"client_token":"`+exportToken+`"}`); r.status != 200 {
		t.Fatalf("settings: %d %s", r.status, r.body)
	}
	const pass = "correct horse battery"
	file := src.do("POST", "/api/export", `{"keys":true,"passphrase":"`+pass+`"}`)
	if file.status != 200 {
		t.Fatalf("export: %d %s", file.status, file.body)
	}

	dst := newHarness(t)
	for _, tc := range []struct {
		name   string
		mod    []func(*http.Request)
		status int
		code   string
	}{
		{"no passphrase", nil, 422, backup.CodePassphraseRequired},
		{"wrong passphrase", []func(*http.Request){withPassphrase("wrong horse battery")}, 422, backup.CodeBadPassphrase},
		{"a header that is not percent-encoding", []func(*http.Request){func(r *http.Request) { r.Header.Set(backup.PassphraseHeader, "100%") }}, 400, "bad_passphrase_header"},
	} {
		for _, path := range []string{"/api/import/preview", "/api/import"} {
			r := dst.do("POST", path, string(file.body), tc.mod...)
			if r.status != tc.status || r.errCode() != tc.code {
				t.Errorf("%s: %s: %d %s, want %d %s", tc.name, path, r.status, r.body, tc.status, tc.code)
			}
		}
	}
	if r := dst.do("POST", "/api/import", string(file.body), withPassphrase("wrong horse battery")); !strings.Contains(string(r.body), "wrong passphrase") {
		t.Errorf("wrong passphrase does not say so: %s", r.body)
	}
	if got := dst.endpointNames(); len(got) != 0 {
		t.Fatalf("refused imports left endpoints: %v", got)
	}

	r := dst.do("POST", "/api/import", string(file.body), withPassphrase(pass))
	var rep backup.ImportReport
	r.decode(t, &rep)
	if r.status != 200 || !rep.Encrypted || !rep.Keys || !slices.Equal(rep.Added, []string{"one"}) || rep.Schema != backup.Schema {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	if got := dst.app.Snapshot().Settings.ClientToken; got != exportToken {
		t.Errorf("client token after the import = %q", got)
	}
	logged := dst.watchLog()
	req, _ := http.NewRequest("POST", dst.srv.URL+"/v1/messages",
		strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-api-key", exportToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	logged()
	if res.StatusCode != 200 || len(*keys) != 1 || (*keys)[0] != secretKey {
		t.Errorf("request through the imported endpoint: %d %s; upstream saw keys %q", res.StatusCode, body, *keys)
	}
}

// A passphrase is any text: the header carries it percent-encoded.
func TestImportPassphraseNotASCII(t *testing.T) {
	src := exportSource(t)
	const pass = "正确的马 电池 订书钉"
	file := src.do("POST", "/api/export", `{"keys":true,"passphrase":"`+pass+`"}`)
	dst := newHarness(t)
	if r := dst.do("POST", "/api/import/preview", string(file.body), withPassphrase(pass)); r.status != 200 {
		t.Errorf("preview: %d %s", r.status, r.body)
	}
}

// The preview says what the import changes and changes nothing; the
// import then does exactly that, replacing the configuration.
func TestImportPreview(t *testing.T) {
	h := newHarness(t)
	h.mustCreate(`{"name":"x","base_url":"https://x.example","protocol":"anthropic","api_key":"` + secretKey + `"}`)
	h.mustCreate(`{"name":"y","base_url":"https://y.example","protocol":"anthropic"}`)
	var file backup.Doc[Settings]
	h.do("GET", "/api/export", "").decode(t, &file)
	// The file: x with another path and in the fast queue, y as it is, a
	// new w; no z (made after the export); another strategy.
	url2, fast := "https://x.example/v2", true
	file.Endpoints[0].BaseURL, file.Endpoints[0].Fast = &url2, &fast
	w := storedEndpoint("w", "https://w.example", "openai-chat")
	w.SortOrder = 2
	file.Endpoints = append(file.Endpoints, store.PatchOf(w))
	file.Settings.Strategy = "round-robin"
	body, _ := json.Marshal(file)
	h.mustCreate(`{"name":"z","base_url":"https://z.example","protocol":"anthropic"}`)

	beforeEndpoints := h.do("GET", "/api/endpoints", "").body
	beforeSettings := h.do("GET", "/api/settings", "").body
	r := h.do("POST", "/api/import/preview", string(body))
	var rep backup.ImportReport
	r.decode(t, &rep)
	want := backup.ImportReport{Replace: true, Schema: backup.Schema, ExportedAt: rep.ExportedAt, Added: []string{"w"}, Changed: []string{"x"},
		Removed: []string{"z"}, Fields: map[string][]string{"x": {"base_url", "fast"}}, Settings: []string{"strategy"}, Endpoints: 3,
		KeyMoves: []backup.KeyMove{}}
	if r.status != 200 || !backup.SameJSON(rep, want) || rep.ExportedAt == nil {
		t.Errorf("preview: %d %s\nwant %+v", r.status, r.body, want)
	}
	if after := h.do("GET", "/api/endpoints", "").body; !bytes.Equal(after, beforeEndpoints) {
		t.Errorf("the preview changed the endpoints:\n%s\n%s", beforeEndpoints, after)
	}
	if after := h.do("GET", "/api/settings", "").body; !bytes.Equal(after, beforeSettings) {
		t.Errorf("the preview changed the settings")
	}

	r = h.do("POST", "/api/import", string(body))
	var done backup.ImportReport
	r.decode(t, &done)
	if r.status != 200 || !backup.SameJSON(done, rep) {
		t.Errorf("import answered %d %s, want what the preview said", r.status, r.body)
	}
	if got := h.endpointNames(); !slices.Equal(got, []string{"x", "y", "w"}) {
		t.Errorf("endpoints after the import = %v, want [x y w]", got)
	}
	st := h.app.Snapshot()
	if x := st.Endpoints[0]; x.BaseURL != url2 || !x.Fast || x.APIKey != secretKey {
		t.Errorf("x after a keyless import = %+v, want the new URL, fast, and its key kept", x)
	}
	if st.Settings.Strategy != "round-robin" {
		t.Errorf("strategy = %q", st.Settings.Strategy)
	}
	// The same file again changes nothing.
	h.do("POST", "/api/import/preview", string(body)).decode(t, &rep)
	if len(rep.Added)+len(rep.Changed)+len(rep.Removed)+len(rep.Settings) != 0 {
		t.Errorf("preview of what is already there: %+v", rep)
	}
}

// storedEndpoint is an endpoint as stored, for a file's patch.
func storedEndpoint(name, base, proto string) (e store.Endpoint) {
	e.Name, e.BaseURL, e.Protocol, e.Auth = name, base, proto, "auto"
	e.Enabled, e.PriceMultiplier, e.HedgeAfterMs = true, 1, -1
	e.Models, e.ModelMap, e.BreakerOverrides = []string{}, map[string]string{}, json.RawMessage(`{}`)
	return e
}

// A keyless file keeps the stored keys and client token.
func TestImportWithoutKeysKeepsThem(t *testing.T) {
	h := exportSource(t)
	file := h.do("POST", "/api/export", `{}`)
	r := h.do("POST", "/api/import/preview", string(file.body))
	var rep backup.ImportReport
	r.decode(t, &rep)
	if r.status != 200 || rep.Keys || len(rep.Changed)+len(rep.Settings) != 0 {
		t.Errorf("preview of the keyless export of the same: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/api/import", string(file.body)); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	st := h.app.Snapshot()
	if st.Settings.ClientToken != exportToken || st.Endpoints[0].APIKey != secretKey || st.Endpoints[1].APIKey != secretKey+"-two" {
		t.Errorf("a keyless import dropped keys or the token: %q %q %q", st.Settings.ClientToken, st.Endpoints[0].APIKey, st.Endpoints[1].APIKey)
	}
}

// A file from a newer ccmesh is refused before its fields are read, and so
// is a damaged encrypted one; neither changes anything.
func TestImportRefusesNewerAndDamaged(t *testing.T) {
	h := exportSource(t)
	before := h.do("GET", "/api/endpoints", "").body
	newer := `{"version":3,"endpoints":[],"something_new":{}}`
	for _, path := range []string{"/api/import/preview", "/api/import"} {
		r := h.do("POST", path, newer)
		got := r.apiErr(t)
		if r.status != 422 || got.Code != backup.CodeNewerSchema ||
			!strings.Contains(got.Message, "written by a newer ccmesh (schema 3); this one reads up to 2") {
			t.Errorf("%s newer schema: %d %s", path, r.status, r.body)
		}
	}
	const pass = "correct horse battery"
	sealed, err := backup.Seal(t.Context(), []byte(newer), pass)
	if err != nil {
		t.Fatal(err)
	}
	if r := h.do("POST", "/api/import", string(sealed), withPassphrase(pass)); r.status != 422 || r.errCode() != backup.CodeNewerSchema {
		t.Errorf("encrypted newer schema: %d %s", r.status, r.body)
	}
	file := h.do("POST", "/api/export", `{"keys":true,"passphrase":"`+pass+`"}`).body
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"cut short", file[:len(file)-20]},
		{"cut in the header", file[:40]},
		{"a byte changed", append(append([]byte{}, file[:len(file)-5]...), file[len(file)-5]^1, 0, 0, 0, 0)[:len(file)]},
	} {
		r := h.do("POST", "/api/import", string(tc.data), withPassphrase(pass))
		if r.status != 422 || r.errCode() != backup.CodeCorruptFile || !strings.Contains(string(r.body), "damaged or incomplete") {
			t.Errorf("%s: %d %s, want 422 %s", tc.name, r.status, r.body, backup.CodeCorruptFile)
		}
	}
	if r := h.do("POST", "/api/import", `{"version":0,"endpoints":[]}`); r.status != 400 || r.errCode() != "bad_version" {
		t.Errorf("version 0: %d %s", r.status, r.body)
	}
	if after := h.do("GET", "/api/endpoints", "").body; !bytes.Equal(after, before) {
		t.Errorf("refused imports changed the endpoints")
	}
}

// A file asking for more scrypt work than ccmesh writes with (and one
// step more) is refused before any of it is done: a crafted header of a
// few hundred bytes could otherwise take gigabytes of memory.
func TestImportRefusesCostlyScrypt(t *testing.T) {
	h := newHarness(t)
	const pass = "correct horse battery"
	sealed, err := backup.Seal(t.Context(), []byte(`{"version":2,"endpoints":[]}`), pass)
	if err != nil {
		t.Fatal(err)
	}
	for _, factor := range []int{backup.MaxScryptWorkFactor + 1, 22} {
		t.Run(fmt.Sprint(factor), func(t *testing.T) {
			// The stanza line is "-> scrypt <salt> <factor>".
			crafted := bytes.Replace(sealed, []byte(fmt.Sprintf(" %d\n", backup.ScryptWorkFactor)), []byte(fmt.Sprintf(" %d\n", factor)), 1)
			if bytes.Equal(crafted, sealed) {
				t.Fatal("no work factor in the header")
			}
			r := h.do("POST", "/api/import/preview", string(crafted), withPassphrase(pass))
			if r.status != 422 || r.errCode() != backup.CodeCorruptFile || !strings.Contains(string(r.body), "work factor too large") {
				t.Errorf("factor %d: %d %s, want 422 %s", factor, r.status, r.body, backup.CodeCorruptFile)
			}
		})
	}
	if backup.MaxScryptWorkFactor != backup.DefaultScryptWorkFactor+1 {
		t.Errorf("maxScryptWorkFactor = %d, want the written %d and one step", backup.MaxScryptWorkFactor, backup.DefaultScryptWorkFactor)
	}
}

// The preview refuses what the import refuses, with the same code, field
// and message: a name given twice, and endpoints the store would not keep
// (checked on their result: a file's update of a stored endpoint too).
func TestImportPreviewRefusesWhatImportRefuses(t *testing.T) {
	h := newHarness(t)
	h.mustCreate(`{"name":"x","base_url":"https://x.example","protocol":"anthropic","api_key":"` + secretKey + `"}`)
	ep := func(name, url string, extra ...string) string {
		return `{"name":"` + name + `","base_url":"` + url + `","protocol":"anthropic"` + strings.Join(extra, "") + `}`
	}
	file := func(eps ...string) string {
		return `{"version":2,"keys":true,"endpoints":[` + strings.Join(eps, ",") + `]}`
	}
	tests := []struct {
		name, file  string
		status      int
		code, field string
	}{
		{"a name given twice", file(ep("a", "https://a.example"), ep("a", "https://b.example")), 409, "duplicate_name", "endpoints[1].name"},
		{"a new endpoint's URL", file(ep("a", "ftp://a.example")), 422, "invalid_url", "endpoints[0].base_url"},
		{"a stored endpoint's new URL", file(ep("x", "https://x.example/?k=1")), 422, "invalid_url", "endpoints[0].base_url"},
		{"a name", file(ep("has space", "https://a.example")), 422, "invalid_name", "endpoints[0].name"},
		{"a model pattern", file(ep("a", "https://a.example", `,"models":["claude-[a]"]`)), 422, "invalid_model_pattern", "endpoints[0].models"},
		{"a key", file(ep("a", "https://a.example", `,"api_key":"sk-\u0007"`)), 422, "invalid_api_key", "endpoints[0].api_key"},
	}
	before := h.do("GET", "/api/endpoints", "").body
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var msgs []string
			for _, path := range []string{"/api/import/preview", "/api/import"} {
				r := h.do("POST", path, tc.file)
				got := r.apiErr(t)
				if r.status != tc.status || got.Code != tc.code || got.Field != tc.field {
					t.Errorf("%s: %d %s, want %d %s at %s", path, r.status, r.body, tc.status, tc.code, tc.field)
				}
				msgs = append(msgs, got.Message)
			}
			if msgs[0] != msgs[1] {
				t.Errorf("the preview says %q, the import %q", msgs[0], msgs[1])
			}
		})
	}
	if after := h.do("GET", "/api/endpoints", "").body; !bytes.Equal(after, before) {
		t.Errorf("refused imports changed the endpoints")
	}
}

// A file without keys that moves an endpoint to another host would send
// its stored key there: the preview names it, and the import drops the
// key unless the request confirms with ?move_keys=1.
func TestKeylessImportMovingAKeyElsewhere(t *testing.T) {
	tests := []struct {
		name     string
		to       string
		query    string
		moves    bool
		keptKey  bool
		wantFrom string
	}{
		{name: "another host, unconfirmed", to: "https://evil.example", moves: true, wantFrom: "https://x.example"},
		{name: "another host, confirmed", to: "https://evil.example", query: "?move_keys=1", moves: true, keptKey: true, wantFrom: "https://x.example"},
		{name: "plain http on the same host", to: "http://x.example", moves: true, wantFrom: "https://x.example"},
		{name: "another port", to: "https://x.example:8443", moves: true, wantFrom: "https://x.example"},
		{name: "another path", to: "https://X.example:443/v2", keptKey: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.mustCreate(`{"name":"x","base_url":"https://x.example","protocol":"anthropic","api_key":"` + secretKey + `"}`)
			var doc backup.Doc[Settings]
			h.do("GET", "/api/export", "").decode(t, &doc)
			doc.Endpoints[0].BaseURL = &tc.to
			file, _ := json.Marshal(doc)

			var wantMoves []backup.KeyMove
			if tc.moves {
				wantMoves = []backup.KeyMove{{Name: "x", From: tc.wantFrom, To: strings.TrimSuffix(tc.to, "/v2")}}
			}
			for _, path := range []string{"/api/import/preview", "/api/import"} {
				rep := okAs[backup.ImportReport](t, h.do("POST", path+tc.query, string(file)))
				if !backup.SameJSON(rep.KeyMoves, wantMoves) || rep.KeysMoved != (tc.moves && tc.keptKey) {
					t.Errorf("%s: key_moves %+v keys_moved %v, want %+v %v", path, rep.KeyMoves, rep.KeysMoved, wantMoves, tc.moves && tc.keptKey)
				}
				if dropped := slices.Contains(rep.Fields["x"], "api_key"); dropped == tc.keptKey {
					t.Errorf("%s: fields %v; the key dropped: %v, want %v", path, rep.Fields["x"], dropped, !tc.keptKey)
				}
				if path == "/api/import/preview" && h.app.Snapshot().Endpoints[0].APIKey != secretKey {
					t.Fatalf("the preview changed the key")
				}
			}
			x := h.app.Snapshot().Endpoints[0]
			if kept := x.APIKey == secretKey; kept != tc.keptKey || (!kept && x.APIKey != "") {
				t.Errorf("after the import the key is kept: %v (has one: %v), want kept: %v", kept, x.APIKey != "", tc.keptKey)
			}
		})
	}
}
