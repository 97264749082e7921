package translate

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/gemini"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the codecs' output")

// captured lists the real clients' bodies (testdata/captured/README.md)
// with the protocol they were sent in.
var captured = []struct {
	file string
	from conv.Protocol
}{
	{"claude-code-turn1.json", anthropic.Protocol},
	{"claude-code-turn2.json", anthropic.Protocol},
	{"codex-turn1.json", responses.Protocol},
	{"codex-turn2.json", responses.Protocol},
	// Gemini CLI's files hold the whole request (gemini-cli/README.md);
	// capturedBody takes the body out. text-02 is a first turn, tool-03 the
	// turn that returns a read_file call's result.
	{"gemini-cli/text-02.json", gemini.Protocol},
	{"gemini-cli/tool-03.json", gemini.Protocol},
}

var protocols = []conv.Protocol{anthropic.Protocol, chat.Protocol, responses.Protocol, gemini.Protocol}

// capturedBody is the request body of a captured file: the file itself, or
// the body member of a Gemini CLI capture.
func capturedBody(t *testing.T, file string) []byte {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", "captured", file))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(file, "gemini-cli/") {
		return body
	}
	var whole struct {
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(body, &whole); err != nil || len(whole.Body) == 0 {
		t.Fatalf("%s: no body member (%v)", file, err)
	}
	return whole.Body
}

// translateFile decodes a captured body and encodes it for target, as the
// proxy does for an attempt (the model renamed, the stream flag kept).
func translateFile(t *testing.T, file string, from, to conv.Protocol) ([]byte, *conv.Request) {
	t.Helper()
	body := capturedBody(t, file)
	r, err := Codec(from).DecodeRequest(body)
	if err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
	c := *r
	c.Model = "target-model"
	out, err := Codec(to).EncodeRequest(&c)
	if err != nil {
		t.Fatalf("encode %s for %s: %v", file, to, err)
	}
	return out, r
}

