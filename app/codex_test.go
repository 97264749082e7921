package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Connect Codex edits config.toml as text: the model_provider line and
// the ccmesh provider block change, every other byte stays.
func TestCodexConnect(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(h.app.opts.HomeDir, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(path), 0o700)
	old := `# my settings
model = "gpt-5.5"   # keep this comment
model_provider = "openai"
check_for_update_on_startup = false

[model_providers.ccmesh]
name = "old"
base_url = "http://127.0.0.1:9999/v1"
wire_api = "responses"
supports_websockets = false

[model_providers.other]
name = "Other"
base_url = "https://other.example/v1"

[analytics]
enabled = false
`
	os.WriteFile(path, []byte(old), 0o600)
	var c Codex
	h.do("GET", "/api/codex", "").decode(t, &c)
	want := `# my settings
model = "gpt-5.5"   # keep this comment
model_provider = "ccmesh"
check_for_update_on_startup = false

[model_providers.ccmesh]
name = "ccmesh"
base_url = "http://127.0.0.1:3457/v1"
env_key = "CCMESH_API_KEY"
wire_api = "responses"
supports_websockets = false

[model_providers.other]
name = "Other"
base_url = "https://other.example/v1"

[analytics]
enabled = false
`
	if c.Current != old || c.Proposed != want {
		t.Fatalf("proposed:\n%s\nwant:\n%s", c.Proposed, want)
	}
	if c.Exports != "export CCMESH_API_KEY='ccmesh'\n" || !strings.Contains(c.Block, `base_url = "http://127.0.0.1:3457/v1"`) {
		t.Errorf("exports %q block %q", c.Exports, c.Block)
	}
	var applied map[string]string
	h.do("POST", "/api/codex/apply", `{"hash":"`+c.Hash+`"}`).decode(t, &applied)
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Errorf("written:\n%s", b)
	}
	if b, _ := os.ReadFile(applied["backup_path"]); string(b) != old {
		t.Errorf("backup %q", b)
	}
	if applied["written"] != path || applied["backup"] != applied["backup_path"] || c.Env != c.Exports || c.Preview != want {
		t.Errorf("reply %v; env %q preview same as proposed: %v", applied, c.Env, c.Preview == want)
	}
	// Applied again: nothing left to change, the same text.
	h.do("GET", "/api/codex", "").decode(t, &c)
	if c.Proposed != want {
		t.Errorf("a second connect changes the file again:\n%s", c.Proposed)
	}
	// A stale preview writes nothing.
	os.WriteFile(path, []byte("model = \"o3\"\n"), 0o600)
	if r := h.do("POST", "/api/codex/apply", `{"hash":"`+c.Hash+`"}`); r.status != 409 || r.errCode() != "codex_config_changed" {
		t.Errorf("stale hash: %d %q", r.status, r.errCode())
	}
}

// A file ccmesh cannot edit safely is left alone with a 409 saying so.
func TestCodexConfigRefused(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(h.app.opts.HomeDir, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(path), 0o700)
	for _, c := range []struct{ text, code string }{
		{"model = [unclosed", "codex_config_unreadable"},
		// The provider set by dotted keys: replacing only the line-based
		// parts would leave a duplicate, so ccmesh refuses.
		{"model_providers.ccmesh.base_url = \"x\"\n", "codex_config_uneditable"},
	} {
		os.WriteFile(path, []byte(c.text), 0o600)
		if r := h.do("GET", "/api/codex", ""); r.status != 409 || r.errCode() != c.code {
			t.Errorf("%q: %d %q", c.text, r.status, r.errCode())
		}
		if b, _ := os.ReadFile(path); string(b) != c.text {
			t.Errorf("the file changed: %q", b)
		}
	}
}
