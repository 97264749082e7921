package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Connect Gemini CLI through the API: one preview of both files, one
// apply writing both as shown, 409 for a stale preview, 400 without a
// hash (docs/BEHAVIOUR.md#admin-api).
func TestGeminiCLIConnect(t *testing.T) {
	h := newHarness(t)
	h.do("PUT", "/api/settings", `{"client_token":"gemini-token-0123456789"}`).decode(t, &Settings{})
	dir := filepath.Join(h.app.opts.HomeDir, ".gemini")
	os.MkdirAll(dir, 0o700)
	envPath, settingsPath := filepath.Join(dir, ".env"), filepath.Join(dir, "settings.json")
	oldEnv := "# my variables\nGOOGLE_CLOUD_PROJECT=mine\n"
	writeFile(t, envPath, oldEnv)

	var g GeminiCLI
	h.do("GET", "/api/gemini-cli", "").decode(t, &g)
	wantEnv := oldEnv + "GOOGLE_GEMINI_BASE_URL='http://127.0.0.1:3457'\nGEMINI_API_KEY='gemini-token-0123456789'\n"
	wantSettings := "{\n  \"privacy\": {\n    \"usageStatisticsEnabled\": false\n  },\n  \"security\": {\n    \"auth\": {\n      \"selectedType\": \"gemini-api-key\"\n    }\n  }\n}\n"
	if len(g.Files) != 2 || g.Files[0].Path != envPath || g.Files[0].Proposed != wantEnv || g.Files[1].Path != settingsPath ||
		g.Files[1].Current != "" || g.Files[1].Proposed != wantSettings || g.BaseURL != "http://127.0.0.1:3457" {
		t.Fatalf("preview %+v", g)
	}
	for _, c := range []struct{ body, code string }{{"", "hash_required"}, {`{"hash":"x"}`, "bad_hash"}} {
		if r := h.do("POST", "/api/gemini-cli/apply", c.body); r.status != 400 || r.errCode() != c.code {
			t.Errorf("apply %q: %d %s, want 400 %s", c.body, r.status, r.body, c.code)
		}
	}
	var applied map[string]string
	h.do("POST", "/api/gemini-cli/apply", `{"hash":"`+g.Hash+`"}`).decode(t, &applied)
	want := map[string]string{"env_path": envPath, "settings_path": settingsPath, "settings_backup_path": ""}
	for k, v := range want {
		if applied[k] != v {
			t.Errorf("reply %s = %q, want %q (%v)", k, applied[k], v, applied)
		}
	}
	if got := readFile(t, applied["env_backup_path"]); got != oldEnv {
		t.Errorf("env backup %q", got)
	}
	if readFile(t, envPath) != wantEnv || readFile(t, settingsPath) != wantSettings {
		t.Errorf("written:\n%s\n%s", readFile(t, envPath), readFile(t, settingsPath))
	}
	// The address changed since the preview: nothing written.
	writeFile(t, envPath, oldEnv)
	h.do("PUT", "/api/settings", `{"client_token":"another-token-0123456789"}`).decode(t, &Settings{})
	if r := h.do("POST", "/api/gemini-cli/apply", `{"hash":"`+g.Hash+`"}`); r.status != 409 || r.errCode() != "gemini_config_changed" ||
		!strings.Contains(string(r.body), envPath) {
		t.Errorf("stale apply: %d %s", r.status, r.body)
	}
	if got := readFile(t, envPath); got != oldEnv {
		t.Errorf("a stale apply wrote %q", got)
	}
}
