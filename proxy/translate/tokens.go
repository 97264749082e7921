package translate

import (
	"sync"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/tiktoken-go/tokenizer"
)

// The estimate uses the cl100k_base byte-pair encoding, embedded in the
// binary (no download). Anthropic does not publish Claude's vocabulary, so
// the count is an estimate and the proxy marks its answer as one.
var (
	bpeOnce sync.Once
	bpe     tokenizer.Codec
)

func encoder() tokenizer.Codec {
	bpeOnce.Do(func() {
		// Get fails only for an encoding the library does not ship.
		c, err := tokenizer.Get(tokenizer.Cl100kBase)
		if err != nil {
			panic("translate: " + err.Error())
		}
		bpe = c
	})
	return bpe
}

// Per-item overheads, as the chat formats frame each message and tool.
const (
	perMessage = 4
	perTool    = 8
	perImage   = 1600 // a typical image's cost; its bytes are not text
)

// CountTokens estimates the input tokens of r: the system prompt, every
// message's text, tool calls and results, and the tools' names,
// descriptions and schemas (docs/BEHAVIOUR.md#translation).
func CountTokens(r *conv.Request) int64 {
	var n int64
	for _, p := range r.System {
		n += partTokens(p)
	}
	for _, m := range r.Messages {
		n += perMessage
		for _, p := range m.Parts {
			n += partTokens(p)
		}
	}
	for _, t := range r.Tools {
		n += perTool + count(t.Name) + count(t.Description) + count(string(t.Schema)) + count(string(t.Format))
	}
	return max(1, n)
}

func partTokens(p conv.Part) int64 {
	switch p.Kind {
	case conv.PartImage:
		return perImage
	case conv.PartDocument:
		if p.Text != "" {
			return count(p.Text)
		}
		return int64(len(p.Data)) * 3 / 4 / 4 // decoded bytes at four per token
	case conv.PartToolCall:
		return count(p.Name) + count(p.Args)
	case conv.PartToolResult:
		var n int64
		for _, c := range p.Content {
			n += partTokens(c)
		}
		return n
	}
	return count(p.Text)
}

// count is the BPE token count of s.
func count(s string) int64 {
	if s == "" {
		return 0
	}
	n, err := encoder().Count(s)
	if err != nil {
		return int64(len(s)+3) / 4
	}
	return int64(n)
}

// CountText is the BPE token count of plain text (an answer's, for an
// output estimate).
func CountText(s string) int64 { return count(s) }
