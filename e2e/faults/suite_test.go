package faults

import "testing"

// TestEndToEnd builds ccmesh once and runs each part against its own
// ccmesh process, one after another: the parts use sub-second timeouts,
// and running them side by side on a small machine would make a slow
// scheduler look like a slow upstream.
func TestEndToEnd(t *testing.T) {
	bin := buildCCMesh(t)
	parts := []struct {
		name string
		run  func(t *testing.T, bin string)
	}{
		{"fault matrix", testFaultMatrix},
		{"fault matrix, Chat client translated", testTranslatedFaultMatrix},
		{"fault matrix, Gemini client translated", testGeminiFaultMatrix},
		{"OpenAI chat faults", testOpenAIChatFaults},
		{"stream prelude hold", testStreamHold},
		{"event by event", testEventByEvent},
		{"explicit endpoint", testExplicitEndpoint},
		{"all rate limited", testAllRateLimited},
		{"breaker through the proxy", testBreakerThroughProxy},
		{"LAN listener", testLANListener},
		{"metrics listener", testMetricsListener},
		{"usage and cost totals", testUsageTotals},
		{"balance through the proxy", testBalanceThroughProxy},
		{"key pools through the proxy", testKeyPoolsThroughProxy},
		{"kill -9 under load", testKillUnderLoad},
	}
	for _, p := range parts {
		t.Run(p.name, func(t *testing.T) { p.run(t, bin) })
	}
}
