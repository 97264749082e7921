package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// GeminiCLI is GET /api/gemini-cli: how to point Gemini CLI at ccmesh, and
// the change "Connect Gemini CLI" would make to two of its files
// (docs/BEHAVIOUR.md#admin-api): ~/.gemini/.env, where it reads
// GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY, and ~/.gemini/settings.json,
// which must select API-key auth and turns usage statistics off.
type GeminiCLI struct {
	BaseURL string `json:"base_url"`
	// Exports are the same two variables as shell lines.
	Exports string `json:"exports"`
	// Files are the .env file, then settings.json.
	Files []ClientFile `json:"files"`
	// Hash names this preview: every file's current and proposed text.
	Hash string `json:"hash"`
}

// ClientFile is one file of a preview: its path, its text now ("" when
// there is none) and the text Connect would write.
type ClientFile struct {
	Name     string `json:"name"` // "env" or "settings"
	Path     string `json:"path"`
	Current  string `json:"current"`
	Proposed string `json:"proposed"`
}

const (
	geminiBaseURLEnv = "GOOGLE_GEMINI_BASE_URL"
	geminiKeyEnv     = "GEMINI_API_KEY"
	// geminiAuthType is the auth Gemini CLI must select: with a base URL
	// set and none selected it picks one that headless mode refuses.
	geminiAuthType = "gemini-api-key"
)

// geminiValues are the variables Connect sets: ccmesh's address (Gemini
// CLI adds /v1beta/models/… itself) and the client token, or, without
// one, a word — ccmesh then takes any key, and Gemini CLI starts only
// with one set.
func geminiValues(h Host) map[string]string {
	key := "ccmesh"
	if tok := h.ClientToken(); tok != "" {
		key = tok
	}
	return map[string]string{geminiBaseURLEnv: strings.TrimSuffix(h.ProxyURL(), "/"), geminiKeyEnv: key}
}

var geminiKeys = []string{geminiBaseURLEnv, geminiKeyEnv}

// geminiDir is $GEMINI_CLI_HOME/.gemini, or ~/.gemini: Gemini CLI takes
// GEMINI_CLI_HOME as the home its .gemini directory is in.
func geminiDir(h Host) (string, error) {
	if dir := h.Getenv("GEMINI_CLI_HOME"); dir != "" {
		return filepath.Join(dir, ".gemini"), nil
	}
	return inHome(h, ".gemini")
}

// geminiPlan reads both files and computes their new texts.
func geminiPlan(h Host) (GeminiCLI, error) {
	values := geminiValues(h)
	g := GeminiCLI{BaseURL: values[geminiBaseURLEnv]}
	for _, k := range geminiKeys {
		g.Exports += fmt.Sprintf("export %s=%s\n", k, ShellQuote(values[k]))
	}
	dir, err := geminiDir(h)
	if err != nil {
		return g, err
	}
	env, err := geminiEnvFile(filepath.Join(dir, ".env"), values)
	if err != nil {
		return g, err
	}
	settings, err := geminiSettingsFile(filepath.Join(dir, "settings.json"))
	if err != nil {
		return g, err
	}
	g.Files = []ClientFile{env, settings}
	g.Hash = planHash(env.Current, env.Proposed, settings.Current, settings.Proposed)
	return g, nil
}

// geminiEnvFile is the .env file with the two variables set, every other
// line kept; the result is read back as dotenv reads it and must differ
// only in them.
func geminiEnvFile(path string, values map[string]string) (ClientFile, error) {
	f := ClientFile{Name: "env", Path: path}
	cur, err := readClientFile(path)
	if err != nil {
		return f, err
	}
	f.Current = string(cur)
	f.Proposed, err = editDotenv(f.Current, geminiKeys, values)
	if err == nil {
		err = checkDotenv(f.Current, f.Proposed, values)
	}
	if err != nil {
		return f, conflict("gemini_env_uneditable",
			"ccmesh cannot change %s safely (%v); set the variables shown by hand", path, err)
	}
	return f, nil
}

// geminiSettingsFile is settings.json with security.auth.selectedType set
// to API-key auth and privacy.usageStatisticsEnabled false (else Gemini
// CLI sends usage statistics and an installation id to Google). Every
// other value stays as written, as in the Claude Code writer.
func geminiSettingsFile(path string) (ClientFile, error) {
	f := ClientFile{Name: "settings", Path: path}
	cur, err := readClientFile(path)
	if err != nil {
		return f, err
	}
	f.Current = string(cur)
	var doc map[string]json.RawMessage
	if len(bytes.TrimSpace(cur)) > 0 {
		if err := json.Unmarshal(cur, &doc); err != nil {
			return f, conflict("gemini_settings_unreadable",
				"%s is not JSON ccmesh can read (%v; comments are not kept either); fix or move it, then try again — ccmesh will not overwrite it", path, err)
		}
	}
	if doc == nil {
		doc = map[string]json.RawMessage{}
	}
	if err := setJSONPath(doc, geminiAuthType, "security", "auth", "selectedType"); err != nil {
		return f, err
	}
	if err := setJSONPath(doc, false, "privacy", "usageStatisticsEnabled"); err != nil {
		return f, err
	}
	if f.Proposed, err = jsonIndented(doc); err != nil {
		return f, fmt.Errorf("write %s: %w", path, err)
	}
	return f, nil
}

// setJSONPath sets doc.path[0].….path[n-1] to v; an object on the way that
// is missing, or is not an object, becomes one.
func setJSONPath(doc map[string]json.RawMessage, v any, path ...string) error {
	if len(path) == 1 {
		raw, err := jsonText(v)
		doc[path[0]] = raw
		return err
	}
	var inner map[string]json.RawMessage
	if json.Unmarshal(doc[path[0]], &inner) != nil || inner == nil {
		inner = map[string]json.RawMessage{}
	}
	if err := setJSONPath(inner, v, path[1:]...); err != nil {
		return err
	}
	raw, err := jsonText(inner)
	doc[path[0]] = raw
	return err
}

// GeminiCLIClient is Connect Gemini CLI: its .env and settings.json.
var GeminiCLIClient = Client{Preview: "GET /api/gemini-cli", Changed: "gemini_config_changed",
	Plan: func(h Host) (any, Plan, error) {
		g, err := geminiPlan(h)
		if err != nil {
			return g, Plan{}, err
		}
		// The reply names each file by its name: env_path and
		// env_backup_path, settings_path and settings_backup_path.
		p := Plan{Hash: g.Hash}
		for _, f := range g.Files {
			p.Files = append(p.Files, FilePlan{f.Path, f.Current, f.Proposed, f.Name + "_path", f.Name + "_backup_path"})
		}
		return g, p, nil
	}}
