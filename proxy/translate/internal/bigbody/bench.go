package bigbody

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/gemini"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// codecs are every codec, in the order the benchmarks run them.
var codecs = []conv.Codec{anthropic.Codec, chat.Codec, responses.Codec, gemini.Codec}

// Bench runs from's codec on the big request: its decode alone, then its
// decode followed by the request encoder of every other protocol (what an
// attempt on an endpoint of that protocol costs the proxy).
func Bench(b *testing.B, from conv.Codec) {
	body, err := Body(from.Protocol())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := from.DecodeRequest(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, to := range codecs {
		if to.Protocol() == from.Protocol() {
			continue
		}
		b.Run("to-"+string(to.Protocol()), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				Translate(b, from, to, body)
			}
		})
	}
}

// Translate decodes body with from and encodes it with to, as the proxy
// does for an attempt (the model renamed, the stream flag kept).
func Translate(b *testing.B, from, to conv.Codec, body []byte) []byte {
	r, err := from.DecodeRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	r.Model = "target-model"
	out, err := to.EncodeRequest(r)
	if err != nil {
		b.Fatal(err)
	}
	return out
}
