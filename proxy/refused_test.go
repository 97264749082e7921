package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// relay is a fake upstream behind an older backend: it refuses the
// top-level fields and anthropic-beta values it does not know, one per
// answer, in the words given, and answers anything else with ok.
type relay struct {
	t       *testing.T
	fields  map[string]string // field → the refusal's message
	betas   map[string]string // beta value → the refusal's message
	ok      proxytest.Response
	mu      sync.Mutex
	bodies  []string
	headers []http.Header
}

func (rl *relay) start() *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rl.mu.Lock()
		rl.bodies = append(rl.bodies, string(b))
		rl.headers = append(rl.headers, r.Header.Clone())
		rl.mu.Unlock()
		for v, msg := range rl.betas {
			if strings.Contains(r.Header.Get("Anthropic-Beta"), v) {
				w.WriteHeader(400)
				_, _ = io.WriteString(w, msg)
				return
			}
		}
		for f, msg := range rl.fields {
			if strings.Contains(string(b), `"`+f+`"`) {
				w.WriteHeader(400)
				_, _ = io.WriteString(w, msg)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, rl.ok.Body)
	}))
	rl.t.Cleanup(srv.Close)
	return srv
}

func (rl *relay) count() int {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return len(rl.bodies)
}

const betaRefusal = "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"Unexpected value(s) `context-management-2025-06-27` for the `anthropic-beta` header. Please consult our documentation at docs.anthropic.com or try again without the header.\"}}"

// A relay that refuses context_management and a beta: the first request
// goes again without each, inside one attempt; the answer succeeds, both
// are learned and reported, and the next request goes without them at once.
func TestRefusedPartsLearned(t *testing.T) {
	rl := &relay{t: t, ok: okClaude(),
		fields: map[string]string{"context_management": `{"type":"error","error":{"type":"invalid_request_error","message":"context_management: Extra inputs are not permitted"}}`},
		betas:  map[string]string{"context-management-2025-06-27": betaRefusal}}
	srv := rl.start()
	var (
		mu      sync.Mutex
		learned []Learned
	)
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "relay", srv.URL)}})
	h.srv.onLearn = func(id int64, l Learned) {
		mu.Lock()
		defer mu.Unlock()
		if id != 1 {
			t.Errorf("learned for endpoint %d", id)
		}
		learned = append(learned, l)
	}
	beta := []string{"anthropic-beta", "claude-code-20250219,context-management-2025-06-27"}
	r := h.post("/v1/messages", claudeBody, beta...)
	if r.status != 200 || rl.count() != 3 {
		t.Fatalf("first request: %d after %d upstream requests: %s", r.status, rl.count(), r.body)
	}
	rec := h.record()
	if len(rec.Attempts) != 1 {
		t.Fatalf("attempts %+v", rec.Attempts)
	}
	a := rec.Attempts[0]
	if strings.Join(a.Dropped, " ") != "beta:context-management-2025-06-27 context_management" || !strings.Contains(a.Refused, "400: ") || a.BreakerCounted != true || a.ErrorType != "" || a.Adjusted != "drop_refused" {
		t.Errorf("attempt: dropped %q refused %q adjusted %q counted %v error %q", a.Dropped, a.Refused, a.Adjusted, a.BreakerCounted, a.ErrorType)
	}
	mu.Lock()
	if len(learned) != 2 || learned[0].Drop != "beta:context-management-2025-06-27" || learned[1].Drop != "context_management" || learned[0].Error == "" {
		t.Errorf("learned %+v", learned)
	}
	mu.Unlock()

	// The next request goes without both at once; the rest is as sent.
	r = h.post("/v1/messages", claudeBody, beta...)
	if r.status != 200 || rl.count() != 4 {
		t.Fatalf("second request: %d after %d upstream requests", r.status, rl.count())
	}
	body, hdr := rl.bodies[3], rl.headers[3]
	if strings.Contains(body, "context_management") || !strings.Contains(body, `"x_unknown":{"a":[1,2.5e3,true,null]}`) {
		t.Errorf("second body %s", body)
	}
	if got := hdr.Get("Anthropic-Beta"); got != "claude-code-20250219" {
		t.Errorf("second beta %q", got)
	}
	if rec := h.record(); strings.Join(rec.Attempts[0].Dropped, " ") != "beta:context-management-2025-06-27 context_management" || rec.Attempts[0].Refused != "" || rec.Attempts[0].Adjusted != "" {
		t.Errorf("second attempt %+v", rec.Attempts[0])
	}

	// Once the config carries them, the memory lets them go; a config
	// without them (the user cleared them) brings the refusal back.
	h.srv.Update(Config{Endpoints: []Endpoint{ep(1, "relay", srv.URL)}, RetryDelay: 1})
	if got := h.srv.learned.get(1); len(got) != 2 {
		t.Errorf("pending before the config carries them: %q", got)
	}
	e := ep(1, "relay", srv.URL)
	e.Drops = Drops{"context_management", "beta:context-management-2025-06-27"}
	h.srv.Update(Config{Endpoints: []Endpoint{e}, RetryDelay: 1})
	if got := h.srv.learned.get(1); len(got) != 0 {
		t.Errorf("still pending once carried: %q", got)
	}
	h.srv.Update(Config{Endpoints: []Endpoint{ep(1, "relay", srv.URL)}, RetryDelay: 1})
	before := rl.count()
	if r := h.post("/v1/messages", claudeBody, beta...); r.status != 200 || rl.count()-before != 3 {
		t.Errorf("after clearing: %d in %d upstream requests", r.status, rl.count()-before)
	}
	h.record()
}

