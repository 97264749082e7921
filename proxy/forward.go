package proxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/translate"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

var (
	errFirstByteTimeout = errors.New("first-byte timeout")
	errIdleTimeout      = errors.New("idle timeout")
)

const (
	errBodyCap   = 64 << 10 // error bodies read for classification
	bodyHeadCap  = 512      // error body bytes kept in the log
	usageBodyCap = 1 << 20  // success bodies kept to read usage from
)

// forwardOnce makes one try on e (forward, refused.go, decides whether
// there are more): it encodes the client's request for e, sends it, and
// classifies the answer; success and neutral answers are written to the
// client, failures only classified.
//
// An endpoint of the client's protocol gets the client's body with the
// model renamed (encode) and its answer passes through (stream,
// copyResponse). An endpoint of another protocol gets the request
// translated, per attempt, and its answer is translated back
// (translate.go); so is the answer of an upstream that streams when asked
// not to, or not when asked to.
func (q *request) forwardOnce(e *endpoint) result {
	sp := q.s.speeds.of(e.ID)
	sp.add(1)
	defer sp.add(-1)
	var ttfb time.Duration
	res := q.sendOnce(e, &ttfb)
	res.ttfb = ttfb
	return res
}

// sendOnce is forwardOnce's attempt; ttfb is set to the time the upstream
// took to send response headers.
func (q *request) sendOnce(e *endpoint, ttfb *time.Duration) result {
	cfg := &q.snap.cfg
	if q.inbound.Count && e.protocol != q.pi {
		if e.spec.CountUpstream != nil && e.spec.EncodeCount != nil {
			return q.countOn(e, ttfb)
		}
		q.answerEstimate(fmt.Sprintf("endpoint %s speaks %s, which has no token counter ccmesh can ask", e.Name, e.Protocol))
		return result{verdict: verdict{act: actDone, outcome: neutral}, status: http.StatusOK}
	}
	t, err := q.translationFor(e)
	if err != nil {
		return q.clientBadBody(err)
	}
	ctx, cancel := context.WithCancelCause(q.ctx())
	defer cancel(nil)
	var req *http.Request
	if t != nil {
		req, err = q.encodeTranslated(ctx, e, t)
		if conv.IsUnsupported(err) {
			return q.translationRefused(e, err)
		}
	} else {
		req, err = q.encode(ctx, e)
	}
	if err != nil {
		return result{verdict: verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrTransport},
			msg: "build upstream request: " + err.Error()}
	}
	firstByte := time.AfterFunc(cfg.FirstByteTimeout, func() { cancel(errFirstByteTimeout) })
	defer firstByte.Stop()
	q.rec.SentUpstream = true
	sent := time.Now()
	resp, err := q.transportTo(e).RoundTrip(req)
	*ttfb = time.Since(sent)
	if err != nil {
		return q.transportFailure(ctx, err)
	}
	defer resp.Body.Close()
	if perr := ProxyAnswered(e.ProxyURL, resp.StatusCode); perr != nil {
		// A plain http:// upstream reached through an http proxy that
		// wants other credentials.
		return q.transportFailure(ctx, perr)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		firstByte.Stop()
		return q.upstreamError(e, resp, t)
	}
	sse := isSSE(resp.Header)
	if t == nil && (sse != q.info.stream || sse && q.inbound.Form != nil) && !q.inbound.Count {
		// The upstream ignored "stream", or streams in another form than the
		// client's path asked for (Gemini's array): the client gets what it
		// asked for. A body the codec cannot read passes through as it came.
		t, _ = q.translationTo(q.proto)
	}
	if sse && decodeStream(resp) {
		// The first-byte timer keeps running: it also bounds the prelude hold.
		if t != nil && !q.info.stream {
			return q.collectStream(ctx, e, t, resp, firstByte, cancel)
		}
		var tx *streamTx
		if t != nil {
			tx = newStreamTx(t)
		}
		return q.stream(ctx, e, resp, firstByte, cancel, tx)
	}
	firstByte.Stop()
	if t != nil {
		return q.translatedResponse(ctx, e, t, resp, cancel)
	}
	return q.copyResponse(ctx, e, resp, cancel)
}

// encode builds the upstream request of one attempt on e.
func (q *request) encode(ctx context.Context, e *endpoint) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, q.passThroughURL(e), bytes.NewReader(q.withDrops(q.bodyFor(e))))
	if err != nil {
		return nil, err
	}
	req.Header = q.upstreamHeader(e)
	q.dropBetas(req.Header)
	return req, nil
}

