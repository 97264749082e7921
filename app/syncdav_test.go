package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/app/backup"
)

// A 207 that lists no 200 propstat for the sync file (only a 404 one, or
// no response at all) means there is no file: push writes one, pull says
// there is none, and neither panics — through the desktop window's
// handler either, which has no recover of its own around it.
func TestSyncMalformedPropfindIsNoFile(t *testing.T) {
	answers := map[string]string{
		"only a 404 propstat": `<?xml version="1.0" encoding="utf-8"?><d:multistatus xmlns:d="DAV:"><d:response>` +
			`<d:href>/dav/ccmesh/ccmesh-sync.age</d:href><d:propstat><d:prop><d:getetag/></d:prop>` +
			`<d:status>HTTP/1.1 404 Not Found</d:status></d:propstat></d:response></d:multistatus>`,
		"an empty multistatus": `<?xml version="1.0" encoding="utf-8"?><d:multistatus xmlns:d="DAV:"/>`,
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			d := newDAVServer(t)
			h := newHarness(t)
			h.syncTo(d, davPass)
			h.mustCreate(`{"name":"one","base_url":"https://one.example","protocol":"anthropic"}`)
			d.setFault(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != "PROPFIND" {
					return false
				}
				w.WriteHeader(http.StatusMultiStatus)
				io.WriteString(w, answer)
				return true
			})
			for _, tc := range []struct{ dir, code string }{{"pull", "sync_remote_missing"}, {"push", ""}} {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("POST", "/api/sync/"+tc.dir, strings.NewReader(""))
				h.app.TrustedHandler().ServeHTTP(rec, req) // a panic here fails the test
				got := resp{status: rec.Code, body: rec.Body.Bytes()}
				switch {
				case tc.code != "" && (got.status != 422 || got.errCode() != tc.code):
					t.Errorf("%s: %d %s, want 422 %s", tc.dir, got.status, got.body, tc.code)
				case tc.code == "" && got.status != 200:
					t.Errorf("%s: %d %s, want 200", tc.dir, got.status, got.body)
				}
			}
			if d.file() == nil {
				t.Errorf("the push wrote no file")
			}
		})
	}
}

// A panic in an admin handler is a 500 and a log line with its code, in
// the window's handler (no net/http around it) and the listener's; the
// log never shows a panic value that is not the runtime's own.
func TestAdminHandlerPanicIsRecovered(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name      string
		panicWith func()
		inWindow  bool
		logSays   string
	}{
		{"nil dereference in the window", func() { var f *backup.File; _ = f.ETag }, true, "nil pointer dereference"},
		{"a value holding a key", func() { panic("key " + secretKey) }, true, "string"},
		{"on the listener", func() { _ = strings.Fields("one")[len(secretKey)] }, false, "index out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			handler := h.app.recoverAdmin(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { tc.panicWith() }))
			req := httptest.NewRequest("POST", "/api/sync/push", nil)
			if tc.inWindow {
				req = req.WithContext(context.WithValue(req.Context(), inProcessKey{}, true))
			}
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			got := resp{status: rec.Code, body: rec.Body.Bytes()}
			if got.status != 500 || got.errCode() != "internal" || !strings.Contains(string(got.body), "APP-003") {
				t.Errorf("answer %d %s, want 500 internal naming APP-003", got.status, got.body)
			}
			logs := h.logs.String()
			if !strings.Contains(logs, `"code":"APP-003"`) || !strings.Contains(logs, tc.logSays) {
				t.Errorf("log %s lacks APP-003 and %q", logs, tc.logSays)
			}
			if strings.Contains(logs, secretKey) {
				t.Errorf("the log shows the panic's key")
			}
		})
	}
	// net/http's own abort still drops the connection on the listener.
	handler := h.app.recoverAdmin(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
	defer func() {
		if p := recover(); p != http.ErrAbortHandler {
			t.Errorf("ErrAbortHandler on the listener: recovered %v, want it passed on", p)
		}
	}()
	handler.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/events", nil))
}

