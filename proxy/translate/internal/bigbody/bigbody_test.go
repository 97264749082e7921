package bigbody

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// TestBodySizes keeps the generated requests near the 1 MB the benchmarks
// are about.
func TestBodySizes(t *testing.T) {
	for _, p := range []conv.Protocol{conv.Anthropic, conv.Chat, conv.Responses, conv.Gemini} {
		t.Run(string(p), func(t *testing.T) {
			b, err := Body(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(b); got < 900_000 || got > 1_300_000 {
				t.Errorf("len(Body(%s)) = %d, want about 1 MB", p, got)
			}
			t.Logf("%s: %d bytes", p, len(b))
		})
	}
}
