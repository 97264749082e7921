package responses_test

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/internal/bigbody"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// TestDecodeRequestAllocation holds the request decoder to one pass over
// the body (bench/NOTES.md, "Request decoding"): decoding the 1 MB
// 200-turn request allocates at most 2.5 times the body — its text once
// as the model's strings, plus the items read and the model. Nested
// json.Unmarshal calls over json.RawMessage parts allocated 7.3 times it.
func TestDecodeRequestAllocation(t *testing.T) {
	bigbody.DecodeAllocation(t, responses.Codec, 5, 2)
}