// bodyFor is the body to send to e: the client's bytes, or a copy with
// only the model value changed when the @name/ prefix or model_map
// changes it.
func (q *request) bodyFor(e *endpoint) []byte {
	m := q.modelFor(e)
	q.rec.ModelForwarded = m
	if m == q.info.model || q.info.inPath {
		return q.body // a model in the path goes in the upstream's path (passThroughURL)
	}
	if b, ok := q.bodies[m]; ok {
		return b
	}
	b := withModel(q.body, q.info, m)
	q.keepBody(m, b)
	return b
}

// passThroughURL is the upstream URL of a request in the client's own
// protocol: the client's path and query, or, when the path names the
// model, the protocol's path for the forwarded model (the client's query
// belongs to the client's path).
func (q *request) passThroughURL(e *endpoint) string {
	if q.inbound.Count && q.info.inPath && e.spec.CountUpstream != nil {
		return e.upstreamURL(e.spec.CountUpstream(e.mapModel(q.model)))
	}
	if q.info.inPath {
		return e.upstreamURL(e.spec.Upstream(e.mapModel(q.model), q.info.stream))
	}
	return e.upstreamURL(q.r.URL.Path, q.rawQuery)
}

// keepBody caches an encoded body under key (bodyFor, translatedBody).
func (q *request) keepBody(key string, b []byte) {
	if q.bodies == nil {
		q.bodies = map[string][]byte{}
	}
	q.bodies[key] = b
}

// hopHeaders are removed in both directions (RFC 9110 §7.6.1).
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

