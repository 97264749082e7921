package translate

import (
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
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
