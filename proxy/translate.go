package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/translate"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// This file is the proxy's side of protocol translation
// (docs/BEHAVIOUR.md#translation): an endpoint of another protocol than the
// client's gets the request re-encoded for it, and its answer — a body or
// a stream, event by event — is re-encoded for the client. The attempt
// loop, classification, the prelude hold and the request log work as for
// any endpoint: classification reads the upstream's own answer before it
// is re-shaped.

// translation is one attempt's pair of codecs.
type translation struct {
	client, upstream conv.Codec
	req              *conv.Request // the client's request, decoded
	// form is the client's stream form when its path asks for another
	// than its codec's own (conv.Inbound.Form).
	form *conv.StreamForm
}

// streamEncoder is the client's stream encoder.
func (t *translation) streamEncoder() conv.StreamEncoder {
	if t.form != nil {
		return t.form.Encoder(t.req)
	}
	return t.client.StreamEncoder(t.req)
}

// streamType is the Content-Type of the client's stream.
func (t *translation) streamType() string {
	if t.form != nil {
		return t.form.Type
	}
	return "text/event-stream"
}

// translationFor returns the translation an attempt on e needs: nil when
// e speaks the client's protocol. A body the client's codec cannot read is
// the client's error.
func (q *request) translationFor(e *endpoint) (*translation, error) {
	if e.protocol == q.pi && q.adjusted == adjustNone {
		return nil, nil
	}
	return q.translationTo(e.Protocol)
}

func (q *request) translationTo(p Protocol) (*translation, error) {
	req, err := q.clientRequest()
	if err != nil {
		return nil, err
	}
	return &translation{client: q.codecOf(q.shape, req), upstream: q.codecOf(p.Spec(), req), req: req, form: q.inbound.Form}, nil
}

// codecOf is spec's codec for this request's conversation: over the
// server's state for the protocol when it keeps one (conv.Spec.CodecFor:
// Gemini's thought signatures), else its plain codec.
func (q *request) codecOf(spec *conv.Spec, req *conv.Request) conv.Codec {
	if spec.CodecFor == nil {
		return spec.Codec
	}
	var state any
	if i := spec.Protocol.Index(); i >= 0 && i < len(q.s.states) {
		state = q.s.states[i]
	}
	return spec.CodecFor(state, q.clientID(), req)
}

// clientID is who the client is to conversation state: its address's
// host (every local client shares one; the conversation key tells their
// conversations apart).
func (q *request) clientID() string {
	host, _, err := net.SplitHostPort(q.r.RemoteAddr)
	if err != nil {
		return q.r.RemoteAddr
	}
	return host
}

// translationName is what the log calls the translation an attempt on e
// runs: "" when e speaks the client's protocol.
func (q *request) translationName(e *endpoint) Translation {
	if e.protocol == q.pi {
		return ""
	}
	return TranslationOf(q.proto, e.Protocol)
}

// clientRequest decodes the client's body into the neutral model once.
func (q *request) clientRequest() (*conv.Request, error) {
	if q.conv == nil {
		decode := q.shape.Codec.DecodeRequest
		if q.inbound.Count && q.shape.DecodeCount != nil {
			decode = q.shape.DecodeCount // a count body need not be a whole request
		}
		r, err := decode(q.body)
		if err != nil {
			return nil, err
		}
		r.Model = q.model // without an @name/ prefix
		if len(r.Dropped) > 0 {
			q.s.log.Debug().Strs("dropped", r.Dropped).Msg("translation leaves out what no other protocol carries")
		}
		q.conv = r
	}
	return q.conv, nil
}

// translatedBody is the body for e in e's protocol, encoded once per
// protocol and forwarded model.
func (q *request) translatedBody(e *endpoint, t *translation) ([]byte, error) {
	m := q.modelFor(e)
	q.rec.ModelForwarded = m
	key := string(e.Protocol) + "\x00" + m + "\x00" + q.adjusted.String()
	if b, ok := q.bodies[key]; ok {
		return b, nil
	}
	r := *t.req
	r.Model, r.Stream = m, q.info.stream
	q.adjusted.apply(&r, e.Protocol)
	b, err := t.upstream.EncodeRequest(&r)
	if err != nil {
		return nil, err
	}
	q.keepBody(key, b)
	return b, nil
}