func removeHopHeaders(h http.Header) {
	for _, v := range h["Connection"] {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

// upstreamHeader applies docs/BEHAVIOUR.md#headers: everything end-to-end is kept, the
// client's credentials and ccmesh's own headers are not, the endpoint's key
// is added.
func (q *request) upstreamHeader(e *endpoint) http.Header {
	h := q.r.Header.Clone()
	removeHopHeaders(h)
	h.Del("Host")
	h.Del("Content-Length") // the transport sets it from the body sent
	h.Del("Expect")         // ccmesh already read the body; 100-continue is per hop
	h.Del("Cookie")         // the admin UI's cookie shares this origin; API clients send none
	if q.info.stream {
		// Events are read one by one; a compressed stream would have to be
		// decoded to do that (decodeStream does, when an upstream insists).
		h.Set("Accept-Encoding", "identity")
	}
	for k := range h {
		if strings.HasPrefix(k, "X-Ccmesh-") {
			delete(h, k)
		}
	}
	// Without a key of its own the endpoint gets the client's auth, unless
	// that auth is ccmesh's client token, which never leaves (docs/BEHAVIOUR.md#safety).
	if e.APIKey != "" || q.snap.cfg.ClientToken != "" {
		h.Del("X-Api-Key")
		h.Del("Authorization")
		for _, s := range translate.Specs {
			if s.KeyHeader != "" {
				h.Del(s.KeyHeader) // a Gemini client's x-goog-api-key, …
			}
		}
	}
	setEndpointAuth(h, e)
	return h
}

// setEndpointAuth adds the endpoint's key the way its auth mode says.
func setEndpointAuth(h http.Header, e *endpoint) {
	if e.APIKey == "" {
		return
	}
	if e.keyHeader != "" {
		h.Set(e.keyHeader, e.APIKey)
	} else {
		h.Set("Authorization", "Bearer "+e.APIKey)
	}
}

// transportTo is the transport that reaches e: its proxy's, or the
// Server's own.
func (q *request) transportTo(e *endpoint) http.RoundTripper {
	if e.rt != nil {
		return e.rt
	}
	return q.s.transport
}

// transportFailure classifies an error before response headers.
func (q *request) transportFailure(ctx context.Context, err error) result {
	if q.r.Context().Err() != nil {
		return q.clientLeft()
	}
	res := result{verdict: brokenRetry, msg: describeTransport(err)}
	res.errType = ErrTransport
	if errors.Is(context.Cause(ctx), errFirstByteTimeout) {
		res.errType = ErrFirstByte
		res.msg = fmt.Sprintf("no response headers within %s (first-byte timeout)", q.snap.cfg.FirstByteTimeout)
	}
	return res
}

// describeTransport names a transport failure in a user's words.
func describeTransport(err error) string {
	var dns *net.DNSError
	var tlsErr *tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	var pe *ProxyError
	switch {
	case errors.As(err, &pe):
		return pe.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (is the endpoint's base_url right and the server up?)"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the upstream"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the upstream closed the connection without answering"
	case errors.As(err, &dns):
		return "DNS lookup failed: " + dns.Error()
	case errors.As(err, &certErr), errors.As(err, &tlsErr):
		return "TLS failure: " + err.Error()
	}
	return "transport error: " + err.Error()
}

// upstreamError reads the head of a non-2xx answer, classifies it and,
// when the table says so, hands it to the client as it came.
func (q *request) upstreamError(e *endpoint, resp *http.Response, t *translation) result {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, errBodyCap))
	if err != nil && q.r.Context().Err() != nil {
		return q.clientLeft()
	}
	decoded, masked := q.redact(e, decodeBody(resp.Header.Get("Content-Encoding"), raw, errBodyCap))
	res := result{
		verdict:  classifyStatus(resp.StatusCode, resp.Header, decoded, e.APIKey != "", time.Now()),
		status:   resp.StatusCode,
		bodyHead: Head(decoded, bodyHeadCap),
		msg:      statusMessage(resp.StatusCode, decoded),
	}
	if e.spec.ReadError != nil {
		if ue, ok := e.spec.ReadError(resp.StatusCode, decoded); ok {
			if v, ok := classifyProtocolError(ue, resp.Header, e.APIKey != "", time.Now()); ok {
				res.verdict = v
			}
		}
	}
	if q.inbound.Count {
		// Claude Code sends bursts of these; a relay that lacks the route
		// must neither fail the request nor trip the breaker that guards
		// its /v1/messages.
		res.verdict = verdict{act: actDone, outcome: neutral, errType: ErrStatus}
		q.answerEstimate(fmt.Sprintf("the upstream answered %d", resp.StatusCode))
		return res
	}
	if res.act != actDone {
		return res
	}
	if ds := q.refusedParts(resp.StatusCode, decoded); len(ds) > 0 {
		res.refused = ds
		return res
	}
	if adj := q.adjustmentFor(e, resp.StatusCode, decoded); adj != adjustNone {
		res.adjust = adj
		return res
	}
	if t != nil {
		q.translatedError(e, resp.StatusCode, res)
		return res
	}
	if masked {
		// The client gets the body with the key masked, decoded; the rest
		// beyond what was read is left out rather than sent in its coding.
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		raw = decoded
	}
	q.writeHeader(resp)
	if _, err := q.w.Write(raw); err != nil {
		return q.clientWriteFailed(res)
	}
	if !masked {
		if _, err := io.Copy(q.w, resp.Body); err != nil && q.r.Context().Err() != nil {
			return q.clientWriteFailed(res)
		}
	}
	q.rec.Error = res.msg
	return res
}

func (q *request) clientWriteFailed(res result) result {
	q.rec.ClientGone = true
	q.rec.Status = StatusClientGone
	res.outcome = neutral
	return res
}

// clientLeft is the result of an attempt the client walked away from
// before anything was written to it.
func (q *request) clientLeft() result {
	return result{verdict: clientLeft, msg: "client went away"}
}

// writeHeader sends resp's status and end-to-end headers to the client
// with ccmesh's own headers.
func (q *request) writeHeader(resp *http.Response) {
	h := q.w.Header()
	for k, vv := range resp.Header {
		h[k] = vv
	}
	removeHopHeaders(h)
	// A cookie set by an upstream would land on the admin UI's origin.
	h.Del("Set-Cookie")
	setCCMeshHeaders(h, q.rec.Endpoint, q.rec.AttemptCount)
	q.w.WriteHeader(resp.StatusCode)
	q.rec.Status = resp.StatusCode
	q.rec.TTFBMs = time.Since(q.start).Milliseconds()
}

// copyResponse passes a non-streamed 2xx through as it came, keeping a
// bounded copy to read usage from. Once the status is sent there is no
// failover: a broken body is a failure for the breaker only.
func (q *request) copyResponse(ctx context.Context, e *endpoint, resp *http.Response, cancel context.CancelCauseFunc) result {
	if e.OnModelMismatch == MismatchFail && !isSSE(resp.Header) {
		if res, done := q.judgeModel(e, resp); done {
			return res
		}
	}
	idle := time.AfterFunc(q.snap.cfg.IdleTimeout, func() { cancel(errIdleTimeout) })
	defer idle.Stop()
	q.writeHeader(resp)
	flush := isSSE(resp.Header) // an encoded stream we cannot parse: flush per read
	rc := newResponseController(q.w)
	var kept bytes.Buffer
	bp := q.s.copyBufs.Get().(*[]byte)
	defer q.s.copyBufs.Put(bp)
	buf := *bp
	src := &idleReader{r: resp.Body, t: idle, d: q.snap.cfg.IdleTimeout}
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			if kept.Len() < usageBodyCap {
				kept.Write(buf[:min(n, usageBodyCap-kept.Len())])
			}
			if _, err := q.w.Write(buf[:n]); err != nil {
				return q.clientWriteFailed(result{verdict: verdict{act: actDone}})
			}
			if flush {
				rc.flush()
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if q.r.Context().Err() != nil {
				return q.clientWriteFailed(result{verdict: verdict{act: actDone}})
			}
			msg := "upstream body broke after the response started: " + rerr.Error()
			if errors.Is(context.Cause(ctx), errIdleTimeout) {
				msg = fmt.Sprintf("upstream body stalled for %s (idle timeout)", q.snap.cfg.IdleTimeout)
			}
			q.rec.Error = msg
			// The status line is out; ending normally would hand the client
			// a truncated body as if complete. ServeHTTP aborts instead.
			q.abort = true
			return result{verdict: brokenAfterContent, status: resp.StatusCode, msg: msg}
		}
	}
	if !flush && kept.Len() < usageBodyCap {
		body := decodeBody(resp.Header.Get("Content-Encoding"), kept.Bytes(), usageBodyCap)
		if q.inbound.Count {
			q.rec.TokensIn = e.spec.ReadCount(body)
		} else {
			q.noteBody(e, body)
		}
	}
	return result{verdict: delivered, status: resp.StatusCode}
}

