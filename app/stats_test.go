package app

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// postMessages sends one Claude request through the proxy and drains it.
func (h *harness) postMessages(t *testing.T, model string) *http.Response {
	t.Helper()
	return h.postLogged(t, `{"model":"`+model+`","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
}

// postLogged sends body to /v1/messages as a Claude client does, reads
// the answer and waits for its log row.
func (h *harness) postLogged(t *testing.T, body string) *http.Response {
	t.Helper()
	logged := h.watchLog()
	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/messages", strings.NewReader(body))
	req.Header.Set("anthropic-version", "2023-06-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	logged()
	return res
}

// Statistics count attempts per endpoint: an endpoint that failed before
// another answered shows its errors, the one that answered the request;
// tokens by kind add up per endpoint and model (docs/BEHAVIOUR.md#statistics).
func TestUsageStatistics(t *testing.T) {
	h := newHarness(t)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		io.WriteString(w, `{"type":"error","error":{"type":"api_error","message":"down"}}`)
	}))
	t.Cleanup(broken.Close)
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "application/json")
		io.WriteString(w, `{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",`+
			`"usage":{"input_tokens":100,"cache_read_input_tokens":1000,"cache_creation_input_tokens":10,"output_tokens":50}}`)
	}))
	t.Cleanup(good.Close)
	h.mustCreate(`{"name":"broken","base_url":"` + broken.URL + `","protocol":"anthropic","api_key":"k1","sort_order":1}`)
	h.mustCreate(`{"name":"good","base_url":"` + good.URL + `","protocol":"anthropic","api_key":"k2","sort_order":2,"price_multiplier":0.5,"model_map":{"claude-haiku-*":"claude-haiku-4-5"}}`)
	for _, m := range []string{"claude-sonnet-4-5", "claude-sonnet-4-5", "claude-haiku-4-5-20251001"} {
		if res := h.postMessages(t, m); res.StatusCode != 200 {
			t.Fatalf("status %d", res.StatusCode)
		}
	}

	var byEndpoint struct{ Buckets []StatBucket }
	h.do("GET", "/api/stats?minutes=10", "").decode(t, &byEndpoint)
	sums := map[string]StatBucket{}
	for _, b := range byEndpoint.Buckets {
		s := sums[b.Key]
		s.Add(b)
		sums[b.Key] = s
	}
	// The sticky cursor leaves broken after the first request's two tries.
	if b := sums["broken"]; b.Requests != 0 || b.Attempts != 2 || b.Errors != 2 || b.Input != 0 {
		t.Errorf("broken: %+v, want no requests, 2 attempts, 2 errors, no tokens", b)
	}
	if g := sums["good"]; g.Requests != 3 || g.Succeeded != 3 || g.Attempts != 3 || g.Errors != 0 || g.Input != 300 || g.CacheRead != 3000 || g.CacheWrite != 30 || g.Output != 150 {
		t.Errorf("good: %+v", g)
	}
	// Sonnet 4.5 at 3/15/0.30/3.75 per million twice, Haiku 4.5 at
	// 1/5/0.10/1.25 once, at the endpoint's multiplier of 0.5:
	// 0.5 × (2 × 1387.5 + 462.5) µ$ = 1618.75 µ$.
	if g := sums["good"]; math.Abs(g.CostUSD-0.00161875) > 1e-12 || g.Unpriced != 0 {
		t.Errorf("good cost %.10f unpriced %d, want 0.00161875", g.CostUSD, g.Unpriced)
	}

	var byModel struct{ Buckets []StatBucket }
	from := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	h.do("GET", "/api/stats?bucket=day&group=model&from="+from, "").decode(t, &byModel)
	models := map[string]int64{}
	for _, b := range byModel.Buckets {
		models[b.Key] += b.Attempts
	}
	// The forwarded model: model_map renamed the haiku request.
	if models["claude-sonnet-4-5"] != 4 || models["claude-haiku-4-5"] != 1 {
		t.Errorf("per model: %v", models)
	}

	res := h.do("GET", "/api/stats.csv?minutes=10&group=endpoint", "")
	rows, err := csv.NewReader(strings.NewReader(string(res.body))).ReadAll()
	if err != nil || len(rows) < 3 || strings.Join(rows[0], ",") != "start,endpoint,requests,succeeded,attempts,errors,input,output,cache_read,cache_write,reasoning,cost_usd,unpriced,hedges" {
		t.Fatalf("csv: %v %q", err, res.body)
	}
	if len(rows)-1 != len(byEndpoint.Buckets) {
		t.Errorf("csv has %d rows, json %d buckets", len(rows)-1, len(byEndpoint.Buckets))
	}
}