// What sync reads from the server is capped: a sync file larger than any
// ccmesh writes, whether it says its length or streams, and a PROPFIND
// answer larger than one file's properties are refused with words that
// say so, for push (which reads first) and pull, and change nothing.
func TestSyncCapsWhatItReads(t *testing.T) {
	huge := bytes.Repeat([]byte("x"), 32<<10)
	stream := func(w http.ResponseWriter, total int) {
		for n := 0; n < total; n += len(huge) {
			if _, err := w.Write(huge); err != nil {
				return // the client stopped reading
			}
		}
	}
	tests := []struct {
		name   string
		method string
		answer func(w http.ResponseWriter)
		says   string
	}{
		{"a streamed file", "GET", func(w http.ResponseWriter) {
			w.WriteHeader(200)
			stream(w, int(backup.MaxFile(maxAdminBody))+(1<<20))
		}, "larger than 4 MiB"},
		{"a file that says its length", "GET", func(w http.ResponseWriter) {
			w.Header().Set("Content-Length", strconv.Itoa(3<<30))
			w.WriteHeader(200)
			stream(w, 1<<20) // then the connection ends short of it
		}, "larger than 4 MiB"},
		{"a PROPFIND with a huge display name", "PROPFIND", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusMultiStatus)
			io.WriteString(w, `<?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response><d:href>/dav/ccmesh/`+
				backup.FileName+`</d:href><d:propstat><d:prop><d:displayname>`)
			stream(w, 4*backup.MaxAnswer)
			io.WriteString(w, `</d:displayname></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>`)
		}, "answered PROPFIND with more than 64 KiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, _, b := syncedPair(t)
			b.mustCreate(`{"name":"b-only","base_url":"https://b.example","protocol":"anthropic"}`)
			remote, before, synced := d.file(), configOf(b), b.lastSync()
			d.setFault(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != tc.method {
					return false
				}
				tc.answer(w)
				return true
			})
			for _, dir := range []string{"push", "pull"} {
				r, _ := b.sync(dir, "")
				got := r.apiErr(t)
				if r.status != 502 || got.Code != "sync_too_large" || !strings.Contains(got.Message, tc.says) ||
					!strings.Contains(got.Message, "nothing was changed here or there") {
					t.Errorf("%s: %d %s, want 502 sync_too_large saying %q", dir, r.status, r.body, tc.says)
				}
			}
			if !bytes.Equal(d.file(), remote) || configOf(b) != before || b.lastSync() != synced {
				t.Errorf("a refused answer changed a side or the last sync")
			}
		})
	}
}

// A push writes over the remote file only if it is still the one the push
// read: a file another computer wrote meanwhile — during the upload, or
// between the last look and the MOVE, which asks the server to check — is
// the conflict answer, and it stays on the server.
func TestSyncPushDoesNotOverwriteAConcurrentPush(t *testing.T) {
	other := []byte("the file another computer pushed meanwhile")
	tests := []struct {
		name string
		// synced: a and b synced before (a remote file with an ETag), else
		// a first push to an empty folder.
		synced bool
		method string
		// answer, after the other file is written: true when it answered.
		answer func(w http.ResponseWriter, r *http.Request) bool
		// wantMove checks the conditional MOVE's headers, if not nil.
		wantMove func(r *http.Request) string
	}{
		{name: "during the first upload", method: "PUT"},
		{name: "during an upload over a file", synced: true, method: "PUT"},
		{name: "just before the first MOVE", method: "MOVE",
			wantMove: func(r *http.Request) string {
				if got := r.Header.Get("Overwrite"); got != "F" {
					return "Overwrite " + got + ", want F"
				}
				return ""
			}},
		{name: "just before a MOVE over a file, on a server that checks If", synced: true, method: "MOVE",
			answer: func(w http.ResponseWriter, r *http.Request) bool {
				if r.Header.Get("If") == "" {
					return false
				}
				w.WriteHeader(http.StatusPreconditionFailed) // the ETag is no longer the file's
				return true
			},
			wantMove: func(r *http.Request) string {
				want := "<" + r.Header.Get("Destination") + "> ([\""
				if got := r.Header.Get("If"); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "\"])") ||
					!strings.HasSuffix(r.Header.Get("Destination"), "/"+backup.FileName) {
					return fmt.Sprintf("If %q, want %s…\"])", got, want)
				}
				return ""
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d *davServer
			var b *harness
			if tc.synced {
				d, _, b = syncedPair(t)
			} else {
				d, b = newDAVServer(t), newHarness(t)
				b.syncTo(d, davPass)
				if err := d.fs.Mkdir(t.Context(), davFolder, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			b.mustCreate(`{"name":"b-only","base_url":"https://b.example","protocol":"anthropic"}`)
			before, synced := configOf(b), b.lastSync()
			var moveProblem string
			written := false
			d.setFault(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != tc.method || written {
					return false
				}
				written = true
				d.writeFile(other)
				if tc.wantMove != nil {
					moveProblem = tc.wantMove(r)
				}
				return tc.answer != nil && tc.answer(w, r)
			})
			r, res := b.sync("push", "")
			if r.status != 409 || !res.Conflict || res.Remote == nil || !res.Remote.Changed ||
				!strings.Contains(res.Message, "changed while this push was under way") {
				t.Errorf("push: %d %s, want 409 conflict", r.status, r.body)
			}
			if moveProblem != "" {
				t.Errorf("the MOVE: %s", moveProblem)
			}
			if got := d.file(); !bytes.Equal(got, other) {
				t.Errorf("the remote file is %.40q, want the other computer's", got)
			}
			if names := d.names(); !slices.Equal(names, []string{backup.FileName}) {
				t.Errorf("the folder holds %v", names)
			}
			if configOf(b) != before || b.lastSync() != synced {
				t.Errorf("the conflict changed b or its last sync")
			}
			// Choosing this side pushes over it.
			d.setFault(nil)
			b.mustSync("push", `{"force":"local"}`, "push")
			if bytes.Equal(d.file(), other) {
				t.Errorf("a forced push left the other file")
			}
		})
	}
}
