package app

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/app/balance"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// balanceRelay is a new-api relay: /v1/messages answers like Anthropic
// (or 402 when quota402 is set), /api/usage/token/ reads the key's quota
// units as left (500 000 = $1), or answers status when it is set.
type balanceRelay struct {
	srv      *httptest.Server
	mu       sync.Mutex
	left     int64
	status   int
	quota402 bool
	reads    chan string // the Authorization of each balance read
	messages atomic.Int32
}

func newBalanceRelay(t *testing.T, left int64) *balanceRelay {
	t.Helper()
	rl := &balanceRelay{left: left, reads: make(chan string, 16)}
	rl.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rl.mu.Lock()
		left, status, q402 := rl.left, rl.status, rl.quota402
		rl.mu.Unlock()
		w.Header().Set("content-type", "application/json")
		switch r.URL.Path {
		case "/api/usage/token/":
			rl.reads <- r.Header.Get("Authorization")
			if status != 0 {
				w.WriteHeader(status)
				io.WriteString(w, `{"success":false,"message":"upstream trouble"}`)
				return
			}
			fmt.Fprintf(w, `{"code":true,"message":"ok","data":{"object":"token_usage","total_granted":%d,"total_used":%d,"total_available":%d,"unlimited_quota":false,"expires_at":0}}`,
				5_000_000, 5_000_000-left, left)
		case "/v1/messages":
			rl.messages.Add(1)
			if q402 {
				w.WriteHeader(http.StatusPaymentRequired)
				io.WriteString(w, `{"type":"error","error":{"type":"insufficient_quota","message":"insufficient quota"}}`)
				return
			}
			io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"model":"claude-sonnet-4-5","stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":2}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(rl.srv.Close)
	return rl
}

func (rl *balanceRelay) set(left int64, status int) {
	rl.mu.Lock()
	rl.left, rl.status = left, status
	rl.mu.Unlock()
}

// drain empties the reads the relay saw so far.
func (rl *balanceRelay) drain() {
	for {
		select {
		case <-rl.reads:
		default:
			return
		}
	}
}

// waitRead waits for the relay to be read (a read off the request path).
func (rl *balanceRelay) waitRead(t *testing.T, why string) string {
	t.Helper()
	select {
	case auth := <-rl.reads:
		return auth
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no balance read within 5 s", why)
		return ""
	}
}

func (h *harness) balanceOf(id int64, method string) BalanceReply {
	h.t.Helper()
	return okAs[BalanceReply](h.t, h.do(method, "/api/endpoints/"+strconv.FormatInt(id, 10)+"/balance", ""))
}

func (h *harness) routeOf(model string) proxy.Explanation {
	h.t.Helper()
	return okAs[proxy.Explanation](h.t, h.do("GET", "/api/route?protocol=anthropic&model="+model, ""))
}

func excludedByBalance(x proxy.Explanation, name string) bool {
	for _, e := range x.Excluded {
		if e.Endpoint == name && e.Reason == proxy.ExcludedBreaker && e.Balance {
			return true
		}
	}
	return false
}

