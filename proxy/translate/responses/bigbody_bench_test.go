package responses_test

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/internal/bigbody"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// BenchmarkBigRequest decodes a ~1 MB Claude Code-like request of 200
// turns in this protocol and encodes it for every other one
// (bench/NOTES.md, "Request decoding").
func BenchmarkBigRequest(b *testing.B) { bigbody.Bench(b, responses.Codec) }