// TestGoldenRequests pins every mapping row on real captured bodies: each
// client's request encoded for each other protocol is compared with
// testdata/golden (go test -run TestGoldenRequests -update rewrites them;
// review the diff).
func TestGoldenRequests(t *testing.T) {
	for _, c := range captured {
		for _, to := range protocols {
			if to == c.from {
				continue
			}
			name := strings.ReplaceAll(strings.TrimSuffix(c.file, ".json"), "/", "-") + "." + string(to) + ".json"
			t.Run(name, func(t *testing.T) {
				out, _ := translateFile(t, c.file, c.from, to)
				var pretty bytes.Buffer
				if err := json.Indent(&pretty, out, "", "  "); err != nil {
					t.Fatalf("encoded body is not JSON: %v", err)
				}
				pretty.WriteByte('\n')
				path := filepath.Join("testdata", "golden", name)
				if *update {
					if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if !bytes.Equal(pretty.Bytes(), want) {
					t.Errorf("%s differs from the golden file; run with -update and review the diff", name)
				}
			})
		}
	}
}

// decodeAny decodes JSON into generic values for the property checks.
func decodeAny(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The properties the goldens must have, checked on their own so a golden
// rewritten by mistake cannot hide a known fault (docs/BEHAVIOUR.md#translation).
func TestCapturedClaudeCodeToChat(t *testing.T) {
	out, _ := translateFile(t, "claude-code-turn2.json", anthropic.Protocol, chat.Protocol)
	m := decodeAny(t, out)
	msgs := m["messages"].([]any)
	first := msgs[0].(map[string]any)
	if first["role"] != "system" || strings.Contains(first["content"].(string), "x-anthropic-billing-header") {
		t.Errorf("first message: role %v, billing header kept: %v", first["role"], strings.Contains(first["content"].(string), "x-anthropic-billing-header"))
	}
	// Claude Code's environment block, a system message inside messages,
	// joins the leading one: many Chat servers take system text only first.
	for i, x := range msgs[1:] {
		if x.(map[string]any)["role"] == "system" {
			t.Errorf("message %d is a second system message", i+1)
		}
	}
	if !strings.Contains(first["content"].(string), "# Environment") {
		t.Error("the environment block did not reach the system message")
	}
	// The assistant's tool call is followed at once by its tool message.
	for i, x := range msgs {
		mm := x.(map[string]any)
		if _, ok := mm["tool_calls"]; !ok {
			continue
		}
		if _, hasContent := mm["content"]; hasContent && mm["content"] == "" {
			t.Error("assistant tool-call message with empty content")
		}
		next := msgs[i+1].(map[string]any)
		if next["role"] != "tool" {
			t.Errorf("message after the tool call is %v, want tool", next["role"])
		}
	}
	so, _ := m["stream_options"].(map[string]any)
	if m["stream"] != true || so["include_usage"] != true {
		t.Errorf("stream %v stream_options %v", m["stream"], m["stream_options"])
	}
	if _, ok := m["context_management"]; ok {
		t.Error("an Anthropic-only member reached a Chat upstream")
	}
	for _, tool := range m["tools"].([]any) {
		fn := tool.(map[string]any)["function"].(map[string]any)
		if fn["parameters"] == nil {
			t.Errorf("tool %v without parameters", fn["name"])
		}
	}
}

func TestCapturedCodexToAnthropic(t *testing.T) {
	out, req := translateFile(t, "codex-turn2.json", responses.Protocol, anthropic.Protocol)
	m := decodeAny(t, out)
	if !strings.Contains(strings.Join(req.Dropped, ","), "web_search") {
		t.Errorf("dropped = %v, want web_search named", req.Dropped)
	}
	var names []string
	for _, tool := range m["tools"].([]any) {
		tm := tool.(map[string]any)
		names = append(names, tm["name"].(string))
		if tm["name"] == "apply_patch" {
			props := tm["input_schema"].(map[string]any)["properties"].(map[string]any)
			if _, ok := props["input"]; !ok || !strings.Contains(tm["description"].(string), "grammar") && !strings.Contains(tm["description"].(string), "lark") {
				t.Errorf("apply_patch as %v", tm)
			}
		}
	}
	if !strings.Contains(strings.Join(names, ","), "apply_patch") || strings.Contains(strings.Join(names, ","), "web_search") {
		t.Errorf("tools = %v", names)
	}
	msgs := m["messages"].([]any)
	for i, x := range msgs {
		mm := x.(map[string]any)
		blocks, _ := mm["content"].([]any)
		for j, b := range blocks {
			if b.(map[string]any)["type"] == "tool_result" && j != 0 {
				t.Errorf("message %d: tool_result at block %d, want first", i, j)
			}
		}
	}
	if m["max_tokens"] == nil || m["system"] == nil {
		t.Errorf("max_tokens %v system present %v", m["max_tokens"], m["system"] != nil)
	}
	if _, ok := m["store"]; ok {
		t.Error("a Responses-only member reached an Anthropic upstream")
	}
}

func TestCapturedCodexToChat(t *testing.T) {
	out, _ := translateFile(t, "codex-turn2.json", responses.Protocol, chat.Protocol)
	m := decodeAny(t, out)
	msgs := m["messages"].([]any)
	var roles []string
	for _, x := range msgs {
		roles = append(roles, x.(map[string]any)["role"].(string))
	}
	if roles[0] != "system" || strings.Count(strings.Join(roles, ","), "system") != 1 {
		t.Errorf("roles %v: want one leading system message", roles)
	}
	joined := strings.Join(roles, ",")
	if !strings.Contains(joined, "assistant,tool") {
		t.Errorf("roles %v: the tool message must follow its assistant turn", roles)
	}
	if m["max_completion_tokens"] != nil && m["max_tokens"] != nil {
		t.Error("both max_tokens and max_completion_tokens")
	}
	if m["prompt_cache_key"] == nil {
		t.Error("prompt_cache_key lost")
	}
}

// The count_tokens estimate of Claude Code's real body is in the range
// its size implies: the BPE count of its text, not a byte guess.
func TestCountTokensCaptured(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "captured", "claude-code-count-tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Codec(anthropic.Protocol).DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	n := CountTokens(r)
	// English prose and JSON schemas run three to five bytes per token.
	if lo, hi := int64(len(body)/5), int64(len(body)/3); n < lo || n > hi {
		t.Errorf("estimate %d tokens for %d bytes, want %d–%d", n, len(body), lo, hi)
	}
	// Every message adds to it: dropping the last changes the count.
	r2 := *r
	r2.Messages = r.Messages[:len(r.Messages)-1]
	if CountTokens(&r2) >= n {
		t.Error("the estimate ignores the messages")
	}
}
