package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ccmesh/ccmesh/app/backup"
	"golang.org/x/net/webdav"
)

// davServer is a real WebDAV server (golang.org/x/net/webdav over memory)
// with Basic auth, a log of the requests it got, and a fault hook.
type davServer struct {
	t   *testing.T
	fs  webdav.FileSystem
	srv *httptest.Server

	mu       sync.Mutex
	fault    func(http.ResponseWriter, *http.Request) bool // true: it answered
	requests []string                                      // "METHOD /path"
}

const (
	davUser    = "me"
	davPass    = "dav-password"
	syncPhrase = "sync passphrase 1"
	// davFolder is the sync folder, which the first push makes.
	davFolder = "/ccmesh/"
)

func newDAVServer(t *testing.T) *davServer {
	t.Helper()
	d := &davServer{t: t, fs: webdav.NewMemFS()}
	dav := &webdav.Handler{Prefix: "/dav", FileSystem: d.fs, LockSystem: webdav.NewMemLS()}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != davUser || p != davPass {
			w.Header().Set("WWW-Authenticate", `Basic realm="dav"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		d.mu.Lock()
		d.requests = append(d.requests, r.Method+" "+strings.TrimPrefix(r.URL.Path, "/dav"))
		fault := d.fault
		d.mu.Unlock()
		if fault != nil && fault(w, r) {
			return
		}
		dav.ServeHTTP(w, r)
	}))
	t.Cleanup(d.srv.Close)
	return d
}

func (d *davServer) url() string { return d.srv.URL + "/dav" + davFolder }

func (d *davServer) setFault(f func(http.ResponseWriter, *http.Request) bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fault = f
}

// log returns the requests since the last call.
func (d *davServer) log() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.requests
	d.requests = nil
	return out
}

// file is the sync file's bytes, nil when there is none.
func (d *davServer) file() []byte {
	d.t.Helper()
	f, err := d.fs.OpenFile(d.t.Context(), davFolder+backup.FileName, os.O_RDONLY, 0)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		d.t.Fatal(err)
	}
	return b
}

// names lists the folder's files.
func (d *davServer) names() []string {
	d.t.Helper()
	f, err := d.fs.OpenFile(d.t.Context(), davFolder, os.O_RDONLY, 0)
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	infos, err := f.Readdir(-1)
	if err != nil {
		d.t.Fatal(err)
	}
	var out []string
	for _, fi := range infos {
		out = append(out, fi.Name())
	}
	slices.Sort(out)
	return out
}

func (d *davServer) writeFile(data []byte) {
	d.t.Helper()
	f, err := d.fs.OpenFile(d.t.Context(), davFolder+backup.FileName, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		d.t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		d.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		d.t.Fatal(err)
	}
}

// syncTo points h's sync at d with the given password.
func (h *harness) syncTo(d *davServer, password string) {
	h.t.Helper()
	body, _ := json.Marshal(backup.SyncInput{URL: new(d.url()), User: new(davUser), Password: &password, Passphrase: new(syncPhrase)})
	if r := h.do("PUT", "/api/sync", string(body)); r.status != 200 {
		h.t.Fatalf("PUT /api/sync: %d %s", r.status, r.body)
	}
}

// sync calls push or pull with body and decodes a backup.SyncResult reply.
func (h *harness) sync(dir, body string) (resp, backup.SyncResult) {
	h.t.Helper()
	r := h.do("POST", "/api/sync/"+dir, body)
	var res backup.SyncResult
	if r.status == 200 || r.status == 409 {
		r.decode(h.t, &res)
	}
	return r, res
}

func (h *harness) mustSync(dir, body, action string) backup.SyncResult {
	h.t.Helper()
	r, res := h.sync(dir, body)
	if r.status != 200 || !res.OK || res.Action != action || res.LastSync == nil {
		h.t.Fatalf("%s %s: %d %s, want 200 %s", dir, body, r.status, r.body, action)
	}
	return res
}

func (h *harness) lastSync() string {
	h.t.Helper()
	var s backup.SyncSettings
	h.do("GET", "/api/sync", "").decode(h.t, &s)
	if s.LastSync == nil {
		return ""
	}
	return s.LastSync.String()
}

// configOf is h's whole configuration with keys, to compare two data dirs.
func configOf(h *harness) string { return backup.ConfigHash(backupConfig(h.app.Snapshot())) }

// Two data dirs sync through one WebDAV folder: what one pushes the other
// pulls, keys included; a push or pull that would overwrite a change made
// since the last sync is a conflict until a side is chosen.
func TestSyncTwoDataDirs(t *testing.T) {
	d := newDAVServer(t)
	a, b := newHarness(t), newHarness(t)
	a.syncTo(d, davPass)
	b.syncTo(d, davPass)
	one := a.mustCreate(`{"name":"one","base_url":"https://one.example","protocol":"anthropic","api_key":"` + secretKey + `"}`)

	if r, _ := b.sync("pull", ""); r.status != 422 || r.errCode() != "sync_remote_missing" {
		t.Errorf("pull before any push: %d %s", r.status, r.body)
	}
	d.log()
	a.mustSync("push", "", "push")
	// Written beside, then moved over: a reader never sees part of a file.
	var puts, moves []string
	for _, req := range d.log() {
		switch {
		case strings.HasPrefix(req, "PUT "):
			puts = append(puts, req)
		case strings.HasPrefix(req, "MOVE "):
			moves = append(moves, req)
		}
	}
	if len(moves) != 1 || moves[0] != "MOVE "+davFolder+strings.TrimPrefix(puts[len(puts)-1], "PUT "+davFolder) ||
		slices.Contains(puts, "PUT "+davFolder+backup.FileName) {
		t.Errorf("upload: PUTs %v, MOVEs %v; want a temporary file moved over the sync file", puts, moves)
	}
	if got := d.names(); !slices.Equal(got, []string{backup.FileName}) {
		t.Errorf("the sync folder holds %v", got)
	}
	file := d.file()
	if !bytes.HasPrefix(file, []byte("age-encryption.org/v1\n")) || bytes.Contains(file, []byte(secretKey)) {
		t.Errorf("the sync file is not encrypted: %.80q", file)
	}

	res := b.mustSync("pull", "", "pull")
	if res.Import == nil || !slices.Equal(res.Import.Added, []string{"one"}) {
		t.Errorf("pull reported %+v", res.Import)
	}
	if configOf(b) != configOf(a) || b.app.Snapshot().Endpoints[0].APIKey != secretKey {
		t.Fatalf("b after the pull differs from a")
	}
	// Nothing changed on either side: nothing to do, either way.
	b.mustSync("push", "", "none")
	a.mustSync("pull", "", "none")

	// a changes and pushes; b, which did not change, pulls it.
	a.do("PUT", fmt.Sprintf("/api/endpoints/%d", one.ID), `{"base_url":"https://one2.example"}`)
	a.mustSync("push", "", "push")
	b.mustSync("pull", "", "pull")
	if configOf(b) != configOf(a) {
		t.Errorf("b after the second pull differs from a")
	}

	// Both change: b's push and pull are conflicts, and nothing moves.
	a.do("PUT", "/api/settings", `{"strategy":"priority"}`)
	a.mustSync("push", "", "push")
	b.mustCreate(`{"name":"two","base_url":"https://two.example","protocol":"anthropic"}`)
	remote, bBefore, bSynced := d.file(), configOf(b), b.lastSync()
	for _, dir := range []string{"push", "pull"} {
		r, res := b.sync(dir, "")
		if r.status != 409 || !res.Conflict || res.OK || res.Local == nil || res.Remote == nil ||
			!res.Local.Changed || !res.Remote.Changed || res.Local.ModifiedAt == nil || res.Remote.ModifiedAt == nil ||
			res.Remote.ExportedAt == nil || res.Local.Endpoints != 2 || res.Remote.Endpoints != 1 || res.LastSync == nil ||
			!strings.Contains(res.Message, "both this computer's configuration and the remote file changed") {
			t.Errorf("%s with both sides changed: %d %s", dir, r.status, r.body)
		}
	}
	if !bytes.Equal(d.file(), remote) || configOf(b) != bBefore || b.lastSync() != bSynced {
		t.Errorf("a conflict changed a side or the last sync")
	}
	// The remote wins: b becomes a's, "two" goes.
	res = b.mustSync("push", `{"force":"remote"}`, "pull")
	if !slices.Equal(res.Import.Removed, []string{"two"}) || !slices.Equal(res.Import.Settings, []string{"strategy"}) {
		t.Errorf("forced pull reported %+v", res.Import)
	}
	if configOf(b) != configOf(a) {
		t.Errorf("b after the forced pull differs from a")
	}

	// Only the remote changed: a push from b would overwrite it.
	a.do("PUT", "/api/settings", `{"strategy":"round-robin"}`)
	a.mustSync("push", "", "push")
	r, res := b.sync("push", "")
	if r.status != 409 || res.Local.Changed || !res.Remote.Changed || !strings.Contains(res.Message, "pushing would overwrite") {
		t.Errorf("push with only the remote changed: %d %s", r.status, r.body)
	}
	// Only b changed: a pull into a would overwrite... a's own? No: a did
	// not change, so it pulls; b's choice of "local" pushes over a's.
	b.mustCreate(`{"name":"three","base_url":"https://three.example","protocol":"anthropic"}`)
	if r, res := b.sync("pull", ""); r.status != 409 || !res.Local.Changed || !res.Remote.Changed {
		t.Errorf("pull into changed b: %d %s", r.status, r.body)
	}
	b.mustSync("pull", `{"force":"local"}`, "push")
	a.mustSync("pull", "", "pull")
	if configOf(a) != configOf(b) || !slices.Contains(a.endpointNames(), "three") {
		t.Errorf("a after pulling b's forced push: %v", a.endpointNames())
	}
	if r := b.do("POST", "/api/sync/push", `{"force":"mine"}`); r.status != 400 || r.errCode() != "bad_force" {
		t.Errorf("force mine: %d %s", r.status, r.body)
	}
}

// syncedPair is a WebDAV server holding a's pushed configuration, which
// b pulled.
func syncedPair(t *testing.T) (d *davServer, a, b *harness) {
	t.Helper()
	d = newDAVServer(t)
	a, b = newHarness(t), newHarness(t)
	a.syncTo(d, davPass)
	b.syncTo(d, davPass)
	a.mustCreate(`{"name":"one","base_url":"https://one.example","protocol":"anthropic","api_key":"` + secretKey + `"}`)
	a.mustSync("push", "", "push")
	b.mustSync("pull", "", "pull")
	return d, a, b
}

// A refused login, a full server and a server gone mid-upload each fail
// with words that say so, and leave the remote file, the local
// configuration and the last sync as they were; the next try works.
func TestSyncFailuresChangeNothing(t *testing.T) {
	tests := []struct {
		name     string
		password string
		fault    func(http.ResponseWriter, *http.Request) bool
		status   int
		code     string
		says     string
	}{
		{name: "wrong password", password: "not-it", status: 502, code: "sync_unauthorized",
			says: "refused the user name or password (401)"},
		{name: "server full", password: davPass, status: 502, code: "sync_no_space", says: "no room for the file (507 Insufficient Storage)",
			fault: func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != "PUT" {
					return false
				}
				_, _ = io.Copy(io.Discard, r.Body)
				w.WriteHeader(http.StatusInsufficientStorage)
				return true
			}},
		{name: "server gone mid-upload", password: davPass, status: 502, code: "sync_unreachable", says: "could not write the sync file",
			fault: func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != "PUT" {
					return false
				}
				// Part of the body, then the connection closes.
				_, _ = io.ReadFull(r.Body, make([]byte, 64))
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
				return true
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, a, b := syncedPair(t)
			b.mustCreate(`{"name":"b-only","base_url":"https://b.example","protocol":"anthropic"}`)
			b.syncTo(d, tc.password)
			d.setFault(tc.fault)
			remote, aBefore, bBefore, bSynced := d.file(), configOf(a), configOf(b), b.lastSync()
			for _, dir := range []string{"push", "pull"} {
				if tc.fault != nil && dir == "pull" {
					continue // these faults are the upload's
				}
				r, _ := b.sync(dir, "")
				got := r.apiErr(t)
				if r.status != tc.status || got.Code != tc.code || !strings.Contains(got.Message, tc.says) ||
					!strings.Contains(got.Message, "nothing was changed here or there") {
					t.Errorf("%s: %d %s, want %d %s saying %q", dir, r.status, r.body, tc.status, tc.code, tc.says)
				}
			}
			if !bytes.Equal(d.file(), remote) || configOf(a) != aBefore || configOf(b) != bBefore || b.lastSync() != bSynced {
				t.Errorf("a failed sync changed a side or the last sync")
			}
			d.setFault(nil)
			b.syncTo(d, davPass)
			if names := d.names(); !slices.Equal(names, []string{backup.FileName}) {
				t.Errorf("after the failure the folder holds %v", names)
			}
			// b's change is still its own since the last sync: it pushes.
			b.mustSync("push", "", "push")
			a.mustSync("pull", "", "pull")
			if !slices.Contains(a.endpointNames(), "b-only") {
				t.Errorf("a lacks b's endpoint after the retried push")
			}
		})
	}
}

// A remote file that is cut short, damaged or locked with another
// passphrase is never imported.
func TestSyncRefusesABadRemoteFile(t *testing.T) {
	d, a, b := syncedPair(t)
	file := d.file()
	a.mustCreate(`{"name":"two","base_url":"https://two.example","protocol":"anthropic"}`)
	a.mustSync("push", "", "push")
	full := d.file()
	bBefore := configOf(b)
	for _, tc := range []struct {
		name string
		data []byte
		code string
	}{
		{"cut short", full[:len(full)-17], backup.CodeCorruptFile},
		{"cut in half", full[:len(full)/2], backup.CodeCorruptFile},
	} {
		d.writeFile(tc.data)
		r, _ := b.sync("pull", "")
		if r.status != 422 || r.errCode() != tc.code || !strings.Contains(string(r.body), "damaged or incomplete") {
			t.Errorf("%s: %d %s, want 422 %s", tc.name, r.status, r.body, tc.code)
		}
		if configOf(b) != bBefore {
			t.Errorf("%s: the pull changed b", tc.name)
		}
		// A push over it is refused too, unless this side is chosen.
		if r, _ := b.sync("push", ""); r.status != 422 || !strings.Contains(string(r.body), `push with \"force\": \"local\"`) {
			t.Errorf("%s: push over it: %d %s", tc.name, r.status, r.body)
		}
	}
	d.writeFile(file)
	if r := b.do("PUT", "/api/sync", `{"passphrase":"another passphrase"}`); r.status != 200 {
		t.Fatalf("PUT passphrase: %d %s", r.status, r.body)
	}
	d.writeFile(full)
	if r, _ := b.sync("pull", ""); r.status != 422 || r.errCode() != backup.CodeBadPassphrase ||
		!strings.Contains(string(r.body), "does not open with the saved passphrase") {
		t.Errorf("another passphrase: %d %s", r.status, r.body)
	}
	if configOf(b) != bBefore {
		t.Errorf("a refused pull changed b")
	}
}

