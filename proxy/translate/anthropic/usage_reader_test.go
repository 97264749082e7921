package anthropic

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/internal/jsontest"
)

// The usage reader reads what json.Unmarshal reads (conv.UsageReader).
func TestUsageReaderIsUnmarshal(t *testing.T) {
	for _, b := range jsontest.UsageSeeds {
		jsontest.CheckUsageMember[wireUsage](t, []byte(b))
	}
}

func FuzzUsageReader(f *testing.F) {
	for _, b := range jsontest.UsageSeeds {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) { jsontest.CheckUsageMember[wireUsage](t, b) })
}
