package translate

import (
	"bytes"
	"sync"
	"unicode/utf8"

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

// Bounds of the BPE work of one count (docs/BEHAVIOUR.md#inbound-api).
// Byte-pair merging costs more than linear time in the length of a word,
// and a request's text has no bound but max_body_bytes: 30 MB of one word
// took 10 s of CPU and 900 MB. Text is counted in pieces of at most
// bpePiece bytes, and past bpeBudget bytes of one count at four bytes a
// token, as a body the codec cannot read is. A MiB of text is more than a
// 200k-token context holds, so a real request is counted whole.
const (
	bpePiece  = 16 << 10
	bpeBudget = 1 << 20
)

// bpeCount is the tokenizer's count of one piece (a variable so a test can
// watch the pieces).
var bpeCount = func(s string) (int, error) { return encoder().Count(s) }

// counter counts one request's or one text's tokens within bpeBudget.
type counter struct{ left int }

func newCounter() *counter { return &counter{left: bpeBudget} }

// CountTokens estimates the input tokens of r: the system prompt, every
// message's text, tool calls and results, and the tools' names,
// descriptions and schemas (docs/BEHAVIOUR.md#translation).
func CountTokens(r *conv.Request) int64 {
	c := newCounter()
	var n int64
	for _, p := range r.System {
		n += c.part(p)
	}
	for _, m := range r.Messages {
		n += perMessage
		for _, p := range m.Parts {
			n += c.part(p)
		}
	}
	for _, t := range r.Tools {
		n += perTool + c.count(t.Name) + c.count(t.Description) + c.count(string(t.Schema)) + c.count(string(t.Format))
	}
	return max(1, n)
}

func (c *counter) part(p conv.Part) int64 {
	switch p.Kind {
	case conv.PartImage:
		return perImage
	case conv.PartDocument:
		if p.Text != "" {
			return c.count(p.Text)
		}
		return int64(len(p.Data)) * 3 / 4 / 4 // decoded bytes at four per token
	case conv.PartToolCall:
		return c.count(p.Name) + c.count(p.Args)
	case conv.PartToolResult:
		var n int64
		for _, x := range p.Content {
			n += c.part(x)
		}
		return n
	}
	return c.count(p.Text)
}

// count is the token count of s: BPE piece by piece while the budget
// lasts, then four bytes a token.
func (c *counter) count(s string) int64 {
	var n int64
	for s != "" {
		if c.left <= 0 {
			return n + bytesEstimate(s)
		}
		piece := s[:cutPiece(s, min(bpePiece, c.left))]
		s = s[len(piece):]
		c.left -= len(piece)
		k, err := bpeCount(piece)
		if err != nil {
			n += bytesEstimate(piece)
			continue
		}
		n += int64(k)
	}
	return n
}

func bytesEstimate(s string) int64 { return int64(len(s)+3) / 4 }

// cutPiece is where the first piece of s of at most n bytes ends: after
// the last space or newline in its final 256 bytes, so words stay whole
// where there are words, else at a character boundary.
func cutPiece(s string, n int) int {
	if len(s) <= n {
		return len(s)
	}
	for i := n; i > 0 && i > n-256; i-- {
		if s[i-1] == ' ' || s[i-1] == '\n' {
			return i
		}
	}
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return n
}

// TokensAtMost bounds from above what CountTokens counts of the request
// body, of any protocol, without decoding it: a token holds at least one
// byte of text, and text is no longer decoded than in JSON; an image
// counts perImage whatever its bytes (every image part's JSON says
// "image"), and a tool its framing and, without a schema, the empty one's
// (every tool's JSON has a "name" key, which encoding/json matches in any
// case). A body with a \u escape may spell those words otherwise: ok is
// false, there is no bound.
func TokensAtMost(body []byte) (n int64, ok bool) {
	if bytes.Contains(body, []byte(`\u`)) {
		return 0, false
	}
	const perName = perTool + 16
	return int64(len(body)) + perImage*countFold(body, "image") + perName*countFold(body, `"name"`), true
}

// countFold counts the occurrences of word (ASCII) in b, in any case.
func countFold(b []byte, word string) int64 {
	var n int64
	for i := 0; i+len(word) <= len(b); i++ {
		if b[i]|0x20 == word[0]|0x20 && bytes.EqualFold(b[i:i+len(word)], []byte(word)) {
			n++
			i += len(word) - 1
		}
	}
	return n
}

// CountText is the token count of plain text (an answer's, for an output
// estimate), within the same bounds.
func CountText(s string) int64 { return newCounter().count(s) }
