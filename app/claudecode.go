package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// ClaudeCode is GET /api/claude-code: how to point Claude Code at ccmesh,
// and the change "Connect" would make to ~/.claude/settings.json.
type ClaudeCode struct {
	BaseURL      string `json:"base_url"`
	Exports      string `json:"exports"`
	SettingsPath string `json:"settings_path"`
	Current      string `json:"current"`
	Proposed     string `json:"proposed"`
	// Hash names this preview: current and proposed. Apply takes it and
	// writes only while the file and the change are still these.
	Hash string `json:"hash"`
}

// ExportLines are the shell lines that point Claude Code at this proxy;
// the UI and the tray copy them. Each value is quoted: the address and the
// token come from settings, and a line pasted into a shell must not run
// anything they contain.
func (a *App) ExportLines() string {
	var b strings.Builder
	fmt.Fprintf(&b, "export ANTHROPIC_BASE_URL=%s\n", shellQuote(a.ProxyURL()))
	if tok := a.state.Load().Settings.ClientToken; tok != "" {
		fmt.Fprintf(&b, "export ANTHROPIC_AUTH_TOKEN=%s\n", shellQuote(tok))
	}
	return b.String()
}

// planHash names a preview: SHA-256 over the current text and the
// proposed one, each after its length, so no two previews share a name.
func planHash(current, proposed string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s%d:%s", len(current), current, len(proposed), proposed)
	return hex.EncodeToString(h.Sum(nil))
}

// inHome is a path under the user's home directory (Options.HomeDir in
// tests).
func (a *App) inHome(parts ...string) (string, error) {
	home := a.opts.HomeDir
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("find the home directory: %w", err)
		}
	}
	return filepath.Join(append([]string{home}, parts...)...), nil
}

func (a *App) claudeSettingsPath() (string, error) { return a.inHome(".claude", "settings.json") }

// claudeCodePlan reads the settings file and computes the new text, which
// keeps every other setting and sets env.ANTHROPIC_BASE_URL.
func (a *App) claudeCodePlan() (ClaudeCode, error) {
	path, err := a.claudeSettingsPath()
	if err != nil {
		return ClaudeCode{}, err
	}
	cc := ClaudeCode{BaseURL: a.ProxyURL(), Exports: a.ExportLines(), SettingsPath: path}
	cur, err := readClientFile(path)
	if err != nil {
		return cc, err
	}
	cc.Current = string(cur)
	// Every value the change does not touch stays as written: raw JSON
	// keeps a number's digits (a float64 would round 2^53 and above) and
	// a string's escapes.
	var doc map[string]json.RawMessage
	if len(bytes.TrimSpace(cur)) > 0 {
		if err := json.Unmarshal(cur, &doc); err != nil {
			return cc, &apiError{Status: http.StatusConflict, Code: "claude_settings_unreadable",
				Message: fmt.Sprintf("%s is not valid JSON (%v); fix or move it, then try again — ccmesh will not overwrite it", path, err)}
		}
	}
	if doc == nil { // no file, or a file that says null
		doc = map[string]json.RawMessage{}
	}
	var env map[string]json.RawMessage
	if json.Unmarshal(doc["env"], &env) != nil || env == nil {
		env = map[string]json.RawMessage{} // none, or not an object: replaced
	}
	if env["ANTHROPIC_BASE_URL"], err = jsonText(a.ProxyURL()); err != nil {
		return cc, err
	}
	if doc["env"], err = jsonText(env); err != nil {
		return cc, err
	}
	if cc.Proposed, err = jsonIndented(doc); err != nil {
		return cc, err
	}
	cc.Hash = planHash(cc.Current, cc.Proposed)
	return cc, nil
}

// jsonText is v as JSON without HTML escapes: a hook's "a && b" stays
// that, not "a \u0026\u0026 b".
func jsonText(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// jsonIndented is v as a settings file: indented by two spaces, no HTML
// escapes, a newline at the end.
func jsonIndented(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return b.String(), nil
}

// clientFile is one client's configuration file that Connect changes:
// GET shows the change (named by its hash), POST with that hash writes it
// (docs/BEHAVIOUR.md#admin-api).
type clientFile struct {
	preview string // the route that shows the change, for error messages
	changed string // the error code of a file changed since the preview
	pathKey string // the apply reply's key naming the file
	// alsoWritten: the reply also names them "written" and "backup".
	alsoWritten bool
	// plan computes the reply to show and the file change it describes.
	plan func() (shown any, p filePlan, err error)
}

// filePlan is a previewed change to a file.
type filePlan struct{ path, current, proposed, hash string }

func (c clientFile) previewHandler(w http.ResponseWriter, r *http.Request) error {
	shown, _, err := c.plan()
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, shown)
	return nil
}

// applyHandler writes the proposed text, keeping a backup of the old file,
// through a temporary file and a rename so a crash never leaves half a
// file. It writes only the change the preview showed: the body names it by
// its hash, and a file (or proxy address) changed since is a 409 rather
// than a change the user never saw.
func (c clientFile) applyHandler(w http.ResponseWriter, r *http.Request) error {
	hash, err := planHashFrom(r, c.preview)
	if err != nil {
		return err
	}
	_, p, err := c.plan()
	if err != nil {
		return err
	}
	if p.hash != hash {
		return &apiError{Status: http.StatusConflict, Code: c.changed, Field: "hash",
			Message: fmt.Sprintf("%s (or ccmesh's address) changed since the preview: nothing was written; look at the change again, then apply it", p.path)}
	}
	backup, err := writePlan(p.path, p.current, p.proposed)
	if err != nil {
		return err
	}
	reply := map[string]string{c.pathKey: p.path, "backup_path": backup}
	if c.alsoWritten {
		reply["written"], reply["backup"] = p.path, backup
	}
	writeJSON(w, http.StatusOK, reply)
	return nil
}

// claudeCodeFile is Connect Claude Code: ~/.claude/settings.json.
func (a *App) claudeCodeFile() clientFile {
	return clientFile{preview: "GET /api/claude-code", changed: "claude_settings_changed", pathKey: "settings_path",
		plan: func() (any, filePlan, error) {
			cc, err := a.claudeCodePlan()
			return cc, filePlan{cc.SettingsPath, cc.Current, cc.Proposed, cc.Hash}, err
		}}
}

// planHashFrom reads the {"hash":"…"} body an apply call sends; what
// names the endpoint that gave the preview.
func planHashFrom(r *http.Request, what string) (string, error) {
	var body struct {
		Hash string `json:"hash"`
	}
	if r.ContentLength != 0 {
		if err := decodeJSON(r, &body); err != nil {
			return "", err
		}
	}
	switch {
	case body.Hash == "":
		return "", errBadRequest("hash_required", "hash", "send the hash of the change %s showed, as {\"hash\":\"…\"}", what)
	case !isSHA256Hex(body.Hash):
		return "", errBadRequest("bad_hash", "hash", "hash %q is not the hash %s gives (64 hex digits)", head([]byte(body.Hash), 80), what)
	}
	return body.Hash, nil
}

func isSHA256Hex(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}
