package chat

import (
	"testing"
	"unsafe"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// TestOneTextNotCopied: a turn's or a tool result's only text goes into
// the Chat message as it is; Claude Code's tool results are 100 KB and
// more, and copying each one doubled what encoding a request allocated
// (bench/NOTES.md, "Request decoding").
func TestOneTextNotCopied(t *testing.T) {
	text := "the tool's output, long in real requests"
	for _, c := range []struct {
		name string
		got  func() string
	}{
		{"tool result", func() string {
			s, _, _ := toolResultOut(&conv.Part{Kind: conv.PartToolResult, Content: []conv.Part{{Kind: conv.PartText, Text: text}}})
			return s
		}},
		{"tool result with an empty text", func() string {
			s, _, _ := toolResultOut(&conv.Part{Kind: conv.PartToolResult, Content: []conv.Part{{Kind: conv.PartText}, {Kind: conv.PartText, Text: text}}})
			return s
		}},
		{"assistant text", func() string {
			return joinText([]conv.Part{{Kind: conv.PartToolCall}, {Kind: conv.PartText, Text: text}})
		}},
		{"system", func() string { return joinNonEmpty([]string{"", text}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.got()
			if got != text {
				t.Fatalf("got %q, want %q", got, text)
			}
			if unsafe.StringData(got) != unsafe.StringData(text) {
				t.Errorf("the text was copied")
			}
		})
	}
	t.Run("two texts", func(t *testing.T) {
		if got, want := joinNonEmpty([]string{"a", "", "b", "c"}), "a\n\nb\n\nc"; got != want {
			t.Errorf("joinNonEmpty = %q, want %q", got, want)
		}
	})
}
