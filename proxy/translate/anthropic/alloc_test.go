package anthropic_test

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/internal/bigbody"
)

// TestDecodeRequestAllocation holds the request decoder to one pass over
// the body (bench/NOTES.md, "Request decoding"): decoding the 1 MB
// 200-turn request allocates at most twice the body — its text once as
// the model's strings, plus the model itself. Nested json.Unmarshal calls
// over json.RawMessage parts allocated six times the body.
func TestDecodeRequestAllocation(t *testing.T) {
	bigbody.DecodeAllocation(t, anthropic.Codec, 2, 1)
}
