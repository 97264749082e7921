package translate

import (
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
)

// BenchmarkCountTokensHostile is the count_tokens estimate of a 30 MB
// request of one word: the body decoded, then counted.
func BenchmarkCountTokensHostile(b *testing.B) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("a", 30<<20) + `"}]}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r, err := Codec(anthropic.Protocol).DecodeRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		CountTokens(r)
	}
}
