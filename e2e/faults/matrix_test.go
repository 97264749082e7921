package faults

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Short timeouts keep the matrix fast (docs/BEHAVIOUR.md#streaming's defaults are 60/90 s).
const (
	firstByteTimeout = 500 * time.Millisecond
	idleTimeout      = 500 * time.Millisecond
)

// answer says what the client must receive.
type answer int

const (
	fromB     answer = iota // B's complete answer, failed over invisibly
	brokenA                 // A's answer that broke: a 200 stream ending in an error event, or a JSON body whose connection is cut
	errorBody               // ccmesh's own error, in the client's shape, naming endpoint A
	gone                    // the client cancelled: it reads nothing more
)

// breakerWant is endpoint A's breaker after the cell (GET /api/health).
type breakerWant struct {
	state, reason      string
	failures           int           // consecutive_failures, checked when state is closed
	retryMin, retryMax time.Duration // retry_in_ms bounds, checked when state is open
}

// want is what docs/BEHAVIOUR.md says one cell ends in.
type want struct {
	statuses   []int  // the last request's status: any of these
	answer     answer // what its body is
	retryAfter []int  // [min, max] of a Retry-After the client must get; nil = none checked
	earlier    int    // status of every request before the last (bursts)
	attempts   int    // log row attempts and x-ccmesh-attempts
	history    []string
	streamEnd  string // exact stream_end of the log row; "!complete" = anything else
	logStatus  int    // when the log's status differs from the client's (499)
	a          breakerWant
	aHits      int64 // requests A's server saw, -1 = not checked
	bHits      int64
}

func closedWith(n int) breakerWant { return breakerWant{state: "closed", failures: n} }

func openFor(reason string, lo, hi time.Duration) breakerWant {
	return breakerWant{state: "open", reason: reason, retryMin: lo, retryMax: hi}
}

// faultCase is one row of the matrix; want gives every cell of the row.
type faultCase struct {
	name     string
	fault    fault
	requests func(second bool) int // client requests in the cell; nil = 1
	want     func(stream, second bool) want
}

// retryable is docs/BEHAVIOUR.md#attempt-loop's 5xx/transport/first-byte-timeout row: the same
// endpoint once more after 300 ms, then the next; Broken.
func retryable(noneStatuses []int, aHits int64) func(stream, second bool) want {
	return func(stream, second bool) want {
		if second {
			return want{statuses: []int{200}, answer: fromB, attempts: 3,
				history: []string{"a:failure", "a:failure", "b:success"}, streamEnd: completeIf(stream),
				a: closedWith(2), aHits: aHits, bHits: 1}
		}
		return want{statuses: noneStatuses, answer: errorBody, attempts: 2,
			history: []string{"a:failure", "a:failure"}, streamEnd: notCompleteIf(stream),
			a: closedWith(2), aHits: aHits, bHits: 0}
	}
}

// nextAtOnce is docs/BEHAVIOUR.md#attempt-loop's 429/quota/401 rows: the next endpoint at once,
// no second try on A. Without B the client gets A's status.
func nextAtOnce(noneStatus int, a breakerWant) func(stream, second bool) want {
	return func(stream, second bool) want {
		if second {
			return want{statuses: []int{200}, answer: fromB, attempts: 2,
				history: []string{"a:failure", "b:success"}, streamEnd: completeIf(stream),
				a: a, aHits: 1, bHits: 1}
		}
		return want{statuses: []int{noneStatus}, answer: errorBody, attempts: 1,
			history: []string{"a:failure"}, streamEnd: notCompleteIf(stream), a: a, aHits: 1, bHits: 0}
	}
}

// brokenAfterStart is docs/BEHAVIOUR.md#streaming's "once content reached the client there is
// no failover": the client keeps A's 200, the breaker counts a failure.
func brokenAfterStart(streamEnd string) func(stream, second bool) want {
	return func(stream, second bool) want {
		end := ""
		if stream {
			end = streamEnd
		}
		return want{statuses: []int{200}, answer: brokenA, attempts: 1, history: []string{"a:failure"},
			streamEnd: end, a: closedWith(1), aHits: 1, bHits: 0}
	}
}

func completeIf(stream bool) string {
	if stream {
		return "complete"
	}
	return ""
}

func notCompleteIf(stream bool) string {
	if stream {
		return "!complete"
	}
	return ""
}

func faultCases() []faultCase {
	gateway := []int{http.StatusBadGateway}
	timeoutStatuses := []int{http.StatusBadGateway, http.StatusGatewayTimeout}
	return []faultCase{
		{name: "connection refused", fault: refused, want: retryable(gateway, 0)},
		{name: "reset before headers", fault: resetBeforeHeaders, want: retryable(gateway, 2)},
		{name: "slow first byte", fault: slowFirstByte, want: retryable(timeoutStatuses, 2)},
		{name: "stall before content", fault: stallBeforeContent, want: stallBeforeContentWant},
		{name: "stall mid-stream", fault: stallMidStream, want: brokenAfterStart("idle_timeout")},
		{name: "cut mid-stream", fault: cutMidStream, want: brokenAfterStart("upstream_error")},
		{name: "cut mid-body, chunked", fault: cutMidBodyChunked, want: brokenAfterStart("upstream_error")},
		{name: "5xx burst", fault: status500, requests: burstRequests, want: burstWant},
		// docs/BEHAVIOUR.md#streaming: a 200 whose stream starts with an error event is a failed
		// attempt like a 529 before the response (docs/BEHAVIOUR.md#attempt-loop's 5xx row).
		// Without B the stream case may answer 529 or 502: the upstream's
		// status was a 200, so "the last upstream error" is open to reading.
		{name: "overloaded (529 / error event first)", fault: overloaded, want: retryable([]int{529, http.StatusBadGateway}, 2)},
		{name: "429 with Retry-After", fault: status429RetryAfter, want: with429RetryAfter},
		{name: "429 without Retry-After", fault: status429, want: with429},
		{name: "quota 429", fault: quota429,
			want: nextAtOnce(http.StatusTooManyRequests, openFor("quota_exhausted", 50*time.Minute, time.Hour))},
		// docs/BEHAVIOUR.md#headers: the error body must be readable whatever the client's
		// accept-encoding (the matrix sends Claude Code's).
		{name: "quota 429, gzip-encoded body", fault: quota429Gzip,
			want: nextAtOnce(http.StatusTooManyRequests, openFor("quota_exhausted", 50*time.Minute, time.Hour))},
		{name: "credit balance 400", fault: credit400,
			want: nextAtOnce(http.StatusBadRequest, openFor("quota_exhausted", 50*time.Minute, time.Hour))},
		{name: "401 with injected key", fault: status401, want: nextAtOnce(http.StatusUnauthorized, closedWith(1))},
		{name: "client cancel", fault: slowForCancel, want: cancelWant},
	}
}

// stallBeforeContentWant: a stream stalled in its prelude fails over
// invisibly (docs/BEHAVIOUR.md#streaming, hold bounded by the first-byte timeout, retried like
// one); a non-stream 200 whose body stalls is already the client's.
func stallBeforeContentWant(stream, second bool) want {
	if !stream {
		return brokenAfterStart("")(stream, second)
	}
	return retryable([]int{http.StatusBadGateway, http.StatusGatewayTimeout}, 2)(stream, second)
}

// A 5xx burst: with B, sticky routing leaves A after its two failures and
// the next requests start on B; without B, four requests of two failures
// reach Claude's failure_threshold of 8 and the fifth finds A open (docs/BEHAVIOUR.md#no-candidates).
func burstRequests(second bool) int {
	if second {
		return 4
	}
	return 5
}

func burstWant(stream, second bool) want {
	if second {
		return want{statuses: []int{200}, answer: fromB, earlier: 200, attempts: 1,
			history: []string{"b:success"}, streamEnd: completeIf(stream), a: closedWith(2), aHits: 2, bHits: 4}
	}
	return want{statuses: []int{http.StatusBadGateway}, answer: errorBody, earlier: 500, attempts: 0,
		streamEnd: notCompleteIf(stream), a: openFor("broken", 80*time.Second, 90*time.Second), aHits: 8}
}

func with429RetryAfter(stream, second bool) want {
	w := nextAtOnce(http.StatusTooManyRequests, openFor("rate_limited", 25*time.Second, 30*time.Second))(stream, second)
	if !second {
		w.retryAfter = []int{25, 30} // docs/BEHAVIOUR.md#attempt-loop: all attempts 429 → Retry-After of the earliest free
	}
	return w
}

func with429(stream, second bool) want {
	w := nextAtOnce(http.StatusTooManyRequests, closedWith(1))(stream, second)
	if !second {
		w.retryAfter = []int{0, 5}
	}
	return w
}

// cancelWant: the client went away — stop at once, neutral (docs/BEHAVIOUR.md#attempt-loop), 499.
func cancelWant(stream, second bool) want {
	end := ""
	if stream {
		end = "client_gone"
	}
	return want{answer: gone, attempts: 1, history: []string{"a:neutral"}, streamEnd: end,
		logStatus: 499, a: closedWith(0), aHits: 1, bHits: 0}
}

// variant is one way of running the matrix: the protocol the client
// speaks and the protocol of the healthy second endpoint B. The faulty
// endpoint A is always the Anthropic fake, so a client of another protocol
// reaches it through a translation (docs/BEHAVIOUR.md#translation).
type variant struct {
	client    clientProto
	bProtocol string // "anthropic" or "openai-chat"
	tag       string // prefix of the cells' models and endpoint names
}

// The Claude run: Claude Code against two Anthropic endpoints.
var claudeMatrix = variant{client: claudeClient{}, bProtocol: "anthropic"}

// The translated run: an OpenAI Chat client, A reached through the
// chat→anthropic translation, B a Chat endpoint, so a failover also
// changes protocol.
var translatedMatrix = variant{client: chatClient{}, bProtocol: "openai-chat", tag: "chat-"}

// translated says whether A speaks another protocol than the client.
func (v variant) translated() bool { return v.client.protocol() != "anthropic" }

// translation is what the log's attempt row names for an attempt on an
// endpoint speaking p: "" when it is the client's protocol.
func (v variant) translation(p string) string {
	if p == v.client.protocol() {
		return ""
	}
	return v.client.protocol() + "→" + p
}

// wantFor is a row's cell in v. The rows are written for the Claude run;
// a translated non-streamed answer is read whole and decoded before
// anything is written (docs/BEHAVIOUR.md#translation), so a body that
// breaks or stalls after A's 200 never reaches the client cut: it is a
// failed attempt retried like a 5xx, whose last upstream status (200) is
// not an error, so without B the client gets a 502 (docs/BEHAVIOUR.md#attempt-loop).
func (v variant) wantFor(fc faultCase, stream, second bool) want {
	w := fc.want(stream, second)
	if v.translated() && !stream && w.answer == brokenA {
		w = retryable([]int{http.StatusBadGateway}, 2)(stream, second)
	}
	return w
}

// testFaultMatrix runs the matrix in the Claude run.
func testFaultMatrix(t *testing.T, bin string) { runMatrix(t, bin, claudeMatrix) }

// testTranslatedFaultMatrix runs the same rows with a Chat client served by
// A through a translation and by a Chat B.
func testTranslatedFaultMatrix(t *testing.T, bin string) { runMatrix(t, bin, translatedMatrix) }

// runMatrix runs every fault × {stream, non-stream} × {healthy second
// endpoint, none} against one ccmesh. Cells are isolated by model: each
// cell's endpoints serve only that cell's model, and each cell adds its
// endpoints at the end of the list, where the sticky cursor reaches them
// first (docs/BEHAVIOUR.md#routing).
func runMatrix(t *testing.T, bin string, v variant) {
	c := startCCMesh(t, bin)
	c.setTimeouts(t, firstByteTimeout, idleTimeout)
	n := 0
	for _, fc := range faultCases() {
		t.Run(fc.name, func(t *testing.T) {
			for _, stream := range []bool{false, true} {
				for _, second := range []bool{true, false} {
					n++
					t.Run(cellName(stream, second), func(t *testing.T) {
						runCell(t, c, v, fc, stream, second, n)
					})
				}
			}
		})
	}
}

func cellName(stream, second bool) string {
	s := "non-stream"
	if stream {
		s = "stream"
	}
	if second {
		return s + "/healthy second"
	}
	return s + "/no second"
}

// cell is one cell's fakes and endpoint names.
type cell struct {
	c            *ccmesh
	v            variant
	model        string
	a, b         *upstream
	aName, bName string
	aKey         string
}

func runCell(t *testing.T, c *ccmesh, v variant, fc faultCase, stream, second bool, n int) {
	w := v.wantFor(fc, stream, second)
	x := &cell{c: c, v: v, model: fmt.Sprintf("%sclaude-e2e-cell-%02d", v.tag, n),
		aName: fmt.Sprintf("%scell%02d-a", v.tag, n), bName: fmt.Sprintf("%scell%02d-b", v.tag, n), aKey: fmt.Sprintf("sk-ant-a-%02d-secret", n)}
	x.a = newUpstream(t, x.aName, fc.fault)
	c.addEndpoint(t, endpointSpec{Name: x.aName, BaseURL: x.a.url, Protocol: "anthropic", APIKey: x.aKey, Models: []string{x.model}})
	if second {
		if v.bProtocol == "openai-chat" {
			x.b = newChatFake(t, x.bName)
		} else {
			x.b = newUpstream(t, x.bName, healthy)
		}
		c.addEndpoint(t, endpointSpec{Name: x.bName, BaseURL: x.b.url, Protocol: v.bProtocol, APIKey: x.bKey(), Models: []string{x.model}})
	}
	requests := 1
	if fc.requests != nil {
		requests = fc.requests(second)
	}
	var last reply
	for i := range requests {
		ctx := t.Context()
		start := time.Now()
		if fc.fault == slowForCancel {
			last = sendAndCancel(ctx, c.http, v.client, c.url(""), x.model, stream, x.a.arrived)
		} else {
			last = sendAs(ctx, c.http, v.client, c.url(""), x.model, stream, nil)
		}
		if took := time.Since(start); took > clientTimeout {
			t.Errorf("request %d took %s; every fault must end within %s", i+1, took, clientTimeout)
		}
		if i < requests-1 && last.status != w.earlier {
			t.Fatalf("request %d of %d: status %d, want %d (body %s)", i+1, requests, last.status, w.earlier, last.body)
		}
	}
	x.checkReply(t, w, stream, last)
	rows := c.waitLogs(t, x.model, requests)
	x.checkLog(t, w, stream, rows[0])
	x.checkBreaker(t, w)
	x.checkUpstreams(t, w, fc.fault)
}

func (x *cell) bKey() string { return "sk-b-" + x.bName + "-secret" }

func (x *cell) checkReply(t *testing.T, w want, stream bool, r reply) {
	t.Helper()
	if w.answer == gone {
		return // the client cancelled; checkUpstreams and the log say the rest
	}
	if w.answer == brokenA && !stream && r.err != nil {
		// ccmesh cut the connection before its buffered header left: the
		// client got no answer, which is right; it must never get a
		// complete-looking one (docs/BEHAVIOUR.md#attempt-loop).
		return
	}
	if r.err != nil {
		t.Fatalf("client: no response: %v", r.err)
	}
	if !slices.Contains(w.statuses, r.status) {
		t.Fatalf("client status = %d, want one of %v; body: %s", r.status, w.statuses, r.body)
	}
	if got := r.header.Get("X-Ccmesh-Attempts"); got != strconv.Itoa(w.attempts) {
		t.Errorf("x-ccmesh-attempts = %q, want %d (docs/BEHAVIOUR.md#attempt-loop)", got, w.attempts)
	}
	switch w.answer {
	case fromB:
		x.checkFromB(t, stream, w, r)
	case brokenA:
		x.checkBrokenA(t, stream, r)
	case errorBody:
		x.checkErrorBody(t, w, r)
	}
}

func (x *cell) checkFromB(t *testing.T, stream bool, w want, r reply) {
	t.Helper()
	if got := r.header.Get("X-Ccmesh-Endpoint"); got != x.bName {
		t.Errorf("x-ccmesh-endpoint = %q, want %q", got, x.bName)
	}
	if got, want := r.header.Get("X-Fallback-Triggered"), strconv.FormatBool(w.attempts > 1); got != want {
		t.Errorf("x-fallback-triggered = %q, want %q", got, want)
	}
	if r.readErr != nil {
		t.Errorf("client body broke: %v", r.readErr)
	}
	if strings.Contains(string(r.body), x.aName) {
		t.Errorf("the answer carries something of A (%s); a failed attempt must not leak (docs/BEHAVIOUR.md#streaming): %s", x.aName, r.body)
	}
	if !stream {
		got, err := x.v.client.text(r.body)
		if err != nil || got != answerText(x.bName) {
			t.Errorf("answer = %q (%v), want %q", got, err, answerText(x.bName))
		}
		return
	}
	evs := parseSSE(r.body)
	if len(evs) == 0 {
		t.Fatalf("empty stream")
	}
	if got := x.v.client.streamText(evs); got != answerText(x.bName) {
		t.Errorf("streamed text = %q, want %q; A's prelude or content must not leak (docs/BEHAVIOUR.md#streaming)", got, answerText(x.bName))
	}
	x.v.client.checkComplete(t, evs, r.body, x.bName)
}

func (x *cell) checkBrokenA(t *testing.T, stream bool, r reply) {
	t.Helper()
	if got := r.header.Get("X-Ccmesh-Endpoint"); got != x.aName {
		t.Errorf("x-ccmesh-endpoint = %q, want %q", got, x.aName)
	}
	if !stream {
		if _, err := x.v.client.text(r.body); err == nil {
			t.Errorf("a body that broke off reached the client as a complete message: %s", r.body)
		}
		if r.readErr == nil {
			t.Errorf("a body that broke off reached the client with a clean end (%d bytes); the connection must be cut", len(r.body))
		}
		return
	}
	evs := parseSSE(r.body)
	if len(evs) == 0 {
		t.Fatalf("empty stream, want A's first delta and an error at the end")
	}
	if got := x.v.client.streamText(evs); got != "hello " {
		t.Errorf("streamed text = %q, want A's first delta %q and nothing from elsewhere", got, "hello ")
	}
	x.v.client.checkBroken(t, evs, r.body)
}

func (x *cell) checkErrorBody(t *testing.T, w want, r reply) {
	t.Helper()
	msg, err := x.v.client.errorMessage(r.body)
	if err != nil {
		t.Fatalf("client error body: %v", err)
	}
	if !strings.Contains(msg, x.aName) {
		t.Errorf("error message %q does not name the endpoint tried (%s); docs/BEHAVIOUR.md#inbound-api/docs/BEHAVIOUR.md#attempt-loop want the failover history", msg, x.aName)
	}
	if w.retryAfter == nil {
		return
	}
	ra, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || ra < w.retryAfter[0] || ra > w.retryAfter[1] {
		t.Errorf("Retry-After = %q, want seconds in [%d, %d] (docs/BEHAVIOUR.md#attempt-loop)", r.header.Get("Retry-After"), w.retryAfter[0], w.retryAfter[1])
	}
}

func (x *cell) checkLog(t *testing.T, w want, stream bool, row logRow) {
	t.Helper()
	wantStatus := w.logStatus
	if wantStatus == 0 {
		wantStatus = w.statuses[0]
	}
	if row.Status != wantStatus && (w.logStatus != 0 || !slices.Contains(w.statuses, row.Status)) {
		t.Errorf("log status = %d, want %d", row.Status, wantStatus)
	}
	if row.Attempts != w.attempts {
		t.Errorf("log attempts = %d, want %d", row.Attempts, w.attempts)
	}
	if row.Stream != stream {
		t.Errorf("log stream = %v, want %v", row.Stream, stream)
	}
	if got := x.historyOf(row); !slices.Equal(got, w.history) {
		t.Errorf("log history = %v, want %v\nrow: %+v", got, w.history, row)
	}
	for i, a := range row.History {
		if counted := a.Outcome != "neutral"; a.BreakerCounted != counted {
			t.Errorf("history[%d] %s: breaker_counted = %v, want %v", i, a.Outcome, a.BreakerCounted, counted)
		}
		p := "anthropic" // A's
		if a.Endpoint == x.bName {
			p = x.v.bProtocol
		}
		if want := x.v.translation(p); a.Translation != want {
			t.Errorf("history[%d] on %s: translation = %q, want %q (docs/BEHAVIOUR.md#translation)", i, a.Endpoint, a.Translation, want)
		}
	}
	switch {
	case w.streamEnd == "!complete":
		if row.StreamEnd == "complete" {
			t.Errorf("log stream_end = complete for a stream that never reached the client")
		}
	case row.StreamEnd != w.streamEnd:
		t.Errorf("log stream_end = %q, want %q", row.StreamEnd, w.streamEnd)
	}
	if gotGone := row.ClientGone; gotGone != (w.answer == gone) {
		t.Errorf("log client_gone = %v, want %v", gotGone, w.answer == gone)
	}
	if w.answer == fromB && (row.TokensIn != 7 || row.TokensOut != 4) {
		t.Errorf("log tokens in/out = %d/%d, want the upstream's usage 7/4 (docs/BEHAVIOUR.md#request-log)", row.TokensIn, row.TokensOut)
	}
	if w.answer == brokenA && row.Error == "" {
		t.Errorf("log row of a response that broke after its 200 has no error text")
	}
}

// historyOf writes the history as "a:failure"-style steps.
func (x *cell) historyOf(row logRow) []string {
	var out []string
	for _, a := range row.History {
		who := a.Endpoint
		switch a.Endpoint {
		case x.aName:
			who = "a"
		case x.bName:
			who = "b"
		}
		out = append(out, who+":"+a.Outcome)
	}
	return out
}

func (x *cell) checkBreaker(t *testing.T, w want) {
	t.Helper()
	h := x.c.health(t, x.aName)
	if h.State != w.a.state {
		t.Fatalf("A's breaker state = %q (reason %q, failures %d), want %q", h.State, h.Reason, h.ConsecutiveFailures, w.a.state)
	}
	if w.a.state == "closed" {
		if h.ConsecutiveFailures != w.a.failures {
			t.Errorf("A's consecutive_failures = %d, want %d", h.ConsecutiveFailures, w.a.failures)
		}
		if h.Status != "healthy" {
			t.Errorf("A's health status = %q, want healthy", h.Status)
		}
		return
	}
	if h.Reason != w.a.reason {
		t.Errorf("A's breaker reason = %q, want %q", h.Reason, w.a.reason)
	}
	if h.Status != "unhealthy" {
		t.Errorf("A's health status = %q, want unhealthy", h.Status)
	}
	if got := time.Duration(h.RetryInMs) * time.Millisecond; got < w.a.retryMin || got > w.a.retryMax {
		t.Errorf("A's retry_in = %s, want within [%s, %s]", got, w.a.retryMin, w.a.retryMax)
	}
}

func (x *cell) checkUpstreams(t *testing.T, w want, f fault) {
	t.Helper()
	if w.aHits >= 0 {
		if got := x.a.hits.Load(); got != w.aHits {
			t.Errorf("A's upstream got %d request(s), want %d", got, w.aHits)
		}
	}
	if x.b != nil {
		if got := x.b.hits.Load(); got != w.bHits {
			t.Errorf("B's upstream got %d request(s), want %d", got, w.bHits)
		}
	}
	if x.a.hits.Load() > 0 && f != refused {
		if got := x.a.key(); got != x.aKey {
			t.Errorf("A got x-api-key %q, want the endpoint's own key (docs/BEHAVIOUR.md#headers)", got)
		}
		// The client's query goes only to an endpoint of its protocol
		// (docs/BEHAVIOUR.md#inbound-api); a translated request goes to the
		// Messages path (docs/BEHAVIOUR.md#translation).
		want := "/v1/messages?beta=true"
		if x.v.translated() {
			want = "/v1/messages"
		}
		if got := x.a.target(); got != want {
			t.Errorf("A was asked for %q, want %q", got, want)
		}
	}
	if x.b != nil && x.b.hits.Load() > 0 {
		if got := x.b.key(); got != x.bKey() {
			t.Errorf("B got key %q, want the endpoint's own key (docs/BEHAVIOUR.md#headers)", got)
		}
	}
	if f == slowForCancel {
		select {
		case <-x.a.canceled:
		case <-time.After(5 * time.Second):
			t.Errorf("A's request was not cancelled within 5 s of the client going away (docs/BEHAVIOUR.md#attempt-loop: release everything)")
		}
	}
}