// judgeModel reads an answer before any of it reaches the client, for an
// endpoint that fails answers from another model (answered.go): up to
// usageBodyCap, which is then sent as if unread; a longer body is passed
// on unjudged. done reports the attempt's end: the answer failed, or its
// body broke before it was read.
func (q *request) judgeModel(e *endpoint, resp *http.Response) (result, bool) {
	head, err := io.ReadAll(io.LimitReader(resp.Body, usageBodyCap+1))
	if err != nil {
		if q.r.Context().Err() != nil {
			return q.clientLeft(), true
		}
		res := result{verdict: brokenRetry, status: resp.StatusCode, msg: "upstream body broke before it was complete: " + err.Error()}
		res.errType = ErrStreamEnd
		return res, true
	}
	if len(head) <= usageBodyCap {
		q.noteBody(e, decodeBody(resp.Header.Get("Content-Encoding"), head, usageBodyCap))
		if res, bad := q.mismatchFailure(e, resp.StatusCode); bad {
			return res, true
		}
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	return result{}, false
}

// idleReader re-arms the idle timer whenever bytes arrive.
type idleReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

func (ir *idleReader) Read(p []byte) (int, error) {
	n, err := ir.r.Read(p)
	if n > 0 {
		ir.t.Reset(ir.d)
	}
	return n, err
}

func isSSE(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/event-stream"
}

// decodeStream makes resp's body an identity-coded event stream: the
// prelude hold, failover, stream-end logging and usage all read events,
// whatever coding the upstream chose. It reports false for a coding ccmesh
// cannot read, which is then passed through as it came.
func decodeStream(resp *http.Response) bool {
	ce := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if ce == "" || ce == "identity" {
		return true
	}
	if _, ok := decoders[ce]; !ok {
		return false
	}
	resp.Body = &decodedBody{coding: ce, raw: resp.Body}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	return true
}

// decodedBody decodes raw as it is read. The decoder is built on the first
// Read: gzip and zstd read their header at once, and that read must happen
// inside the attempt's timeouts like every other read of the body.
type decodedBody struct {
	coding string
	raw    io.ReadCloser
	dec    io.ReadCloser
}

func (b *decodedBody) Read(p []byte) (int, error) {
	if b.dec == nil {
		d, err := newDecoder(b.coding, b.raw)
		if err != nil {
			return 0, fmt.Errorf("decode %s stream: %w", b.coding, err)
		}
		b.dec = d
	}
	return b.dec.Read(p)
}

func (b *decodedBody) Close() error {
	if b.dec != nil {
		b.dec.Close()
	}
	return b.raw.Close()
}

// Head returns at most n bytes of b as valid UTF-8 text, never cutting a
// character in two; invalid bytes become U+FFFD. Everything that shows an
// upstream's text (the request log, health, the admin API) cuts with it.
func Head(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
		for len(b) > 0 && !utf8.Valid(b) {
			b = b[:len(b)-1]
		}
	}
	return strings.ToValidUTF8(string(b), "�")
}

// statusMessage says what an upstream error status meant, with the
// upstream's own message when its body has one.
func statusMessage(status int, body []byte) string {
	msg := fmt.Sprintf("HTTP %d", status)
	if m := upstreamErrorText(body); m != "" {
		msg += " " + m
	}
	return msg
}