// A relay whose balance reads 0 is left out, with "balance" in the routing
// view and the audit trail, until a refresh shows credit; an unknown
// reading changes nothing and is never 0.
func TestBalanceSteersRouting(t *testing.T) {
	h := newHarness(t)
	relay := newBalanceRelay(t, 0)
	spare, _ := fakeAnthropic(t)
	e := h.mustCreate(`{"name":"relay","protocol":"anthropic","base_url":"` + relay.srv.URL + `/v1","api_key":"` + secretKey + `","balance":{"template":"relay"}}`)
	h.mustCreate(`{"name":"spare","protocol":"anthropic","base_url":"` + spare.URL + `","api_key":"` + secretKey + `"}`)
	relay.waitRead(t, "a connector added") // read once on save

	steps := []struct {
		name      string
		left      int64
		status    int
		wantOut   bool   // left out by balance
		remaining string // the reading's remaining as JSON, "null" for unknown
	}{
		{"nothing left", 0, 0, true, "0"},
		{"unknown while spent", 0, 500, true, "null"},
		{"credit again", 1_000_000, 0, false, "2"},
		{"unknown with credit", 0, 502, false, "null"},
		{"spent again", 0, 0, true, "0"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			relay.set(s.left, s.status)
			relay.drain()
			got := h.balanceOf(e.ID, "POST")
			if got.Reading == nil {
				t.Fatal("no reading")
			}
			if rem := fmtRemaining(got.Reading.Remaining); rem != s.remaining {
				t.Errorf("remaining = %s, want %s (error %q)", rem, s.remaining, got.Reading.Error)
			}
			if s.status != 0 && !strings.Contains(got.Reading.Error, strconv.Itoa(s.status)) {
				t.Errorf("error %q does not say the status %d", got.Reading.Error, s.status)
			}
			if out := excludedByBalance(h.routeOf("claude-sonnet-4-5"), "relay"); out != s.wantOut {
				t.Errorf("left out by balance = %v, want %v", out, s.wantOut)
			}
			if again := h.balanceOf(e.ID, "GET"); fmtRemaining(again.Reading.Remaining) != s.remaining || again.Reading.Error != got.Reading.Error {
				t.Errorf("GET gives %+v, the refresh gave %+v", again.Reading, got.Reading)
			}
		})
	}
	// A request while it is spent goes to the spare, never to the relay.
	before := relay.messages.Load()
	if code := h.postClaudeCodeTurn(t); code != http.StatusOK {
		t.Errorf("request while the relay is spent: %d", code)
	}
	if relay.messages.Load() != before {
		t.Error("a request reached the relay whose balance reads 0")
	}
	events := okAs[[]store.BreakerEvent](t, h.do("GET", "/api/breaker-events", ""))
	var causes []string
	for _, ev := range events {
		if ev.Endpoint == "relay" {
			causes = append(causes, ev.Cause+":"+ev.To)
		}
	}
	if want := "balance:open balance:closed balance:open"; !strings.Contains(strings.Join(reversed(causes), " "), want) {
		t.Errorf("audit trail of relay = %v, want %q in it", reversed(causes), want)
	}
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func fmtRemaining(p *float64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

// A connector never sends the key to another host: a custom one there is
// refused without the user's yes, and a template's redirect is not
// followed.
func TestBalanceKeyStaysHome(t *testing.T) {
	h := newHarness(t)
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Authorization")+r.Header.Get("X-Key"), secretKey) {
			leaked.Add(1)
		}
		io.WriteString(w, `{"data":{"total_granted":1,"total_used":0,"total_available":1},"left":1}`)
	}))
	defer other.Close()
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer home.Close()
	e := h.mustCreate(`{"name":"home","protocol":"anthropic","base_url":"` + home.URL + `","api_key":"` + secretKey + `"}`)
	path := "/api/endpoints/" + strconv.FormatInt(e.ID, 10)

	custom := `{"url":"` + other.URL + `/b","headers":{"X-Key":"{{key}}"},"paths":{"remaining":"left"},"unit":"USD"}`
	r := h.do("PUT", path, `{"balance":`+custom+`}`)
	if r.status != http.StatusUnprocessableEntity || r.errCode() != "invalid_balance" || !strings.Contains(string(r.body), "balance.other_host") {
		t.Errorf("custom connector on another host: %d %s, want 422 invalid_balance on balance.other_host", r.status, r.body)
	}
	okAs[EndpointReply](t, h.do("PUT", path, `{"balance":{"template":"newapi"}}`))
	got := h.balanceOf(e.ID, "POST")
	if got.Reading == nil || got.Reading.Remaining != nil || !strings.Contains(got.Reading.Error, "redirect, not followed") {
		t.Errorf("a template redirected elsewhere: %+v, want unknown, redirect not followed", got.Reading)
	}
	if n := leaked.Load(); n != 0 {
		t.Errorf("the key reached the other host %d times", n)
	}
	// Another key in the log: none.
	if strings.Contains(h.logs.String(), secretKey) {
		t.Error("the key is in the log")
	}
}

