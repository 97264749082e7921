package chat_test

import (
	"runtime"
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
	body, err := bigbody.Body("openai-chat")
	if err != nil {
		t.Fatal(err)
	}
	got := allocated(t, func() {
		if _, err := chat.Codec.DecodeRequest(body); err != nil {
			t.Fatal(err)
		}
	})
	if want := 2 * uint64(len(body)); got > want {
		t.Errorf("DecodeRequest of a %d-byte body allocated %d bytes, want at most %d", len(body), got, want)
	}
}

// allocated is the bytes fn allocates, the least of a few runs.
func allocated(t *testing.T, fn func()) uint64 {
	t.Helper()
	least := ^uint64(0)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		fn()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}
