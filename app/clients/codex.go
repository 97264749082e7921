package clients

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Codex is GET /api/codex: how to point Codex CLI at ccmesh, and the
// change "Connect Codex" would make to its config.toml
// (docs/BEHAVIOUR.md#ui). The file is edited as text — the provider block
// and the model_provider line, nothing else — so the user's comments and
// layout survive; a TOML parser checks the result.
type Codex struct {
	BaseURL    string `json:"base_url"`
	Block      string `json:"block"`   // the [model_providers.ccmesh] block
	Exports    string `json:"exports"` // the shell line for the key variable
	ConfigPath string `json:"config_path"`
	Current    string `json:"current"`
	Proposed   string `json:"proposed"`
	Hash       string `json:"hash"`
	// Env and Preview are Exports and Proposed under the names scripts
	// use (docs/BEHAVIOUR.md#admin-api).
	Env     string `json:"env"`
	Preview string `json:"preview"`
}

// codexProvider is the provider id ccmesh adds; Codex ignores a redefined
// built-in "openai", so it has its own.
const (
	codexProvider = "ccmesh"
	codexKeyEnv   = "CCMESH_API_KEY"
)

// codexBlock is the provider table for this proxy. ccmesh serves no
// WebSocket (docs/BEHAVIOUR.md#inbound-api): Codex must not try one.
func codexBlock(h Host) string {
	return fmt.Sprintf("[model_providers.%s]\nname = \"ccmesh\"\nbase_url = %q\nenv_key = %q\nwire_api = \"responses\"\nsupports_websockets = false\n",
		codexProvider, strings.TrimSuffix(h.ProxyURL(), "/")+"/v1", codexKeyEnv)
}

// codexExports is the shell line that gives Codex its key: the client
// token when one is set (ccmesh then requires it), else any word.
func codexExports(h Host) string {
	key := "ccmesh"
	if tok := h.ClientToken(); tok != "" {
		key = tok
	}
	return fmt.Sprintf("export %s=%s\n", codexKeyEnv, ShellQuote(key))
}

// codexConfigPath is $CODEX_HOME/config.toml, or ~/.codex/config.toml.
func codexConfigPath(h Host) (string, error) {
	if dir := h.Getenv("CODEX_HOME"); dir != "" {
		return filepath.Join(dir, "config.toml"), nil
	}
	return inHome(h, ".codex", "config.toml")
}

var (
	tomlTableHeader   = regexp.MustCompile(`^\s*\[`)
	tomlProviderLine  = regexp.MustCompile(`^\s*model_provider\s*=`)
	tomlProviderTable = regexp.MustCompile(`^\s*\[\s*model_providers\s*\.\s*("ccmesh"|'ccmesh'|ccmesh)\s*\]\s*(#.*)?$`)
)

// codexPlan reads config.toml and computes the new text: model_provider
// set to ccmesh (replacing the top-level line, or added first), and the
// [model_providers.ccmesh] block replaced or appended. Everything else is
// kept byte for byte.
func codexPlan(h Host) (Codex, error) {
	path, err := codexConfigPath(h)
	if err != nil {
		return Codex{}, err
	}
	c := Codex{BaseURL: strings.TrimSuffix(h.ProxyURL(), "/") + "/v1", Block: codexBlock(h), Exports: codexExports(h), ConfigPath: path}
	cur, err := readClientFile(path)
	if err != nil {
		return c, err
	}
	c.Current = string(cur)
	var doc map[string]any
	if err := toml.Unmarshal(cur, &doc); err != nil {
		return c, conflict("codex_config_unreadable",
			"%s is not valid TOML (%v); fix or move it, then try again — ccmesh will not overwrite it", path, err)
	}
	c.Proposed = editCodexConfig(c.Current, c.Block)
	if err := checkCodexConfig(c.Proposed, c.BaseURL); err != nil {
		return c, conflict("codex_config_uneditable",
			"ccmesh cannot change %s safely (%v); add the block shown by hand", path, err)
	}
	c.Hash = planHash(c.Current, c.Proposed)
	c.Env, c.Preview = c.Exports, c.Proposed
	return c, nil
}

// editCodexConfig is the text edit of codexPlan.
func editCodexConfig(cur, block string) string {
	lines := strings.SplitAfter(cur, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var out []string
	providerSet, inTop, skipping, replaced := false, true, false, false
	blanks := 0 // blank lines at the end of the block being replaced
	for _, l := range lines {
		if tomlTableHeader.MatchString(l) {
			if inTop && !providerSet {
				out = append(out, "model_provider = \"ccmesh\"\n\n")
				providerSet = true
			}
			if skipping {
				out = append(out, strings.Repeat("\n", blanks))
			}
			inTop = false
			skipping = false
			if tomlProviderTable.MatchString(strings.TrimRight(l, "\r\n")) {
				out = append(out, block)
				skipping, replaced = true, true
				continue
			}
		}
		switch {
		case skipping:
			if strings.TrimSpace(l) == "" {
				blanks++
			} else {
				blanks = 0
			}
			continue
		case inTop && tomlProviderLine.MatchString(l):
			out = append(out, "model_provider = \"ccmesh\"\n")
			providerSet = true
			continue
		}
		out = append(out, l)
	}
	text := strings.Join(out, "")
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if !providerSet {
		text = "model_provider = \"ccmesh\"\n" + text
	}
	if !replaced {
		if text != "" && !strings.HasSuffix(text, "\n\n") {
			text += "\n"
		}
		text += block
	}
	return text
}

// checkCodexConfig parses the proposed text and checks it says what the
// edit meant: a duplicate table, or a provider set some other way (dotted
// keys, an inline table), makes it refuse rather than guess.
func checkCodexConfig(text, baseURL string) error {
	var doc struct {
		ModelProvider  string `toml:"model_provider"`
		ModelProviders map[string]struct {
			BaseURL    string `toml:"base_url"`
			WireAPI    string `toml:"wire_api"`
			WebSockets *bool  `toml:"supports_websockets"`
		} `toml:"model_providers"`
	}
	if err := toml.Unmarshal([]byte(text), &doc); err != nil {
		return err
	}
	p := doc.ModelProviders[codexProvider]
	if doc.ModelProvider != codexProvider || p.BaseURL != baseURL || p.WireAPI != "responses" || p.WebSockets == nil || *p.WebSockets {
		return errors.New("the edited file would not select ccmesh's provider")
	}
	return nil
}

// CodexClient is Connect Codex: config.toml, with model_provider and
// the [model_providers.ccmesh] block set to ccmesh.
var CodexClient = Client{Preview: "GET /api/codex", Changed: "codex_config_changed", AlsoWritten: true,
	Plan: func(h Host) (any, Plan, error) {
		c, err := codexPlan(h)
		return c, onePlan(FilePlan{c.ConfigPath, c.Current, c.Proposed, "config_path", "backup_path"}), err
	}}
