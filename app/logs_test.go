package app

import (
	"fmt"
	"io"
	"net/http"
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
