package faults

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// testStreamHold covers the edges of docs/BEHAVIOUR.md#streaming's prelude hold: it is bounded
// by the first-byte timeout even while the upstream sends keep-alive pings,
// and any content_block_start — thinking included — ends it, so thinking
// longer than the first-byte timeout is never cut.
func testStreamHold(t *testing.T, bin string) {
	c := startCCMesh(t, bin)
	c.setTimeouts(t, firstByteTimeout, idleTimeout)
	cases := []struct {
		name     string
		fault    fault
		second   bool
		status   []int
		text     string // the streamed text the client must get; "" = an error body
		history  []string
		thinking int // thinking deltas the client must get
	}{
		{name: "pings forever in the prelude, second endpoint healthy", fault: preludePings, second: true,
			status: []int{200}, text: "hello from hold0-b", history: []string{"a:failure", "a:failure", "b:success"}},
		{name: "pings forever in the prelude, no second endpoint", fault: preludePings,
			status: []int{http.StatusBadGateway, http.StatusGatewayTimeout}, history: []string{"a:failure", "a:failure"}},
		{name: "thinking longer than the first-byte timeout is not cut", fault: slowThinking, second: true,
			status: []int{200}, text: "hello from hold2-a", history: []string{"a:success"}, thinking: thinkingSteps},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := &cell{c: c, model: fmt.Sprintf("claude-e2e-hold-%d", i),
				aName: fmt.Sprintf("hold%d-a", i), bName: fmt.Sprintf("hold%d-b", i)}
			x.a = newUpstream(t, x.aName, tc.fault)
			c.addEndpoint(t, endpointSpec{Name: x.aName, BaseURL: x.a.url, Protocol: "anthropic", APIKey: "sk-ant-hold-a", Models: []string{x.model}})
			if tc.second {
				x.b = newUpstream(t, x.bName, healthy)
				c.addEndpoint(t, endpointSpec{Name: x.bName, BaseURL: x.b.url, Protocol: "anthropic", APIKey: "sk-ant-hold-b", Models: []string{x.model}})
			}
			r := send(t.Context(), c.http, c.url(""), x.model, true)
			if !slices.Contains(tc.status, r.status) {
				t.Fatalf("status %d, want one of %v; body %s", r.status, tc.status, r.body)
			}
			evs := parseSSE(r.body)
			if tc.text != "" {
				if got := streamText(evs); got != tc.text {
					t.Errorf("streamed text %q, want %q", got, tc.text)
				}
				if got := countEvents(evs, "message_start"); got != 1 {
					t.Errorf("message_start events = %d, want 1", got)
				}
			} else if _, _, err := claudeError(r.body); err != nil {
				t.Errorf("error body: %v", err)
			}
			if got := strings.Count(string(r.body), "thinking_delta"); got != tc.thinking {
				t.Errorf("thinking deltas = %d, want %d", got, tc.thinking)
			}
			row := c.waitLogs(t, x.model, 1)[0]
			if got := x.historyOf(row); !slices.Equal(got, tc.history) {
				t.Errorf("log history = %v, want %v", got, tc.history)
			}
		})
	}
}
