package translate

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/gemini"
	"github.com/ccmesh/ccmesh/proxy/translate/internal/bigbody"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// BenchmarkTranslateBig is the 200-turn request through translate, client
// decode to endpoint encode, for the three pairs bench/ measures
// (bench/NOTES.md, "Request decoding").
func BenchmarkTranslateBig(b *testing.B) {
	for _, c := range []struct {
		name     string
		from, to conv.Protocol
	}{
		{"claude-to-chat", anthropic.Protocol, chat.Protocol},
		{"responses-to-chat", responses.Protocol, chat.Protocol},
		{"gemini-to-chat", gemini.Protocol, chat.Protocol},
	} {
		body, err := bigbody.Body(c.from)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				bigbody.Translate(b, Codec(c.from), Codec(c.to), body)
			}
			// bench/report holds B/op to a multiple of the body's size
			b.ReportMetric(float64(len(body)), "body-bytes")
		})
	}
}
