package faults

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// testExplicitEndpoint covers docs/BEHAVIOUR.md#explicit-endpoint and docs/BEHAVIOUR.md#attempt-loop for a request that names its
// endpoint: it skips the breaker and the model filter, gets 3 attempts on
// that endpoint alone, still counts in its breaker, and an unknown or
// disabled name is a 400, never a silent fallback.
func testExplicitEndpoint(t *testing.T, bin string) {
	c := startCCMesh(t, bin)
	c.setTimeouts(t, firstByteTimeout, idleTimeout)
	cases := []struct {
		name      string
		fault     fault
		forceOpen bool // A is forced open first
		disabled  bool // A is disabled
		pin       func(aName string) (model string, header map[string]string)
		status    int
		history   []string
		aHits     int64
		aFailures int // consecutive_failures afterwards; -1 = A is not closed
	}{
		{name: "header pins a failing endpoint: 3 attempts there, none elsewhere", fault: status500,
			pin: byHeader, status: 500, history: []string{"a:failure", "a:failure", "a:failure"}, aHits: 3, aFailures: 3},
		{name: "@name/model pins a failing endpoint", fault: status500,
			pin: byModel, status: 500, history: []string{"a:failure", "a:failure", "a:failure"}, aHits: 3, aFailures: 3},
		{name: "a forced-open endpoint still serves a pinned request", fault: healthy, forceOpen: true,
			pin: byHeader, status: 200, history: []string{"a:success"}, aHits: 1, aFailures: -1},
		{name: "an unknown name is a 400", fault: healthy,
			pin: func(string) (string, map[string]string) {
				return "", map[string]string{"X-Ccmesh-Endpoint": "no-such-endpoint"}
			},
			status: 400, aHits: 0, aFailures: 0},
		{name: "a disabled endpoint is a 400", fault: healthy, disabled: true,
			pin: byModel, status: 400, aHits: 0, aFailures: 0},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := &cell{c: c, model: fmt.Sprintf("claude-e2e-explicit-%d", i),
				aName: fmt.Sprintf("pin%d-a", i), bName: fmt.Sprintf("pin%d-b", i)}
			x.a = newUpstream(t, x.aName, tc.fault)
			x.b = newUpstream(t, x.bName, healthy)
			// A serves another model: the pin must override the model filter.
			a := c.addEndpoint(t, endpointSpec{Name: x.aName, BaseURL: x.a.url, Protocol: "anthropic", APIKey: "sk-ant-pin-a", Models: []string{"claude-other"}})
			c.addEndpoint(t, endpointSpec{Name: x.bName, BaseURL: x.b.url, Protocol: "anthropic", APIKey: "sk-ant-pin-b", Models: []string{x.model}})
			id := strconv.FormatInt(a.ID, 10)
			if tc.forceOpen {
				c.mustAdmin(t, http.MethodPost, "/api/endpoints/"+id+"/force-open", nil, nil)
			}
			if tc.disabled {
				c.mustAdmin(t, http.MethodPut, "/api/endpoints/"+id, map[string]any{"enabled": false}, nil)
			}
			model, header := tc.pin(x.aName)
			if model == "" {
				model = x.model
			} else {
				model += "/" + x.model
			}
			r := sendWith(t.Context(), c.http, c.url(""), model, false, header)
			if r.status != tc.status {
				t.Fatalf("status = %d, want %d; body %s", r.status, tc.status, r.body)
			}
			if tc.status == 400 {
				if _, msg, err := claudeError(r.body); err != nil || !strings.Contains(msg, "endpoint") {
					t.Errorf("400 body %s (%v): want a Claude error that says which endpoint name is wrong", r.body, err)
				}
			}
			if x.a.hits.Load() != tc.aHits || x.b.hits.Load() != 0 {
				t.Errorf("upstream requests A=%d B=%d, want A=%d B=0 (never a fallback)", x.a.hits.Load(), x.b.hits.Load(), tc.aHits)
			}
			if tc.history != nil {
				// The log's model filter matches the model without the @name/ prefix.
				row := c.waitLogs(t, x.model, 1)[0]
				if got := x.historyOf(row); !slices.Equal(got, tc.history) {
					t.Errorf("log history = %v, want %v", got, tc.history)
				}
			}
			if tc.aFailures >= 0 {
				if h := c.health(t, x.aName); h.State != "closed" || h.ConsecutiveFailures != tc.aFailures {
					t.Errorf("A's breaker %s with %d failures, want closed with %d (explicit results still count)", h.State, h.ConsecutiveFailures, tc.aFailures)
				}
			}
		})
	}
}

func byHeader(aName string) (string, map[string]string) {
	return "", map[string]string{"X-Ccmesh-Endpoint": aName}
}

func byModel(aName string) (string, map[string]string) { return "@" + aName, nil }
