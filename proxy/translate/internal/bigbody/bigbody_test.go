package bigbody

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/gemini"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// TestBodySizes keeps the generated requests near the 1 MB the benchmarks
// are about.
func TestBodySizes(t *testing.T) {
	for _, p := range []conv.Protocol{anthropic.Protocol, chat.Protocol, responses.Protocol, gemini.Protocol} {
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
