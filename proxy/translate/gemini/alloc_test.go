package gemini_test

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/gemini"
	"github.com/ccmesh/ccmesh/proxy/translate/internal/bigbody"
)

// TestDecodeRequestAllocation holds the request decoder to one pass over
// the body (bench/NOTES.md, "Request decoding"): decoding the 1 MB
// 200-turn request allocates at most twice the body — its text once as
// the model's strings, plus the model itself (1.64 times the 984 355-byte
// body when it was written). Nested json.Unmarshal calls over
// json.RawMessage parts allocated 7.3 times the body.
func TestDecodeRequestAllocation(t *testing.T) {
	bigbody.DecodeAllocation(t, gemini.Codec, 2, 1)
}
