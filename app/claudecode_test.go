package app

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestClaudeCodeConnect(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(h.app.opts.HomeDir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o700)
	old := `{"model":"opus","env":{"FOO":"bar"}}`
	os.WriteFile(path, []byte(old), 0o600)

	var cc ClaudeCode
	h.do("GET", "/api/claude-code", "").decode(t, &cc)
	if cc.Current != old || !strings.Contains(cc.Proposed, `"ANTHROPIC_BASE_URL": "http://127.0.0.1:3457"`) ||
		!strings.Contains(cc.Proposed, `"FOO": "bar"`) || cc.Exports != "export ANTHROPIC_BASE_URL='http://127.0.0.1:3457'\n" {
		t.Fatalf("preview = %+v", cc)
	}
	var applied map[string]string
	h.do("POST", "/api/claude-code/apply", `{"hash":"`+cc.Hash+`"}`).decode(t, &applied)
	if b, _ := os.ReadFile(applied["backup_path"]); string(b) != old {
		t.Errorf("backup holds %q, want the old file", b)
	}
	now, _ := os.ReadFile(path)
	var doc struct {
		Model string
		Env   map[string]string
	}
	if err := json.Unmarshal(now, &doc); err != nil || doc.Model != "opus" || doc.Env["FOO"] != "bar" || doc.Env["ANTHROPIC_BASE_URL"] != "http://127.0.0.1:3457" {
		t.Errorf("settings after apply = %s (%v)", now, err)
	}

	os.WriteFile(path, []byte("{not json"), 0o600)
	if r := h.do("POST", "/api/claude-code/apply", `{"hash":"`+cc.Hash+`"}`); r.status != 409 || r.errCode() != "claude_settings_unreadable" {
		t.Errorf("unreadable settings: %d %q", r.status, r.errCode())
	}
	if b, _ := os.ReadFile(path); string(b) != "{not json" {
		t.Errorf("an unreadable settings file was overwritten: %s", b)
	}
}

// Apply writes only the change the preview showed: it needs the preview's
// hash, and a file changed since the preview is left alone with a 409
// (docs/BEHAVIOUR.md#admin-api).
func TestClaudeCodeApplyOnlyWhatWasShown(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(h.app.opts.HomeDir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte(`{"model":"opus"}`), 0o600)
	var cc ClaudeCode
	h.do("GET", "/api/claude-code", "").decode(t, &cc)
	if !isSHA256Hex(cc.Hash) {
		t.Fatalf("preview hash %q, want 64 hex digits", cc.Hash)
	}

	edited := `{"model":"sonnet","permissions":{"allow":["Bash"]}}`
	os.WriteFile(path, []byte(edited), 0o600) // after the preview
	cases := []struct {
		name, body string
		status     int
		code       string
	}{
		{"no body", "", 400, "hash_required"},
		{"no hash", `{}`, 400, "hash_required"},
		{"not a hash", `{"hash":"yes please"}`, 400, "bad_hash"},
		{"file changed since the preview", `{"hash":"` + cc.Hash + `"}`, 409, "claude_settings_changed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("POST", "/api/claude-code/apply", tc.body)
			if r.status != tc.status || r.errCode() != tc.code {
				t.Errorf("got %d %s, want %d %q", r.status, r.body, tc.status, tc.code)
			}
			if b, _ := os.ReadFile(path); string(b) != edited {
				t.Errorf("settings.json = %s, want it untouched", b)
			}
		})
	}

	h.do("GET", "/api/claude-code", "").decode(t, &cc)
	if r := h.do("POST", "/api/claude-code/apply", `{"hash":"`+cc.Hash+`"}`); r.status != 200 {
		t.Fatalf("apply after a new preview: %d %s", r.status, r.body)
	}
	if b, _ := os.ReadFile(path); string(b) != cc.Proposed {
		t.Errorf("settings.json = %s, want the previewed %s", b, cc.Proposed)
	}
}

// The export lines quote every value, so pasting them into a shell runs
// nothing a value holds (docs/BEHAVIOUR.md#tray).
func TestExportLinesQuoteValues(t *testing.T) {
	const listen = "127.0.0.1:3457$(touch A)`touch B`';touch C;'\"$(touch D)\""
	const token = "tok-$(touch${IFS}E)-0123456789"
	h := startHarness(t, t.TempDir(), func(o *Options) { o.Listen = listen })
	if r := h.do("PUT", "/api/settings", `{"client_token":"`+token+`"}`); r.status != 200 {
		t.Fatalf("set client token: %d %s", r.status, r.body)
	}
	var cc ClaudeCode
	h.do("GET", "/api/claude-code", "").decode(t, &cc)
	if cc.Exports != h.app.ExportLines() {
		t.Fatalf("the API's lines %q differ from the tray's %q", cc.Exports, h.app.ExportLines())
	}

	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", cc.Exports+`printf '%s\n%s' "$ANTHROPIC_BASE_URL" "$ANTHROPIC_AUTH_TOKEN"`)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sh -c %q: %v: %s", cc.Exports, err, out)
	}
	if want := "http://" + listen + "\n" + token; string(out) != want {
		t.Errorf("the shell read\n%s\nwant\n%s", out, want)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("running the export lines created %v", files)
	}
}