// One request that failed over twice before it was answered is one
// request, a success, of three attempts — not three requests of which one
// succeeded (docs/BEHAVIOUR.md#statistics). The tray's count is of
// requests too.
func TestStatsCountRequestsNotAttempts(t *testing.T) {
	h := newHarness(t)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		io.WriteString(w, `{"type":"error","error":{"type":"api_error","message":"down"}}`)
	}))
	t.Cleanup(broken.Close)
	good, _ := fakeAnthropic(t)
	h.mustCreate(`{"name":"broken","base_url":"` + broken.URL + `","protocol":"anthropic","api_key":"k1","sort_order":1}`)
	h.mustCreate(`{"name":"good","base_url":"` + good.URL + `","protocol":"anthropic","api_key":"k2","sort_order":2}`)
	if res := h.postMessages(t, "claude-sonnet-4-5"); res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}

	// The API's figures as JSON names them.
	type counts struct{ Requests, Succeeded, Attempts, Errors int64 }
	var st struct {
		Buckets []struct {
			Key string
			counts
		}
	}
	h.do("GET", "/api/stats?minutes=10", "").decode(t, &st)
	var total counts
	byKey := map[string]counts{}
	for _, b := range st.Buckets {
		k := byKey[b.Key]
		for _, s := range []*counts{&total, &k} {
			s.Requests += b.Requests
			s.Succeeded += b.Succeeded
			s.Attempts += b.Attempts
			s.Errors += b.Errors
		}
		byKey[b.Key] = k
	}
	for _, c := range []struct {
		name      string
		got, want counts
	}{
		{"all", total, counts{Requests: 1, Succeeded: 1, Attempts: 3, Errors: 2}},
		{"broken", byKey["broken"], counts{Attempts: 2, Errors: 2}},
		{"good", byKey["good"], counts{Requests: 1, Succeeded: 1, Attempts: 1}},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, c.got, c.want)
		}
	}
	if rate := float64(total.Succeeded) / float64(total.Requests); rate != 1 {
		t.Errorf("success rate %v, want 1", rate)
	}
	if n := h.app.today.Get(time.Now()).Requests; n != 1 {
		t.Errorf("today's requests (the tray's) = %d, want 1", n)
	}
}