// A quota error from an endpoint reads its balance; the low threshold
// notifies once per crossing; no timer runs while no endpoint has a
// connector.
func TestBalanceTriggersAndThreshold(t *testing.T) {
	h := newHarness(t)
	var mu sync.Mutex
	var notes []string
	notify := func(title, body string) error {
		if strings.Contains(title, "running low") { // not the breaker's own
			mu.Lock()
			notes = append(notes, title+" | "+body)
			mu.Unlock()
		}
		return nil
	}
	h.app.notifier.Store(&notify)
	if h.app.bal.Schedule().Armed() {
		t.Error("a balance timer runs with no connector")
	}
	relay := newBalanceRelay(t, 5_000_000) // $10
	e := h.mustCreate(`{"name":"relay","protocol":"anthropic","base_url":"` + relay.srv.URL + `","api_key":"` + secretKey + `","balance":{"template":"newapi","low_threshold":5}}`)
	if auth := relay.waitRead(t, "a connector added"); auth != "Bearer "+secretKey {
		t.Errorf("the read sent Authorization %q", auth)
	}
	if !h.app.bal.Schedule().Armed() {
		t.Error("no balance timer with a connector")
	}

	relay.mu.Lock()
	relay.quota402 = true
	relay.mu.Unlock()
	relay.set(1_000_000, 0) // $2: under the threshold
	h.postClaudeCodeTurn(t)
	relay.waitRead(t, "a quota error")

	for _, left := range []int64{500_000, 4_000_000, 1_500_000} { // $1 (still low), $8 (up), $3 (low again)
		relay.set(left, 0)
		h.balanceOf(e.ID, "POST")
	}
	relay.set(0, 500) // unknown: not a crossing either way
	h.balanceOf(e.ID, "POST")
	relay.set(1_000_000, 0)
	if got := h.balanceOf(e.ID, "POST"); !got.Low {
		t.Errorf("at $2 under a $5 threshold: low = false")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(notes)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) != 2 || !strings.Contains(notes[0], "relay is running low") || !strings.Contains(notes[0], "$2.00") || !strings.Contains(notes[1], "$3.00") {
		t.Errorf("notifications = %q, want two: at $2 and at $3", notes)
	}
	if v := h.app.TrayView(); !strings.Contains(v.Status, "lowest $2.00 (relay)") {
		t.Errorf("tray status %q, want the lowest balance", v.Status)
	}
	all := okAs[BalancesReply](t, h.do("GET", "/api/balances", ""))
	if len(all.Totals) != 1 || all.Totals[0].Unit != "USD" || all.Totals[0].Remaining != 2 {
		t.Errorf("totals = %+v, want $2", all.Totals)
	}
	okAs[EndpointReply](t, h.do("PUT", "/api/endpoints/"+strconv.FormatInt(e.ID, 10), `{"balance":{}}`))
	if h.app.bal.Schedule().Armed() {
		t.Error("a balance timer still runs after the last connector went")
	}
}

// A reading survives a restart, and so does a breaker a reading holds
// open: credit after the restart still closes it.
func TestBalanceAfterRestart(t *testing.T) {
	h := newHarness(t)
	relay := newBalanceRelay(t, 0)
	e := h.mustCreate(`{"name":"relay","protocol":"anthropic","base_url":"` + relay.srv.URL + `","api_key":"` + secretKey + `","balance":{"template":"newapi"}}`)
	relay.waitRead(t, "a connector added")
	h.balanceOf(e.ID, "POST")
	// The schedule also reads once at start; a reading that finishes after
	// a later one (the refresh below) must not undo it.
	h = h.restart()
	if got := h.balanceOf(e.ID, "GET"); got.Reading == nil || fmtRemaining(got.Reading.Remaining) != "0" {
		t.Errorf("after a restart: %+v, want the reading of 0", got.Reading)
	}
	if !excludedByBalance(h.routeOf("claude-sonnet-4-5"), "relay") {
		t.Error("after a restart the relay is not held by its balance")
	}
	relay.set(500_000, 0)
	h.balanceOf(e.ID, "POST")
	if excludedByBalance(h.routeOf("claude-sonnet-4-5"), "relay") {
		t.Error("credit after a restart did not close the breaker")
	}
}

// Two reads of one endpoint at once are applied in the order they began:
// the one that began first and finished last is stale and changes nothing.
func TestBalanceReadsApplyInOrder(t *testing.T) {
	h := newHarness(t)
	relay := newBalanceRelay(t, 0)
	e := h.mustCreate(`{"name":"relay","protocol":"anthropic","base_url":"` + relay.srv.URL + `","api_key":"` + secretKey + `","balance":{"template":"newapi"}}`)
	relay.waitRead(t, "a connector added")
	ep, _ := h.app.endpointByID(e.ID)
	c := balance.ConnectorOf(ep)
	b := h.app.bal
	first, second := b.Start(e.ID), b.Start(e.ID)
	zero, credit := 0.0, 5.0
	now := time.Now()
	b.Apply(t.Context(), ep, c, balance.Reading{Remaining: &credit, Unit: balance.USD, At: now}, second)
	b.Apply(t.Context(), ep, c, balance.Reading{Remaining: &zero, Unit: balance.USD, At: now.Add(-time.Second)}, first)
	if got := h.balanceOf(e.ID, "GET"); got.Reading == nil || fmtRemaining(got.Reading.Remaining) != "5" {
		t.Errorf("kept %+v, want the later read's 5", got.Reading)
	}
	if excludedByBalance(h.routeOf("claude-sonnet-4-5"), "relay") {
		t.Error("the stale read of 0 opened the breaker")
	}
}
