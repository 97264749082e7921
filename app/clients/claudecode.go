package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
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
func ExportLines(h Host) string {
	var b strings.Builder
	fmt.Fprintf(&b, "export ANTHROPIC_BASE_URL=%s\n", ShellQuote(h.ProxyURL()))
	if tok := h.ClientToken(); tok != "" {
		fmt.Fprintf(&b, "export ANTHROPIC_AUTH_TOKEN=%s\n", ShellQuote(tok))
	}
	return b.String()
}

// claudeCodePlan reads the settings file and computes the new text, which
// keeps every other setting and sets env.ANTHROPIC_BASE_URL.
func claudeCodePlan(h Host) (ClaudeCode, error) {
	path, err := inHome(h, ".claude", "settings.json")
	if err != nil {
		return ClaudeCode{}, err
	}
	cc := ClaudeCode{BaseURL: h.ProxyURL(), Exports: ExportLines(h), SettingsPath: path}
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
			return cc, conflict("claude_settings_unreadable",
				"%s is not valid JSON (%v); fix or move it, then try again — ccmesh will not overwrite it", path, err)
		}
	}
	if doc == nil { // no file, or a file that says null
		doc = map[string]json.RawMessage{}
	}
	var env map[string]json.RawMessage
	if json.Unmarshal(doc["env"], &env) != nil || env == nil {
		env = map[string]json.RawMessage{} // none, or not an object: replaced
	}
	if env["ANTHROPIC_BASE_URL"], err = jsonText(h.ProxyURL()); err != nil {
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

// ClaudeCodeClient is Connect Claude Code: ~/.claude/settings.json, with
// env.ANTHROPIC_BASE_URL set to ccmesh.
var ClaudeCodeClient = Client{Preview: "GET /api/claude-code", Changed: "claude_settings_changed",
	Plan: func(h Host) (any, Plan, error) {
		cc, err := claudeCodePlan(h)
		return cc, onePlan(FilePlan{cc.SettingsPath, cc.Current, cc.Proposed, "settings_path", "backup_path"}), err
	}}
