package proxy

import (
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// An answer after every attempt failed ends with "retry shortly" only when
// a retry may help; a failure a retry repeats says what to change instead.
func TestExhaustedAdvice(t *testing.T) {
	const shortly = "retry shortly"
	t.Run("a pinned endpoint's 401", func(t *testing.T) {
		up := upstream(t, proxytest.Response{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`})
		h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "pinned", up.URL)}})
		r := h.post("/v1/messages", claudeBody, "x-ccmesh-endpoint", "pinned")
		if r.status != 401 || strings.Contains(r.body, shortly) || !strings.Contains(r.body, "retrying will not help: check the endpoint's API key") {
			t.Errorf("got %d %s", r.status, r.body)
		}
	})
	t.Run("a refused translation", func(t *testing.T) {
		up := upstream(t, okClaude())
		e := chatEp(1, "chat", up.URL)
		e.Models = []string{"gpt-*"}
		h := newHarness(t, Config{Endpoints: []Endpoint{e}})
		r := h.post("/v1/responses", `{"model":"gpt-x","previous_response_id":"resp_1","input":"go on"}`)
		if r.status != 400 || strings.Contains(r.body, shortly) || !strings.Contains(r.body, "retrying will not help: send it to an endpoint that speaks the client's protocol") {
			t.Errorf("got %d %s", r.status, r.body)
		}
	})
	t.Run("a 5xx may pass", func(t *testing.T) {
		up := upstream(t, proxytest.Response{Status: 503, Body: `{"error":"busy"}`})
		h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "busy", up.URL)}})
		r := h.post("/v1/messages", claudeBody)
		if r.status != 503 || !strings.Contains(r.body, shortly) {
			t.Errorf("got %d %s", r.status, r.body)
		}
	})
	t.Run("a 401 beside a timeout may pass", func(t *testing.T) {
		got := exhaustedAdvice([]Attempt{{ErrorType: ErrStatus, Status: 401}, {ErrorType: ErrTransport}})
		if !strings.HasPrefix(got, shortly) {
			t.Errorf("got %q", got)
		}
	})
}
