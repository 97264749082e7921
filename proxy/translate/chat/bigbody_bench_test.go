package chat_test

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/internal/bigbody"
)

// BenchmarkBigRequest decodes a ~1 MB Claude Code-like request of 200
// turns in this protocol and encodes it for every other one
// (bench/NOTES.md, "Request decoding").
func BenchmarkBigRequest(b *testing.B) { bigbody.Bench(b, chat.Codec) }
