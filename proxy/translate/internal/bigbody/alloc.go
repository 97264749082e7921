package bigbody

import (
	"runtime"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// DecodeAllocation fails t when decoding c's big request allocates more
// than num/den times the body: the bound each codec's request decoder is
// held to, for reading the body in one pass (bench/NOTES.md, "Request
// decoding").
func DecodeAllocation(t *testing.T, c conv.Codec, num, den uint64) {
	t.Helper()
	body, err := Body(c.Protocol())
	if err != nil {
		t.Fatal(err)
	}
	got := allocated(t, func() {
		if _, err := c.DecodeRequest(body); err != nil {
			t.Fatal(err)
		}
	})
	if want := num * uint64(len(body)) / den; got > want {
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
