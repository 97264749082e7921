package chat_test

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/internal/bigbody"
)

// TestDecodeRequestAllocation holds the request decoder to one pass over
// the body (bench/NOTES.md, "Request decoding"): decoding the 1 MB
// 200-turn request allocates at most twice the body — its text once as
// the model's strings, plus the model itself. Unmarshalling the body
// twice (for Extra, then for the members) and each content again
// allocated 4.8 times the body.
func TestDecodeRequestAllocation(t *testing.T) {
	bigbody.DecodeAllocation(t, chat.Codec, 2, 1)
}