// encodeTranslated builds the upstream request of a translated attempt.
func (q *request) encodeTranslated(ctx context.Context, e *endpoint, t *translation) (*http.Request, error) {
	body, err := q.translatedBody(e, t)
	if err != nil {
		return nil, err
	}
	// The client's query belongs to its protocol (Claude Code's ?beta=true).
	u := e.upstreamURL(e.spec.Upstream(e.mapModel(q.model), q.info.stream))
	if e.protocol == q.pi {
		u = q.passThroughURL(e) // a same-protocol retry (retry.go)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(q.withDrops(body)))
	if err != nil {
		return nil, err
	}
	h := q.upstreamHeader(e)
	q.dropBetas(h)
	protocolHeaders(h, e.spec)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	if q.info.stream {
		h.Set("Accept", "text/event-stream")
	}
	h.Set("Accept-Encoding", "identity")
	req.Header = h
	return req, nil
}

// protocolHeaders leaves out of h the headers only another protocol's
// upstreams read, and adds those spec's upstreams require.
func protocolHeaders(h http.Header, spec *conv.Spec) {
	for _, other := range translate.Specs {
		if other == spec || other.HeaderPrefix == "" {
			continue
		}
		for k := range h {
			if strings.HasPrefix(k, other.HeaderPrefix) {
				delete(h, k)
			}
		}
	}
	for k, v := range spec.Headers {
		if h.Get(k) == "" {
			h.Set(k, v)
		}
	}
}

// translationRefused is the result of an attempt whose request e's
// protocol cannot carry: the next endpoint may, and if none does the
// client hears why (a 400).
func (q *request) translationRefused(e *endpoint, err error) result {
	return result{
		verdict: verdict{act: actNext, outcome: neutral, errType: ErrTranslation},
		status:  http.StatusBadRequest,
		msg:     fmt.Sprintf("endpoint %s speaks %s, which cannot carry this request: %s", e.Name, e.Protocol, err),
	}
}

// clientBadBody answers a body the client's own codec refused.
func (q *request) clientBadBody(err error) result {
	q.fail(http.StatusBadRequest, "ccmesh could not read the request to translate it: "+err.Error())
	return result{verdict: verdict{act: actDone, outcome: neutral, errType: ErrTranslation}, status: http.StatusBadRequest, msg: q.rec.Error}
}

// translatedError hands the client an upstream error the attempt loop
// returns (a 400 and the like) in the client's protocol.
func (q *request) translatedError(e *endpoint, status int, res result) {
	msg := res.msg
	if msg == "" {
		msg = fmt.Sprintf("HTTP %d", status)
	}
	q.fail(status, fmt.Sprintf("endpoint %s (%s) answered: %s", e.Name, e.Protocol, msg))
}

// maxTranslatedAnswer bounds the decoded body of a non-streamed answer
// that is translated (docs/BEHAVIOUR.md#translation): the body, its
// decoded structure and the client's encoding of it are all in memory at
// once, and the longest real answer (128000 output tokens) is a fraction
// of this.
const maxTranslatedAnswer = 4 << 20

// translatedResponse reads a non-streamed 2xx body whole, decoding its
// content coding as it arrives and at most maxTranslatedAnswer (never more
// than max_body_bytes) of it, decodes it in the upstream's protocol and
// answers in the client's: JSON, or a stream when the client asked for one
// and the upstream ignored it. Nothing is written before the body is read
// and understood, so a body that breaks, is too large or cannot be read
// fails over like any failed attempt.
func (q *request) translatedResponse(ctx context.Context, e *endpoint, t *translation, resp *http.Response, cancel context.CancelCauseFunc) result {
	cfg := &q.snap.cfg
	idle := time.AfterFunc(cfg.IdleTimeout, func() { cancel(errIdleTimeout) })
	defer idle.Stop()
	limit := min(maxTranslatedAnswer, cfg.MaxBody)
	body, err := readDecoded(&idleReader{r: resp.Body, t: idle, d: cfg.IdleTimeout}, resp.Header.Get("Content-Encoding"), limit)
	if err != nil {
		return q.translatedReadFailed(ctx, resp, err, limit)
	}
	out, err := t.upstream.DecodeResponse(body)
	if err != nil {
		return result{
			verdict:  verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrStatus},
			status:   resp.StatusCode,
			bodyHead: Head(body, bodyHeadCap),
			msg:      fmt.Sprintf("the upstream's %d answer is not a %s response: %s", resp.StatusCode, t.upstream.Protocol(), err),
		}
	}
	q.noteBody(e, body)
	if res, bad := q.mismatchFailure(e, resp.StatusCode); bad {
		return res
	}
	return q.answerTranslated(resp, t, out)
}

// translatedReadFailed is the result of a translated answer that could not
// be read whole: too large or undecodable is the endpoint's failure (the
// same request would get the same answer), a broken or stalled body is
// retried like a transport failure.
func (q *request) translatedReadFailed(ctx context.Context, resp *http.Response, err error, limit int64) result {
	var ce *codingError
	switch {
	case q.r.Context().Err() != nil:
		return q.clientLeft()
	case errors.Is(err, errAnswerTooLarge):
		return result{verdict: verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrStatus}, status: resp.StatusCode,
			msg: fmt.Sprintf("the upstream's %d answer is too large to translate: more than %d KiB decoded", resp.StatusCode, limit>>10)}
	case errors.As(err, &ce) && !errors.Is(context.Cause(ctx), errIdleTimeout):
		return result{verdict: verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrStatus}, status: resp.StatusCode,
			msg: fmt.Sprintf("the upstream's %d answer could not be decoded (%s): %s", resp.StatusCode, resp.Header.Get("Content-Encoding"), ce.err)}
	}
	msg := "upstream body broke before it was complete: " + err.Error()
	if errors.Is(context.Cause(ctx), errIdleTimeout) {
		msg = fmt.Sprintf("upstream body stalled for %s (idle timeout)", q.snap.cfg.IdleTimeout)
	}
	return result{verdict: brokenRetry, status: resp.StatusCode, msg: msg}
}

