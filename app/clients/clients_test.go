package clients

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testHost is the app as the clients see it: ccmesh on 127.0.0.1:3457,
// the user's home in a temporary directory.
type testHost struct {
	home, token string
}

func (h testHost) ProxyURL() string      { return "http://127.0.0.1:3457" }
func (h testHost) ClientToken() string   { return h.token }
func (h testHost) Home() (string, error) { return h.home, nil }
func (h testHost) Getenv(string) string  { return "" }

func TestCodexConfigEdits(t *testing.T) {
	block := "[model_providers.ccmesh]\nname = \"ccmesh\"\nbase_url = \"http://127.0.0.1:3457/v1\"\nenv_key = \"CCMESH_API_KEY\"\nwire_api = \"responses\"\nsupports_websockets = false\n"
	for _, c := range []struct{ name, in, want string }{
		{"no file", "", "model_provider = \"ccmesh\"\n\n" + block},
		{"top-level keys only", "model = \"gpt-5.5\"", "model_provider = \"ccmesh\"\nmodel = \"gpt-5.5\"\n\n" + block},
		{"tables, no provider line", "[tui]\nnotifications = true\n",
			"model_provider = \"ccmesh\"\n\n[tui]\nnotifications = true\n\n" + block},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := editCodexConfig(c.in, block)
			if got != c.want {
				t.Errorf("got:\n%q\nwant:\n%q", got, c.want)
			}
			if err := checkCodexConfig(got, "http://127.0.0.1:3457/v1"); err != nil {
				t.Errorf("result does not check: %v", err)
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	for _, s := range []string{"", "plain", "it's", "''", `a\'b`, "$(x) `y` ${z} \"q\" ;|&<>*?~ \t\n!#"} {
		out, err := exec.Command("sh", "-c", "printf %s "+ShellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("sh reads %s as %q (%v), want %q", ShellQuote(s), out, err, s)
		}
	}
}

// TestClaudeCodeKeepsValuesAsWritten: numbers keep their digits, strings
// their characters and escapes; only env.ANTHROPIC_BASE_URL changes.
func TestClaudeCodeKeepsValuesAsWritten(t *testing.T) {
	tests := []struct {
		name, value string
	}{
		{"integer past 2^53", `12345678901234567891`},
		{"negative integer past int64", `-92233720368547758070`},
		{"float as written", `1.10`},
		{"exponent", `1e3`},
		{"ampersands and angles", `"make && make test > out <in"`},
		{"escape kept", `"a \u0026 b"`},
		{"nested", `{"n":9007199254740993,"cmd":"a && b"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := testHost{home: t.TempDir()}
			path := filepath.Join(h.home, ".claude", "settings.json")
			os.MkdirAll(filepath.Dir(path), 0o700)
			if err := os.WriteFile(path, []byte(`{"v":`+tc.value+`,"env":{"W":`+tc.value+`}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			cc, err := claudeCodePlan(h)
			if err != nil {
				t.Fatalf("preview: %v", err)
			}
			want, err := jsonIndented(map[string]any{"v": rawJSON(tc.value),
				"env": map[string]any{"W": rawJSON(tc.value), "ANTHROPIC_BASE_URL": "http://127.0.0.1:3457"}})
			if err != nil {
				t.Fatal(err)
			}
			if cc.Proposed != want {
				t.Errorf("proposed\n%s\nwant\n%s", cc.Proposed, want)
			}
			if strings.Count(cc.Proposed, tc.value) != 2 && !strings.HasPrefix(tc.value, "{") {
				t.Errorf("proposed %s, want %s twice as written", cc.Proposed, tc.value)
			}
		})
	}
}

type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }
