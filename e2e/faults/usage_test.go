package faults

import (
	"math"
	"net/http"
	"testing"
)

// statBucket is one bucket of GET /api/stats (docs/BEHAVIOUR.md#statistics).
type statBucket struct {
	Key       string  `json:"key"`
	Requests  int64   `json:"requests"`
	Succeeded int64   `json:"succeeded"`
	Attempts  int64   `json:"attempts"`
	Errors    int64   `json:"errors"`
	Input     int64   `json:"input"`
	Output    int64   `json:"output"`
	CostUSD   float64 `json:"cost_usd"`
	Unpriced  int64   `json:"unpriced"`
	CacheRead int64   `json:"cache_read"`
}

// testUsageTotals: requests with known usage through the real binary give
// exact token and cost totals per endpoint and per model; each request
// counts once, under the endpoint that answered it, and an endpoint that
// failed before another answered shows its attempts and errors
// (docs/BEHAVIOUR.md#usage, #cost, #statistics).
func testUsageTotals(t *testing.T, bin string) {
	c := startCCMesh(t, bin)
	a := newUpstream(t, "usage-a", status500)
	b := newUpstream(t, "usage-b", healthy)
	chat := newChatFake(t, "usage-chat")
	c.addEndpoint(t, endpointSpec{Name: "usage-a", BaseURL: a.url, Protocol: "anthropic", APIKey: "sk-a", Models: []string{"claude-sonnet-4-5"}})
	c.addEndpoint(t, endpointSpec{Name: "usage-b", BaseURL: b.url, Protocol: "anthropic", APIKey: "sk-b", Models: []string{"claude-sonnet-4-5"}})
	c.addEndpoint(t, endpointSpec{Name: "usage-chat", BaseURL: chat.url, Protocol: "openai-chat", APIKey: "sk-c", Models: []string{"gpt-5.5"}})

	// The first request fails twice on a and is answered by b; the sticky
	// cursor then starts on b. Each answer is 7 input and 4 output tokens.
	for i, stream := range []bool{false, false, true, false} {
		if r := send(t.Context(), c.http, c.url(""), "claude-sonnet-4-5", stream); r.status != http.StatusOK {
			t.Fatalf("claude request %d: %d %s", i, r.status, r.body)
		}
	}
	for i := range 2 {
		if r := sendAs(t.Context(), c.http, chatClient{}, c.url(""), "gpt-5.5", false, nil); r.status != http.StatusOK {
			t.Fatalf("chat request %d: %d %s", i, r.status, r.body)
		}
	}
	c.waitLogs(t, "claude-sonnet-4-5", 4)
	c.waitLogs(t, "gpt-5.5", 2)

	sum := func(group string) map[string]statBucket {
		var reply struct{ Buckets []statBucket }
		c.mustAdmin(t, http.MethodGet, "/api/stats?minutes=30&group="+group, nil, &reply)
		out := map[string]statBucket{}
		for _, x := range reply.Buckets {
			s := out[x.Key]
			s.Requests += x.Requests
			s.Succeeded += x.Succeeded
			s.Attempts += x.Attempts
			s.Errors += x.Errors
			s.Input += x.Input
			s.Output += x.Output
			s.CostUSD += x.CostUSD
			s.Unpriced += x.Unpriced
			out[x.Key] = s
		}
		return out
	}
	// Shipped prices: claude-sonnet-4-5 3 / 15 $ per million tokens, so
	// 81 µ$ an answer; gpt-5.5 5 / 30, so 155 µ$.
	eps := sum("endpoint")
	for _, w := range []struct {
		key                                 string
		requests, attempts, errors, in, out int64
		cost                                float64
	}{
		{"usage-a", 0, 2, 2, 0, 0, 0},
		{"usage-b", 4, 4, 0, 28, 16, 4 * 81e-6},
		{"usage-chat", 2, 2, 0, 14, 8, 2 * 155e-6},
	} {
		g := eps[w.key]
		if g.Requests != w.requests || g.Succeeded != w.requests || g.Attempts != w.attempts || g.Errors != w.errors ||
			g.Input != w.in || g.Output != w.out || math.Abs(g.CostUSD-w.cost) > 1e-12 || g.Unpriced != 0 {
			t.Errorf("%s: %+v, want %d requests (all succeeded), %d attempts, %d errors, %d/%d tokens, $%.6f",
				w.key, g, w.requests, w.attempts, w.errors, w.in, w.out, w.cost)
		}
	}
	models := sum("model")
	if m := models["claude-sonnet-4-5"]; m.Requests != 4 || m.Succeeded != 4 || m.Attempts != 6 || m.Errors != 2 || m.Input != 28 ||
		math.Abs(m.CostUSD-324e-6) > 1e-12 {
		t.Errorf("claude-sonnet-4-5: %+v", m)
	}
	if m := models["gpt-5.5"]; m.Requests != 2 || m.Output != 8 || math.Abs(m.CostUSD-310e-6) > 1e-12 {
		t.Errorf("gpt-5.5: %+v", m)
	}
}