// answerTranslated writes a complete response in the client's form.
func (q *request) answerTranslated(resp *http.Response, t *translation, out *conv.Response) result {
	var b []byte
	ctype := "application/json"
	if q.info.stream {
		ctype = t.streamType()
		enc := t.streamEncoder()
		conv.Replay(out, func(ev conv.Event) { b = enc.Encode(b, ev) })
	} else {
		var err error
		if b, err = t.client.EncodeResponse(out, t.req); err != nil {
			return result{verdict: verdict{act: actNext, outcome: neutral, errType: ErrTranslation},
				status: http.StatusBadGateway, msg: "ccmesh could not re-encode the answer: " + err.Error()}
		}
	}
	q.writeTranslatedHeader(resp, ctype)
	if _, err := q.w.Write(b); err != nil {
		return q.clientWriteFailed(result{verdict: verdict{act: actDone}})
	}
	if q.info.stream {
		q.rec.StreamEnd = StreamComplete
	}
	return result{verdict: delivered, status: resp.StatusCode}
}

// writeTranslatedHeader sends the upstream's status and end-to-end headers
// with the body's own type; the upstream's length and coding described
// a body the client does not get.
func (q *request) writeTranslatedHeader(resp *http.Response, ctype string) {
	resp.Header.Del("Content-Length")
	resp.Header.Del("Content-Encoding")
	resp.Header.Set("Content-Type", ctype)
	if q.info.stream {
		resp.Header.Set("Cache-Control", "no-cache")
	}
	q.writeHeader(resp)
}

// collectStream reads a whole upstream stream for a client that asked for
// a plain response (an upstream that streams regardless, or a translated
// request's stream), and answers it at once. Nothing reaches the client
// before the stream finished, so a stream that breaks fails over.
func (q *request) collectStream(ctx context.Context, e *endpoint, t *translation, resp *http.Response, firstByte *time.Timer, cancel context.CancelCauseFunc) result {
	cfg := &q.snap.cfg
	idle := time.AfterFunc(cfg.IdleTimeout, func() { cancel(errIdleTimeout) })
	defer idle.Stop()
	sr := newSSEReader(&idleReader{r: resp.Body, t: idle, d: cfg.IdleTimeout})
	dec := t.upstream.StreamDecoder()
	c := conv.NewCollect()
	var size int64
	for {
		raw, err := sr.next()
		if err != nil {
			if errors.Is(err, io.EOF) && dec.End(c.Add) {
				break
			}
			return q.preludeFailure(ctx, err)
		}
		if size += int64(len(raw)); size > cfg.MaxBody {
			return result{verdict: verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrStreamEnd},
				status: resp.StatusCode, msg: fmt.Sprintf("the upstream's stream is larger than max_body (%d bytes)", cfg.MaxBody)}
		}
		firstByte.Stop()
		name, data := sr.event(raw)
		if e.spec.EventKind(name, data, true) == evError {
			data, _ = q.redact(e, data)
			return result{verdict: classifyStreamError(data, time.Now()), status: resp.StatusCode,
				bodyHead: Head(data, bodyHeadCap), msg: "stream carried an error event: " + upstreamErrorText(data)}
		}
		q.noteEvent(e, data)
		if err := dec.Decode(name, data, c.Add); err != nil {
			return result{verdict: verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrStreamEnd},
				status: resp.StatusCode, msg: fmt.Sprintf("the upstream's stream is not %s: %s", e.Protocol, err)}
		}
	}
	out, _ := c.Response()
	if res, bad := q.mismatchFailure(e, resp.StatusCode); bad {
		return res
	}
	return q.answerTranslated(resp, t, out)
}

// streamTx re-encodes an upstream stream for the client, event by event.
type streamTx struct {
	dec   conv.StreamDecoder
	enc   conv.StreamEncoder
	ctype string // the client's stream's Content-Type
	out   []byte
}

func newStreamTx(t *translation) *streamTx {
	return &streamTx{dec: t.upstream.StreamDecoder(), enc: t.streamEncoder(), ctype: t.streamType()}
}

// emit is the decoder's callback: each neutral event becomes the client's bytes.
func (x *streamTx) emit(ev conv.Event) { x.out = x.enc.Encode(x.out, ev) }

// feed translates one upstream event; the bytes stay valid until the next call.
func (x *streamTx) feed(name string, data []byte) ([]byte, error) {
	x.out = x.out[:0]
	err := x.dec.Decode(name, data, x.emit)
	return x.out, err
}

// end flushes what the decoder held to the stream's end.
func (x *streamTx) end() (b []byte, complete bool) {
	x.out = x.out[:0]
	complete = x.dec.End(x.emit)
	return x.out, complete
}

// fail is the client's bytes for a stream broken after content.
func (x *streamTx) fail(msg string) []byte {
	return x.enc.Fail(nil, "ccmesh: "+msg+"; retry the request")
}
