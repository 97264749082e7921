package translate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// The count_tokens estimate bounds its BPE work whatever the request
// holds: no piece longer than bpePiece reaches the tokenizer, no more than
// bpeBudget bytes of one count do, and the rest is estimated from its
// length (docs/BEHAVIOUR.md#inbound-api).
func TestCountTokensBounded(t *testing.T) {
	word := strings.Repeat("a", 3<<20)
	prose := strings.Repeat("the quick brown fox jumps over the lazy dog. ", (3<<20)/45)
	text := func(s string) *conv.Request {
		return &conv.Request{Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartText, Text: s}}}}}
	}
	many := &conv.Request{}
	for range 300 {
		many.Messages = append(many.Messages, conv.Message{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartText, Text: prose[:10<<10]}}})
	}
	args := &conv.Request{Messages: []conv.Message{{Role: conv.RoleAssistant, Parts: []conv.Part{{Kind: conv.PartToolCall, Name: "Write", Args: `{"content":"` + word + `"}`}}}}}
	tools := &conv.Request{Tools: []conv.Tool{{Name: "Big", Description: prose, Schema: []byte(`{"description":"` + word + `"}`)}}}
	for _, c := range []struct {
		name  string
		count func() int64
		size  int
	}{
		{"one word of 3 MiB", func() int64 { return CountTokens(text(word)) }, len(word)},
		{"3 MiB of prose", func() int64 { return CountTokens(text(prose)) }, len(prose)},
		{"300 messages of 10 KiB", func() int64 { return CountTokens(many) }, 300 * 10 << 10},
		{"a tool call's arguments", func() int64 { return CountTokens(args) }, len(args.Messages[0].Parts[0].Args)},
		{"tool schemas", func() int64 { return CountTokens(tools) }, len(prose) + len(tools.Tools[0].Schema)},
		{"an answer's text", func() int64 { return CountText(word + prose) }, len(word) + len(prose)},
	} {
		t.Run(c.name, func(t *testing.T) {
			longest, total := 0, 0
			orig := bpeCount
			// What reaches the tokenizer is the point here, not its count:
			// a stand-in keeps the test quick under -race.
			bpeCount = func(s string) (int, error) {
				longest, total = max(longest, len(s)), total+len(s)
				return len(s) / 4, nil
			}
			defer func() { bpeCount = orig }()
			n := c.count()
			if longest > bpePiece || total > bpeBudget {
				t.Errorf("BPE saw %d bytes in pieces of up to %d, want at most %d in pieces of up to %d", total, longest, bpeBudget, bpePiece)
			}
			if lo, hi := int64(c.size/10), int64(c.size/2); n < lo || n > hi {
				t.Errorf("estimate %d tokens for %d bytes, want %d–%d", n, c.size, lo, hi)
			}
		})
	}
}

// Text within the budget is counted as the tokenizer counts it whole, but
// for the pieces' edges: prose cut between words loses nothing.
func TestCountTokensPieces(t *testing.T) {
	for _, s := range []string{
		"hello world",
		strings.Repeat("hello world ", 5000),      // 60 KB, cut at spaces
		strings.Repeat("你好，世界。", 3000),            // no spaces: cut between characters
		strings.Repeat("line of code();\n", 4000), // cut after newlines
	} {
		whole, err := encoder().Count(s)
		if err != nil {
			t.Fatal(err)
		}
		got := CountText(s)
		if d := got - int64(whole); d < 0 || d > int64(len(s)/bpePiece+1)*2 {
			t.Errorf("%d bytes %.12q…: %d tokens in pieces, %d whole", len(s), s, got, whole)
		}
	}
}

// TokensAtMost is never under the estimate, whatever counts more tokens
// than it has bytes (a small image, a tool without a schema, a key in
// another case), and gives no bound for a body with \u escapes.
func TestTokensAtMost(t *testing.T) {
	for _, tt := range []struct {
		name  string
		p     conv.Protocol
		body  string
		bound bool
	}{
		{"text", anthropic.Protocol, `{"model":"m","messages":[{"role":"user","content":"the quick brown fox"}]}`, true},
		{"a tiny image", anthropic.Protocol, `{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]}]}`, true},
		{"tools without schemas", anthropic.Protocol, `{"messages":[],"tools":[{"name":"a"},{"name":"b"},{"NAME":"c"},{"Name":"d"}]}`, true},
		{"a chat image and a bare function", chat.Protocol, `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:x"}}]}],"tools":[{"type":"function","function":{"name":"f"}}]}`, true},
		{"a namespace", responses.Protocol, `{"input":"hi","tools":[{"type":"namespace","name":"mcp__x","tools":[{"type":"function","name":"read"}]},{"type":"input_image"}]}`, true},
		{"an escape", anthropic.Protocol, `{"messages":[{"role":"user","content":[{"type":"im\u0061ge","source":{"type":"base64","media_type":"image/png","data":"x"}}]}]}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Codec(tt.p).DecodeRequest([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			n := CountTokens(r)
			bound, ok := TokensAtMost([]byte(tt.body))
			if ok != tt.bound || ok && bound < n {
				t.Errorf("TokensAtMost = %d, %v; the estimate is %d", bound, ok, n)
			}
		})
	}
	for _, name := range []string{"claude-code-turn1.json", "claude-code-turn2.json", "codex-turn1.json"} {
		body, err := os.ReadFile(filepath.Join("testdata", "captured", name))
		if err != nil {
			t.Fatal(err)
		}
		p := anthropic.Protocol
		if strings.HasPrefix(name, "codex") {
			p = responses.Protocol
		}
		r, err := Codec(p).DecodeRequest(body)
		if err != nil {
			t.Fatal(err)
		}
		if bound, ok := TokensAtMost(body); ok && bound < CountTokens(r) {
			t.Errorf("%s: bound %d under the estimate %d", name, bound, CountTokens(r))
		}
	}
}
