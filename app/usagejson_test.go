package app

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
)

// TestUsageJSON (item 2) pins the JSON scripts read: a stats bucket of
// GET /api/stats (its counts in their order) and a log row's usage and
// cost in GET /api/logs, for one request with every kind of token.
func TestUsageJSON(t *testing.T) {
	h := newHarness(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "application/json")
		io.WriteString(w, `{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",`+
			`"usage":{"input_tokens":100,"cache_read_input_tokens":1000,"cache_creation_input_tokens":10,"output_tokens":50}}`)
	}))
	t.Cleanup(up.Close)
	h.mustCreate(`{"name":"good","base_url":"` + up.URL + `","protocol":"anthropic","api_key":"k2"}`)
	if res := h.postMessages(t, "claude-sonnet-4-5"); res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	// Sonnet 4.5 at 3/15/0.30/3.75 per million: 300 + 750 + 300 + 37.5 µ$.
	var stats struct{ Buckets []json.RawMessage }
	h.do("GET", "/api/stats?minutes=10", "").decode(t, &stats)
	var logs struct {
		Items []struct {
			Usage   json.RawMessage `json:"usage"`
			CostUSD json.RawMessage `json:"cost_usd"`
		}
	}
	h.do("GET", "/api/logs", "").decode(t, &logs)
	if len(stats.Buckets) != 1 || len(logs.Items) != 1 {
		t.Fatalf("%d stats buckets and %d log rows, want 1 of each", len(stats.Buckets), len(logs.Items))
	}
	start := regexp.MustCompile(`^\{"start":"[^"]+",`)
	for _, tc := range []struct {
		name, got, want string
	}{
		{"stats bucket", start.ReplaceAllString(string(stats.Buckets[0]), `{"start":"*",`),
			`{"start":"*","key":"good","requests":1,"succeeded":1,"attempts":1,"errors":0,"input":100,"output":50,` +
				`"cache_read":1000,"cache_write":10,"reasoning":0,"cost_usd":0.0013875,"unpriced":0,"hedges":0}`},
		{"log row usage", string(logs.Items[0].Usage),
			`{"input":100,"output":50,"cache_read":1000,"cache_write":10,"reasoning":0,"estimated":false}`},
		{"log row cost", string(logs.Items[0].CostUSD), `0.0013875`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("\n got %s\nwant %s", tc.got, tc.want)
			}
		})
	}
}
