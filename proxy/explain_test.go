package proxy

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
)

// The dry run shares routing's decision and changes nothing.
func TestExplain(t *testing.T) {
	a, b, d := ep(1, "a", "http://127.0.0.1:1"), chatEp(2, "b", "http://127.0.0.1:1"), ep(4, "d", "http://127.0.0.1:1")
	b.Models = []string{"claude-*"}
	d.Models = []string{"gpt-*"}
	c := chatEp(3, "c", "http://127.0.0.1:1") // no models: Claude clients never reach it
	h := newHarness(t, Config{Endpoints: []Endpoint{a, b, c, d}})
	h.breakers.Get(1).ForceOpen()

	x := h.srv.Explain(ProtocolAnthropic, "claude-sonnet-4-5")
	if len(x.Candidates) != 1 || x.Candidates[0].Endpoint != "b" || !x.Candidates[0].Translated || x.Translated["b"] != "anthropic→openai-chat" {
		t.Fatalf("candidates %+v translated %v", x.Candidates, x.Translated)
	}
	why := map[string]Exclusion{}
	for _, e := range x.Excluded {
		why[e.Endpoint] = e.Reason
	}
	if why["a"] != ExcludedBreaker || why["d"] != ExcludedModel || why["c"] != ExcludedProtocol || len(why) != 3 || x.Outcome != "" {
		t.Errorf("excluded %v outcome %q", why, x.Outcome)
	}

	// Only a, which serves every Claude model, could: its breaker says no.
	x = h.srv.Explain(ProtocolAnthropic, "gemini-2.5-pro")
	if len(x.Candidates) != 0 || !strings.Contains(x.Outcome, "a is open (manual)") {
		t.Errorf("no candidates: %+v", x)
	}
	// Chat clients: c serves every model of its own protocol, b only its
	// claude-*; d, an Anthropic endpoint, names gpt-* and is translated to;
	// a names no model, so it is not offered to Chat clients at all.
	x = h.srv.Explain(ProtocolOpenAIChat, "gpt-x")
	if len(x.Candidates) != 2 || x.Candidates[0].Endpoint != "c" || x.Candidates[1].Endpoint != "d" || x.Candidates[0].Translated || !x.Candidates[1].Translated ||
		x.Translated["d"] != "openai-chat→anthropic" || len(x.Excluded) != 2 || x.Excluded[0].Reason != ExcludedModel ||
		x.Excluded[1].Endpoint != "a" || x.Excluded[1].Reason != ExcludedProtocol {
		t.Errorf("chat clients: %+v", x)
	}

	// A dry run leaves a breaker whose cooldown is over Open (the lazy step
	// is for requests), and the cursor where it was.
	p, _ := h.breakers.Get(2).Allow(breaker.Claude, time.Now().Add(time.Minute))
	p.Done(breaker.Outcome{Kind: breaker.Failure, Reason: breaker.RateLimited, RetryAfter: time.Millisecond})
	later := time.Now().Add(time.Second)
	if v := h.breakers.Get(2).View(later); v.State != breaker.Open || !v.ProbeDue {
		t.Fatalf("breaker b: %+v", v)
	}
	seen := h.srv.cursors[0].Load()
	x = h.srv.Explain(ProtocolAnthropic, "claude-sonnet-4-5")
	if h.breakers.Get(2).View(time.Now()).State != breaker.Open || h.srv.cursors[0].Load() != seen {
		t.Error("the dry run moved a breaker or a cursor")
	}
}

// A dry run names every endpoint it does not offer: one left out by the
// fast queue, a disabled one, and another protocol's that names no model.
func TestExplainNamesEndpointsOffTheList(t *testing.T) {
	fast, slow, off := ep(1, "fast", "http://127.0.0.1:1"), ep(2, "slow", "http://127.0.0.1:1"), ep(3, "off", "http://127.0.0.1:1")
	fast.Fast, off.Enabled = true, false
	h := newHarness(t, Config{Endpoints: []Endpoint{fast, slow, off, chatEp(4, "chat", "http://127.0.0.1:1")}})
	x := h.srv.Explain(ProtocolAnthropic, "claude-sonnet-4-5")
	if len(x.Candidates) != 1 || x.Candidates[0].Endpoint != "fast" {
		t.Fatalf("candidates %+v", x.Candidates)
	}
	got := map[string]Exclusion{}
	for _, e := range x.Excluded {
		got[e.Endpoint] = e.Reason
	}
	want := map[string]Exclusion{"slow": ExcludedNotFast, "off": ExcludedDisabled, "chat": ExcludedProtocol}
	if !maps.Equal(got, want) {
		t.Errorf("excluded %v, want %v", got, want)
	}
}

// The dry run names first the endpoint the next request starts at, for
// every strategy, and moves nothing: it asks the same selector.
func TestExplainAgreesWithRouting(t *testing.T) {
	for _, strategy := range []Strategy{StrategySticky, StrategyPriority, StrategyRoundRobin, StrategySession} {
		t.Run(string(strategy), func(t *testing.T) {
			var eps []Endpoint
			for i, name := range []string{"a", "b", "c"} {
				up := upstream(t, okClaude())
				eps = append(eps, ep(int64(i+1), name, up.URL))
			}
			h := newHarness(t, Config{Endpoints: eps, Strategy: strategy})
			for range 4 {
				want := h.srv.Explain(ProtocolAnthropic, "claude-sonnet-4-5").Candidates[0].Endpoint
				if again := h.srv.Explain(ProtocolAnthropic, "claude-sonnet-4-5").Candidates[0].Endpoint; again != want {
					t.Fatalf("the dry run moved the cursor: %s then %s", want, again)
				}
				r := h.post("/v1/messages", claudeBody)
				if got := r.header.Get("x-ccmesh-endpoint"); got != want {
					t.Errorf("the dry run named %s first, the request went to %s", want, got)
				}
				h.record()
			}
		})
	}
}
