package app

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestTestAndFetchModels(t *testing.T) {
	h := newHarness(t)
	up, keys := fakeAnthropic(t)
	e := h.mustCreate(`{"name":"up","base_url":"` + up.URL + `","protocol":"anthropic","api_key":"` + secretKey + `"}`)

	var res TestResult
	r := h.do("POST", fmt.Sprintf("/api/endpoints/%d/test", e.ID), "")
	r.decode(t, &res)
	if r.status != 200 || !res.OK || res.Status != 200 {
		t.Errorf("test: %d %+v", r.status, res)
	}
	var hs []Health
	h.do("GET", "/api/health", "").decode(t, &hs)
	if hs[0].LastTest == nil || !hs[0].LastTest.OK {
		t.Errorf("health lacks the test result: %+v", hs[0])
	}

	var fm struct {
		Models   []string      `json:"models"`
		Endpoint EndpointReply `json:"endpoint"`
	}
	r = h.do("POST", fmt.Sprintf("/api/endpoints/%d/fetch-models", e.ID), "")
	r.decode(t, &fm)
	want := []string{"claude-sonnet-4-5", "claude-haiku-4-5"}
	if r.status != 200 || !slices.Equal(fm.Models, want) || !slices.Equal(fm.Endpoint.Models, want) {
		t.Errorf("fetch-models: %d %+v, want %v", r.status, fm, want)
	}
	for i, k := range *keys {
		if k != secretKey {
			t.Errorf("upstream request %d carried key %q, want the endpoint's", i, k)
		}
	}

	dead := h.mustCreate(`{"name":"dead","base_url":"http://127.0.0.1:1","protocol":"anthropic"}`)
	r = h.do("POST", fmt.Sprintf("/api/endpoints/%d/test", dead.ID), "")
	r.decode(t, &res)
	if res.OK || !strings.Contains(res.Message, "could not reach") {
		t.Errorf("test of a dead endpoint: %+v", res)
	}
	if r := h.do("POST", fmt.Sprintf("/api/endpoints/%d/fetch-models", dead.ID), ""); r.status != 502 || r.errCode() != "upstream_unreachable" {
		t.Errorf("fetch-models of a dead endpoint: %d %q", r.status, r.errCode())
	}
}
