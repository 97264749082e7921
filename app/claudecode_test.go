package app

import (
	"encoding/json"
	"os"
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
		!strings.Contains(cc.Proposed, `"FOO": "bar"`) || cc.Exports != "export ANTHROPIC_BASE_URL=http://127.0.0.1:3457\n" {
		t.Fatalf("preview = %+v", cc)
	}
	var applied map[string]string
	h.do("POST", "/api/claude-code/apply", "").decode(t, &applied)
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
	if r := h.do("POST", "/api/claude-code/apply", ""); r.status != 409 || r.errCode() != "claude_settings_unreadable" {
		t.Errorf("unreadable settings: %d %q", r.status, r.errCode())
	}
	if b, _ := os.ReadFile(path); string(b) != "{not json" {
		t.Errorf("an unreadable settings file was overwritten: %s", b)
	}
}