// A 400 that names something ccmesh may not leave out reaches the client
// as it came, neutral, after one upstream request.
func TestRefusalNotDroppable(t *testing.T) {
	const refusal = `{"type":"error","error":{"type":"invalid_request_error","message":"messages: Extra inputs are not permitted"}}`
	up := upstream(t, proxytest.Response{Status: 400, Body: refusal})
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "relay", up.URL)}})
	h.srv.onLearn = func(int64, Learned) { t.Error("learned from a refusal of what is asked") }
	r := h.post("/v1/messages", claudeBody)
	if r.status != 400 || r.body != refusal || up.Count() != 1 {
		t.Errorf("got %d %s after %d upstream requests", r.status, r.body, up.Count())
	}
	if a := h.record().Attempts[0]; a.BreakerCounted || len(a.Dropped) != 0 {
		t.Errorf("attempt %+v", a)
	}
}

// A refusal of a part the request does not carry changes nothing to
// retry: it reaches the client after one try.
func TestRefusalOfAbsentPart(t *testing.T) {
	const refusal = `{"error":{"message":"Unrecognized request argument supplied: service_tier","type":"invalid_request_error"}}`
	up := upstream(t, proxytest.Response{Status: 400, Body: refusal})
	h := newHarness(t, Config{Endpoints: []Endpoint{ep(1, "relay", up.URL)}})
	if r := h.post("/v1/messages", claudeBody); r.status != 400 || up.Count() != 1 {
		t.Errorf("got %d after %d upstream requests", r.status, up.Count())
	}
	h.record()
}

// A translated request learns the same way: a Chat gateway that refuses
// stream_options gets the stream again without it.
func TestRefusedPartTranslated(t *testing.T) {
	rl := &relay{t: t, ok: proxytest.Response{Body: `{"id":"c1","object":"chat.completion","model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`},
		fields: map[string]string{"stream_options": `{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error","param":null,"code":null}}`}}
	srv := rl.start()
	e := chatEp(1, "gw", srv.URL)
	e.Models = []string{"claude-*"}
	h := newHarness(t, Config{Endpoints: []Endpoint{e}})
	r := h.post("/v1/messages", claudeStreamBody)
	if r.status != 200 || rl.count() != 2 || strings.Contains(rl.bodies[1], "stream_options") {
		t.Fatalf("got %d after %d upstream requests: %s", r.status, rl.count(), r.body)
	}
	if a := h.record().Attempts[0]; strings.Join(a.Dropped, " ") != "stream_options" {
		t.Errorf("attempt %+v", a)
	}
	if got := h.srv.learned.get(1); !got.Has("stream_options") {
		t.Errorf("learned %q", got)
	}
}

// Parts the endpoint's config names are left out before the first try.
func TestConfiguredDrops(t *testing.T) {
	up := upstream(t, okClaude())
	e := ep(1, "relay", up.URL)
	e.Drops = Drops{"context_management", "beta:context-management-2025-06-27"}
	h := newHarness(t, Config{Endpoints: []Endpoint{e}})
	r := h.post("/v1/messages", claudeBody, "anthropic-beta", "context-management-2025-06-27")
	if r.status != 200 || up.Count() != 1 {
		t.Fatalf("got %d after %d", r.status, up.Count())
	}
	got := up.Requests()[0]
	if strings.Contains(string(got.Body), "context_management") || got.Header.Get("Anthropic-Beta") != "" {
		t.Errorf("sent %s with beta %q", got.Body, got.Header.Get("Anthropic-Beta"))
	}
	h.record()
}
