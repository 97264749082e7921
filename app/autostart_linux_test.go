package app

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/app/backup"
)

// validateDesktopFile runs desktop-file-validate (Debian: desktop-file-utils);
// without it the test fails, as a skipped check would pass unseen.
func validateDesktopFile(t *testing.T, path string) {
	t.Helper()
	tool, err := exec.LookPath("desktop-file-validate")
	if err != nil {
		t.Fatalf("desktop-file-validate is needed to check the autostart entry (apt-get install desktop-file-utils): %v", err)
	}
	if out, err := exec.Command(tool, path).CombinedOutput(); err != nil || len(out) > 0 {
		b, _ := os.ReadFile(path)
		t.Errorf("desktop-file-validate %s: %v\n%s\n%s", path, err, out, b)
	}
}

// GET /api/settings reports what is on disk; a PUT that gives
// start_at_login writes or removes the entry, one that does not leaves it.
func TestStartAtLoginSetting(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(h.app.opts.HomeDir, ".config", "autostart", "ccmesh.desktop")
	startAtLogin := func(r resp) bool { t.Helper(); return okAs[Settings](t, r).StartAtLogin }
	if startAtLogin(h.do("GET", "/api/settings", "")) {
		t.Fatal("on in a fresh home")
	}
	events, unsubscribe := h.app.Events().Subscribe()
	defer unsubscribe()
	if !startAtLogin(h.do("PUT", "/api/settings", `{"start_at_login":true}`)) {
		t.Error("PUT true answered false")
	}
	validateDesktopFile(t, path)
	for ev := range events { // PUT publishes before it answers
		if ev.Name == "settings" {
			if !strings.Contains(string(ev.Data), `"start_at_login":true`) {
				t.Errorf("settings event %s", ev.Data)
			}
			break
		}
		if len(events) == 0 {
			t.Fatal("no settings event")
		}
	}
	if !startAtLogin(h.do("GET", "/api/settings", "")) {
		t.Error("GET after PUT true reads false")
	}

	// Removed by hand: GET says so, and a PUT of something else does not
	// bring it back.
	os.Remove(path)
	if startAtLogin(h.do("GET", "/api/settings", "")) {
		t.Error("GET reads true with no entry on disk")
	}
	if startAtLogin(h.do("PUT", "/api/settings", `{"strategy":"priority"}`)) {
		t.Error("a PUT without start_at_login reads true")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a PUT without start_at_login wrote the entry: %v", err)
	}

	startAtLogin(h.do("PUT", "/api/settings", `{"start_at_login":true}`))
	if startAtLogin(h.do("PUT", "/api/settings", `{"start_at_login":false}`)) {
		t.Error("PUT false answered true")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("PUT false left the entry: %v", err)
	}

	// A directory that cannot be written: the answer names the entry, and
	// nothing else of the PUT is saved.
	if err := os.RemoveAll(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Dir(path), []byte("a file where the directory goes"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := h.do("PUT", "/api/settings", `{"start_at_login":true,"strategy":"round-robin"}`)
	var e struct{ Error apiError }
	json.Unmarshal(r.body, &e)
	if r.status != http.StatusInternalServerError || e.Error.Code != "start_at_login_failed" || e.Error.Field != "start_at_login" ||
		!strings.Contains(e.Error.Message, path) {
		t.Errorf("unwritable entry: %d %s", r.status, r.body)
	}
	if s := h.app.Snapshot().Settings; s.Strategy == "round-robin" {
		t.Error("the rest of a failed PUT was saved")
	}
}

// Start at login belongs to the machine: a backup never carries it, and an
// import neither lists it as a change nor touches the entry.
func TestStartAtLoginStaysOutOfBackups(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(h.app.opts.HomeDir, ".config", "autostart", "ccmesh.desktop")
	if r := h.do("PUT", "/api/settings", `{"start_at_login":true}`); r.status != http.StatusOK {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	r := h.do("POST", "/api/export", `{"keys":false}`)
	if r.status != http.StatusOK || strings.Contains(string(r.body), `"start_at_login":true`) {
		t.Fatalf("export: %d, carries start at login:\n%s", r.status, r.body)
	}
	// The file, as another machine wrote it, says off; and another strategy.
	var doc map[string]any
	r.decode(t, &doc)
	doc["settings"].(map[string]any)["strategy"] = "round-robin"
	file, _ := json.Marshal(doc)
	var rep backup.ImportReport
	h.do("POST", "/api/import/preview", string(file)).decode(t, &rep)
	if !slices.Equal(rep.Settings, []string{"strategy"}) {
		t.Errorf("preview lists settings %q, want only strategy", rep.Settings)
	}
	if r := h.do("POST", "/api/import", string(file)); r.status != http.StatusOK {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the import removed the entry: %v", err)
	}
	var s Settings
	h.do("GET", "/api/settings", "").decode(t, &s)
	if !s.StartAtLogin || s.Strategy != "round-robin" {
		t.Errorf("after the import: start_at_login %v, strategy %q", s.StartAtLogin, s.Strategy)
	}
}
