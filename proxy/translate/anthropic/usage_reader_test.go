package anthropic

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/internal/jsontest"
)

// The usage reader reads what json.Unmarshal reads (conv.UsageReader).
func TestUsageReaderIsUnmarshal(t *testing.T) { jsontest.TestUsageReader[wireUsage](t) }

func FuzzUsageReader(f *testing.F) { jsontest.FuzzUsageReader[wireUsage](f) }
