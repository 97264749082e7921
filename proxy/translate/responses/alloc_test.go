package responses_test

import (
	"runtime"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/responses"
	"github.com/ccmesh/ccmesh/proxy/translate/internal/bigbody"
)

// TestDecodeRequestAllocation holds the request decoder to one pass over
// the body (bench/NOTES.md, "Request decoding"): decoding the 1 MB
// 200-turn request allocates at most 2.5 times the body — its text once
// as the model's strings, plus the items read and the model. Nested
// json.Unmarshal calls over json.RawMessage parts allocated 7.3 times it.
func TestDecodeRequestAllocation(t *testing.T) {
	body, err := bigbody.Body("openai-responses")
	if err != nil {
		t.Fatal(err)
	}
	got := allocated(t, func() {
		if _, err := responses.Codec.DecodeRequest(body); err != nil {
			t.Fatal(err)
		}
	})
	if want := 5 * uint64(len(body)) / 2; got > want {
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