// The sync settings: the password and passphrase are written, never read.
func TestSyncSettings(t *testing.T) {
	h := newHarness(t)
	var s backup.SyncSettings
	h.do("GET", "/api/sync", "").decode(t, &s)
	if s.URL != "" || s.HasPassword || s.HasPassphrase || s.LastSync != nil || s.File != backup.FileName {
		t.Errorf("fresh sync settings = %+v", s)
	}
	if r, _ := h.sync("push", ""); r.status != 422 || r.errCode() != "sync_not_configured" {
		t.Errorf("push without a URL: %d %s", r.status, r.body)
	}
	r := h.do("PUT", "/api/sync", `{"url":" https://dav.example/ccmesh/ ","user":"me","password":"`+davPass+`","passphrase":"`+syncPhrase+`"}`)
	r.decode(t, &s)
	if r.status != 200 || s.URL != "https://dav.example/ccmesh/" || s.User != "me" || !s.HasPassword || !s.HasPassphrase {
		t.Errorf("PUT /api/sync: %d %s", r.status, r.body)
	}
	for _, b := range [][]byte{r.body, h.do("GET", "/api/sync", "").body, h.exportWithKeys(), []byte(h.logs.String())} {
		if bytes.Contains(b, []byte(davPass)) || bytes.Contains(b, []byte(syncPhrase)) {
			t.Errorf("the sync password or passphrase shows: %s", b)
		}
	}
	// Left out: kept; "": cleared.
	h.do("PUT", "/api/sync", `{"password":""}`).decode(t, &s)
	if s.HasPassword || !s.HasPassphrase || s.URL != "https://dav.example/ccmesh/" {
		t.Errorf("after clearing the password: %+v", s)
	}
	for _, tc := range []struct{ body, code, field string }{
		{`{"url":"ftp://dav.example/"}`, "invalid_sync_url", "url"},
		{`{"url":"dav.example/ccmesh"}`, "invalid_sync_url", "url"},
		{`{"url":"https://me:pw@dav.example/"}`, "invalid_sync_url", "url"},
		{`{"url":"https://dav.example/?x=1"}`, "invalid_sync_url", "url"},
		{`{"passphrase":"short"}`, "short_passphrase", "passphrase"},
	} {
		r := h.do("PUT", "/api/sync", tc.body)
		if got := r.apiErr(t); r.status != 422 || got.Code != tc.code || got.Field != tc.field {
			t.Errorf("PUT %s: %d %s, want 422 %s at %s", tc.body, r.status, r.body, tc.code, tc.field)
		}
	}
	if r := h.do("PUT", "/api/sync", `{"pasword":"x"}`); r.status != 400 || r.errCode() != "unknown_field" {
		t.Errorf("misspelled field: %d %s", r.status, r.body)
	}
	h.do("PUT", "/api/sync", `{"passphrase":""}`)
	if r, _ := h.sync("pull", ""); r.status != 422 || r.errCode() != "sync_no_passphrase" {
		t.Errorf("pull without a passphrase: %d %s", r.status, r.body)
	}
}