// Traffic that reached no endpoint — /v1/models, a guard's refusal, a
// paused proxy's 503 — is counted under the key "" in the JSON (the UI
// names it) and under "(no endpoint)" in the CSV, never a blank cell
// (docs/BEHAVIOUR.md#statistics).
func TestStatsNoEndpointKey(t *testing.T) {
	h := newHarness(t)
	send := func(method, path, body string, mod func(*http.Request)) {
		t.Helper()
		logged := h.watchLog()
		req, _ := http.NewRequest(method, h.srv.URL+path, strings.NewReader(body))
		req.Header.Set("anthropic-version", "2023-06-01")
		if mod != nil {
			mod(req)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		logged()
	}
	send("GET", "/v1/models", "", nil)
	send("POST", "/v1/messages", `{"model":"m"}`, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") })
	h.app.SetPaused(true)
	send("POST", "/v1/messages", `{"model":"m"}`, nil)

	var st struct{ Buckets []StatBucket }
	h.do("GET", "/api/stats?minutes=10", "").decode(t, &st)
	var none int64
	for _, b := range st.Buckets {
		if b.Key != "" {
			t.Errorf("bucket under %q: %+v; want every request under the no-endpoint key", b.Key, b)
		}
		none += b.Requests
	}
	if none != 3 {
		t.Errorf("%d requests under the no-endpoint key, want 3", none)
	}

	for _, c := range []struct{ group, want string }{{"endpoint", "(no endpoint)"}, {"model", "(no model)"}} {
		t.Run(c.group, func(t *testing.T) {
			res := h.do("GET", "/api/stats.csv?minutes=10&group="+c.group, "")
			rows, err := csv.NewReader(strings.NewReader(string(res.body))).ReadAll()
			if err != nil || len(rows) < 2 {
				t.Fatalf("csv: %v %q", err, res.body)
			}
			found := false
			for _, r := range rows[1:] {
				if r[1] == "" {
					t.Errorf("a row with a blank %s: %q", c.group, r)
				}
				found = found || r[1] == c.want
			}
			if !found {
				t.Errorf("no row under %q in %q", c.want, res.body)
			}
		})
	}
}

func TestStatsQueryErrors(t *testing.T) {
	h := newHarness(t)
	old := time.Now().Add(-72 * time.Hour).UTC().Format(time.RFC3339)
	for _, q := range []string{
		"bucket=week", "group=colour", "from=yesterday", "minutes=0",
		"from=" + old + "&bucket=minute",
		fmt.Sprintf("from=%s&to=%s", time.Now().UTC().Format(time.RFC3339), old),
	} {
		if res := h.do("GET", "/api/stats?"+q, ""); res.status != 400 || !strings.Contains(string(res.body), "bad_query") {
			t.Errorf("%s: %d %s", q, res.status, res.body)
		}
	}
}

// A hedge counts for the endpoint that raced (docs/BEHAVIOUR.md#hedging).
func TestHedgeStatistics(t *testing.T) {
	h := newHarness(t)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server sees a closed connection only once the body is read
		<-r.Context().Done()        // never answers; the race cancels it
	}))
	t.Cleanup(slow.Close)
	fast, _ := fakeAnthropic(t)
	h.mustCreate(`{"name":"slow","base_url":"` + slow.URL + `","protocol":"anthropic","api_key":"k1","sort_order":1}`)
	h.mustCreate(`{"name":"fast","base_url":"` + fast.URL + `","protocol":"anthropic","api_key":"k2","sort_order":2}`)
	if r := h.do("PUT", "/api/settings", `{"hedge_after_ms":20}`); r.status != 200 {
		t.Fatalf("settings: %d %s", r.status, r.body)
	}
	if res := h.postMessages(t, "claude-sonnet-4-5"); res.StatusCode != 200 || res.Header.Get("x-ccmesh-endpoint") != "fast" {
		t.Fatalf("status %d via %q", res.StatusCode, res.Header.Get("x-ccmesh-endpoint"))
	}
	var st struct{ Buckets []StatBucket }
	h.do("GET", "/api/stats?minutes=10", "").decode(t, &st)
	hedges := map[string]int64{}
	errs := map[string]int64{}
	for _, b := range st.Buckets {
		hedges[b.Key] += b.Hedges
		errs[b.Key] += b.Errors
	}
	if hedges["fast"] != 1 || hedges["slow"] != 0 {
		t.Errorf("hedges %v, want 1 for fast", hedges)
	}
	// The cancelled side is an attempt the loop moved on from.
	if errs["slow"] != 1 || errs["fast"] != 0 {
		t.Errorf("errors %v", errs)
	}
}

// An endpoint's own hedge delay: -1 (the setting's) by default, 0 never,
// up to 10 minutes (docs/BEHAVIOUR.md#hedging).
func TestEndpointHedgeField(t *testing.T) {
	h := newHarness(t)
	if e := h.mustCreate(`{"name":"a","base_url":"http://127.0.0.1:9","protocol":"anthropic"}`); e.HedgeAfterMs != -1 {
		t.Errorf("default hedge_after_ms %d, want -1", e.HedgeAfterMs)
	}
	if e := h.mustCreate(`{"name":"b","base_url":"http://127.0.0.1:9","protocol":"anthropic","hedge_after_ms":250}`); e.HedgeAfterMs != 250 {
		t.Errorf("hedge_after_ms %d, want 250", e.HedgeAfterMs)
	}
	for _, v := range []string{"-2", "600001"} {
		if r := h.do("POST", "/api/endpoints", `{"name":"c","base_url":"http://127.0.0.1:9","protocol":"anthropic","hedge_after_ms":`+v+`}`); r.status != 422 {
			t.Errorf("hedge_after_ms %s: %d %s", v, r.status, r.body)
		}
	}
}
