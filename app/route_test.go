package app

import (
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy"
)

// GET /api/route answers from the proxy's own routing, run dry.
func TestRouteDryRun(t *testing.T) {
	h := newHarness(t)
	h.mustCreate(`{"name":"claude","base_url":"http://127.0.0.1:9","protocol":"anthropic","api_key":"k1"}`)
	h.mustCreate(`{"name":"deepseek","base_url":"http://127.0.0.1:9","protocol":"openai-chat","api_key":"k2","model_map":{"claude-haiku-*":"deepseek-chat"}}`)
	var x proxy.Explanation
	h.do("GET", "/api/route?protocol=anthropic&model=claude-haiku-4-5", "").decode(t, &x)
	if len(x.Candidates) != 2 || x.Candidates[0].Endpoint != "claude" || x.Translated["deepseek"] != "anthropic→openai-chat" {
		t.Errorf("haiku: %+v", x)
	}
	h.do("GET", "/api/route?protocol=anthropic&model=claude-opus-4-5", "").decode(t, &x)
	if len(x.Candidates) != 1 || len(x.Excluded) != 1 || x.Excluded[0].Reason != proxy.ExcludedProtocol {
		t.Errorf("opus: %+v", x)
	}
	for _, q := range []string{"protocol=grpc&model=x", "protocol=anthropic", "protocol=anthropic&model=%20"} {
		if r := h.do("GET", "/api/route?"+q, ""); r.status != 400 || !strings.Contains(string(r.body), "bad_query") {
			t.Errorf("%s: %d %s", q, r.status, r.body)
		}
	}
}
