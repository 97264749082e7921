package anthropic

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// The requests a real Claude Code sent (proxy/translate/testdata/captured):
// decoded, then encoded again for an Anthropic upstream.
func TestCapturedClaudeCode(t *testing.T) {
	for _, c := range []struct {
		file string
		// roles of the decoded messages, and the re-encoded request's
		// thinking and context_management
		roles    []conv.Role
		thinking string
		cm       bool
	}{
		{"claude-code-turn1.json", []conv.Role{conv.RoleUser, conv.RoleSystem}, `{"type":"adaptive","display":"omitted"}`, true},
		// the tool call has no thinking before it (the fake upstream sent
		// none), so thinking and its clear_thinking edit are left off
		{"claude-code-turn2.json", []conv.Role{conv.RoleUser, conv.RoleSystem, conv.RoleAssistant, conv.RoleUser}, ``, false},
	} {
		t.Run(c.file, func(t *testing.T) {
			body, err := os.ReadFile("../testdata/captured/" + c.file)
			if err != nil {
				t.Fatalf("captured request missing (proxy/translate/testdata/captured): %v", err)
			}
			r, err := Codec.DecodeRequest(body)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.System) != 2 || strings.Contains(r.System[0].Text, billingPrefix) || compact(string(r.System[0].CacheControl)) != `{"type":"ephemeral"}` {
				t.Errorf("system = %+v", r.System)
			}
			var roles []conv.Role
			for _, m := range r.Messages {
				roles = append(roles, m.Role)
			}
			if !reflect.DeepEqual(roles, c.roles) {
				t.Errorf("roles %v, want %v", roles, c.roles)
			}
			if len(r.Tools) != 12 || len(r.Dropped) != 0 {
				t.Errorf("%d tools, dropped %v", len(r.Tools), r.Dropped)
			}
			if r.Reasoning != (conv.Reasoning{Enabled: true, Effort: "medium"}) || *r.MaxTokens != 128000 || !r.Stream {
				t.Errorf("reasoning %+v, max_tokens %d, stream %v", r.Reasoning, *r.MaxTokens, r.Stream)
			}
			if !strings.Contains(r.User, `"session_id":"00000000-0000-4000-8000-000000000001"`) {
				t.Errorf("user = %q", r.User)
			}
			var keys []string
			for k := range r.Extra {
				keys = append(keys, k)
			}
			if len(keys) != 3 || r.Extra["metadata"] == nil || r.Extra["context_management"] == nil || compact(string(r.Extra["thinking"])) != `{"display":"omitted"}` {
				t.Errorf("extra = %v", keys)
			}

			b, err := Codec.EncodeRequest(r)
			if err != nil {
				t.Fatal(err)
			}
			got := pick(t, b, "thinking", "context_management", "output_config", "max_tokens")
			want := map[string]any{"output_config": map[string]any{"effort": "medium"}, "max_tokens": 128000.0}
			if c.thinking != "" {
				want["thinking"] = mustAny(t, []byte(c.thinking))
			}
			if c.cm {
				want["context_management"] = mustAny(t, r.Extra["context_management"])
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("re-encoded %s", conv.Marshal(got))
			}
			var w struct {
				Messages []struct {
					Role    string            `json:"role"`
					Content []json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(b, &w); err != nil {
				t.Fatal(err)
			}
			// the system message joins the first user turn as its last text
			first := w.Messages[0]
			last := string(first.Content[len(first.Content)-1])
			if first.Role != "user" || !strings.Contains(last, `"text":"System: # Environment`) || len(w.Messages) != len(c.roles)-1 {
				t.Errorf("%d messages, first turn ends with %.80s", len(w.Messages), last)
			}
		})
	}
}
