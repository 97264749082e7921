package app

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHealthFollowsRequests: with nothing polling, a request that changes
// an endpoint's figures still reaches a subscriber as a health event, soon
// (docs/BEHAVIOUR.md#health).
func TestHealthFollowsRequests(t *testing.T) {
	h := newHarness(t)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"type":"error","error":{"type":"api_error","message":"down"}}`, http.StatusInternalServerError)
	}))
	defer broken.Close()
	h.mustCreate(`{"name":"down","base_url":"` + broken.URL + `","protocol":"anthropic","api_key":"sk-down-0123456789"}`)
	events, unsubscribe := h.app.Events().Subscribe()
	defer unsubscribe()

	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/messages", strings.NewReader(`{"model":"claude-x","max_tokens":1,"messages":[]}`))
	req.Header.Set("anthropic-version", "2023-06-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()

	deadline := time.After(5 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Name != "health" {
				continue
			}
			var hs []Health
			if err := json.Unmarshal(ev.Data, &hs); err != nil {
				t.Fatal(err)
			}
			if len(hs) == 1 && hs[0].ConsecutiveFailures == 2 && strings.Contains(hs[0].LastError, "500") {
				return
			}
		case <-deadline:
			t.Fatal("no health event with the request's failures within 5 s")
		}
	}
}