// The sync URL follows base_url's rule (store.CheckHTTPURL), and plain
// http to another machine, which sends the password in clear, is saved
// with a warning that GET /api/sync repeats.
func TestSyncURLRules(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ url, says string }{
		{"http://:8080/dav/", "no host name"},
		{"https://dav.example:99999/dav/", "port must be a number from 1 to 65535"},
		{"https://dav.example:0/dav/", "port must be a number from 1 to 65535"},
		{"https://dav.example/dav/?", "without ? or #"},
		{"https://dav.example/dav/#", "without ? or #"},
		{"webdav://dav.example/", "http:// or https://"},
	} {
		body, _ := json.Marshal(backup.SyncInput{URL: &tc.url})
		r := h.do("PUT", "/api/sync", string(body))
		if got := r.apiErr(t); r.status != 422 || got.Code != "invalid_sync_url" || got.Field != "url" || !strings.Contains(got.Message, tc.says) {
			t.Errorf("PUT url %q: %d %s, want 422 invalid_sync_url saying %q", tc.url, r.status, r.body, tc.says)
		}
	}
	for _, tc := range []struct {
		url  string
		warn bool
	}{
		{"http://nas.lan/dav/ccmesh/", true},
		{"http://192.168.1.9:8080/dav/", true},
		{"https://dav.example/ccmesh/", false},
		{"http://127.0.0.1:8080/dav/", false},
		{"http://localhost/dav/", false},
		{"http://[::1]:8080/dav/", false},
	} {
		body, _ := json.Marshal(backup.SyncInput{URL: &tc.url})
		r := h.do("PUT", "/api/sync", string(body))
		put := okAs[backup.SyncSettings](t, r)
		got := okAs[backup.SyncSettings](t, h.do("GET", "/api/sync", ""))
		for _, s := range []backup.SyncSettings{put, got} {
			if warned := strings.Contains(s.Warning, "unencrypted"); warned != tc.warn {
				t.Errorf("url %s: warning %q, want one: %v", tc.url, s.Warning, tc.warn)
			}
		}
	}
}
