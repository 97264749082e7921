package app

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Traffic through the proxy makes a log row, figures in health and a stats
// point; the key appears in none of them nor in the process log.
func TestTrafficLogsAndStats(t *testing.T) {
	h := newHarness(t)
	up, _ := fakeAnthropic(t)
	h.mustCreate(`{"name":"up","base_url":"` + up.URL + `","protocol":"anthropic","api_key":"` + secretKey + `"}`)
	logged := h.watchLog()
	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/messages?beta=true", strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-api-key", "client-key")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("x-ccmesh-endpoint") != "up" {
		t.Fatalf("proxy: %d via %q", res.StatusCode, res.Header.Get("x-ccmesh-endpoint"))
	}

	logged()
	var page struct {
		Items []map[string]any `json:"items"`
	}
	h.do("GET", "/api/logs?endpoint=up", "").decode(t, &page)
	if len(page.Items) != 1 || page.Items[0]["status"] != float64(200) || page.Items[0]["tokens_in"] != float64(5) {
		t.Fatalf("logs = %+v", page.Items)
	}
	id := int64(page.Items[0]["id"].(float64))
	var row map[string]any
	h.do("GET", fmt.Sprintf("/api/logs/%d", id), "").decode(t, &row)
	hist, _ := row["history"].([]any)
	if len(hist) != 1 || hist[0].(map[string]any)["outcome"] != "success" {
		t.Errorf("history = %v", row["history"])
	}

	var hs []Health
	h.do("GET", "/api/health", "").decode(t, &hs)
	if hs[0].SuccessRate == nil || *hs[0].SuccessRate != 1 || hs[0].P50Ms == nil {
		t.Errorf("health figures = %+v", hs[0])
	}
	var st struct {
		Buckets []map[string]any `json:"buckets"`
	}
	h.do("GET", "/api/stats?minutes=5", "").decode(t, &st)
	if len(st.Buckets) != 1 || st.Buckets[0]["requests"] != float64(1) || st.Buckets[0]["errors"] != float64(0) {
		t.Errorf("stats = %+v", st.Buckets)
	}

	all := h.logs.String() + string(h.do("GET", fmt.Sprintf("/api/logs/%d", id), "").body)
	if strings.Contains(all, "secret-0123") {
		t.Errorf("the key leaked into a log: %s", all)
	}
}

// A log row, listed and alone, carries the usage of all its attempts
// summed and their cost (docs/BEHAVIOUR.md#request-log): here a stream
// whose upstream reported its input before it failed, and the endpoint
// that answered after it.
func TestLogRowSumsAttempts(t *testing.T) {
	h := newHarness(t)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("content-type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"type\":\"message\",\"role\":\"assistant\","+
			"\"content\":[],\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":1000,\"cache_read_input_tokens\":2000,\"output_tokens\":1}}}\n\n"+
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"busy\"}}\n\n")
	}))
	t.Cleanup(failing.Close)
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("content-type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m2\",\"type\":\"message\",\"role\":\"assistant\","+
			"\"content\":[],\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":100,\"output_tokens\":1}}}\n\n"+
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n"+
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"+
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":40}}\n\n"+
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	t.Cleanup(good.Close)
	h.mustCreate(`{"name":"failing","base_url":"` + failing.URL + `","protocol":"anthropic","api_key":"k1","sort_order":1}`)
	h.mustCreate(`{"name":"good","base_url":"` + good.URL + `","protocol":"anthropic","api_key":"k2","sort_order":2}`)
	logged := h.watchLog()
	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/messages", strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("anthropic-version", "2023-06-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("x-ccmesh-endpoint") != "good" {
		t.Fatalf("proxy: %d via %q", res.StatusCode, res.Header.Get("x-ccmesh-endpoint"))
	}
	logged()

	// The row as the API's JSON names it.
	type usage struct {
		Input      int64 `json:"input"`
		Output     int64 `json:"output"`
		CacheRead  int64 `json:"cache_read"`
		CacheWrite int64 `json:"cache_write"`
		Reasoning  int64 `json:"reasoning"`
		Estimated  bool  `json:"estimated"`
	}
	type row struct {
		ID       int64    `json:"id"`
		Attempts int      `json:"attempts"`
		TokensIn int64    `json:"tokens_in"`
		Usage    *usage   `json:"usage"`
		CostUSD  *float64 `json:"cost_usd"`
	}
	var page struct{ Items []row }
	h.do("GET", "/api/logs", "").decode(t, &page)
	if len(page.Items) != 1 {
		t.Fatalf("%d rows, want 1", len(page.Items))
	}
	var one row
	h.do("GET", fmt.Sprintf("/api/logs/%d", page.Items[0].ID), "").decode(t, &one)
	// failing is tried twice (docs/BEHAVIOUR.md#attempt-loop), then good
	// answers: 2 × 1000 + 100 input, 2 × 1 + 40 output, 2 × 2000 cache
	// read; at Claude Sonnet 4.5's $3, $15 and $0.30 per million that is
	// 6300 + 630 + 1200 = 8130 µ$.
	wantUsage := usage{Input: 2100, Output: 42, CacheRead: 4000}
	for _, c := range []struct {
		name string
		got  row
	}{{"list", page.Items[0]}, {"detail", one}} {
		t.Run(c.name, func(t *testing.T) {
			g := c.got
			if g.Attempts != 3 || g.TokensIn != 100 {
				t.Errorf("attempts %d, tokens_in %d; want 3 and the answering attempt's 100", g.Attempts, g.TokensIn)
			}
			if g.Usage == nil || *g.Usage != wantUsage {
				t.Errorf("usage = %+v, want %+v", g.Usage, wantUsage)
			}
			if g.CostUSD == nil {
				t.Errorf("cost_usd = null, want 0.00813")
			} else if math.Abs(*g.CostUSD-0.00813) > 1e-12 {
				t.Errorf("cost_usd = %v, want 0.00813", *g.CostUSD)
			}
		})
	}
}
