package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// responseController flushes without requiring http.Flusher on the writer
// itself (middleware wrappers often hide it but implement Unwrap).
type responseController struct{ rc *http.ResponseController }

func newResponseController(w http.ResponseWriter) responseController {
	return responseController{http.NewResponseController(w)}
}

func (c responseController) flush() {
	// ErrNotSupported only means the writer buffers; nothing to do about it.
	_ = c.rc.Flush()
}

// evKind is what an SSE event means for the prelude hold (docs/BEHAVIOUR.md#streaming).
type evKind = conv.EventKind

const (
	evPrelude  = conv.EventPrelude  // opening metadata: held back
	evContent  = conv.EventContent  // content or a tool call: releases the hold
	evTerminal = conv.EventTerminal // the stream's proper end
	evError    = conv.EventError    // the upstream reports an error in the stream
)

// Memory one stream may hold: an event being read (an upstream that never
// ends a line must not grow ccmesh without limit), and the opening events
// held back before any content (docs/BEHAVIOUR.md#streaming).
const (
	maxEventSize   = 16 << 20
	maxPreludeSize = 1 << 20
)

var errEventTooLarge = errors.New("SSE event too large")

// sseReader splits a byte stream into SSE events, each returned as its raw
// bytes through the blank line that ends it, so events pass byte-for-byte.
type sseReader struct {
	br  *bufio.Reader
	buf []byte
	// max bounds the next event's size; 0 means maxEventSize.
	max int
	// names are the event names this stream used (event).
	names []string
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{br: bufio.NewReaderSize(r, 16<<10)}
}

// next returns the next event. Blank lines before an event are kept with
// it. At EOF a partial event is returned with the error.
func (s *sseReader) next() ([]byte, error) {
	s.buf = s.buf[:0]
	limit := s.max
	if limit <= 0 {
		limit = maxEventSize
	}
	content, partial := false, false
	for {
		line, err := s.br.ReadSlice('\n')
		s.buf = append(s.buf, line...)
		if len(s.buf) > limit {
			return s.buf, errEventTooLarge
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			partial, content = true, true
			continue
		}
		if err != nil {
			return s.buf, err
		}
		blank := !partial && len(bytes.TrimRight(line, "\r\n")) == 0
		partial = false
		if blank && content {
			return s.buf, nil
		}
		content = content || !blank
	}
}

// event returns the event's name and data (data lines joined by \n), the
// name taken from the names this stream used before: a stream repeats a
// few names, and a new string for each event was most of a
// passed-through event's allocations.
func (s *sseReader) event(raw []byte) (name string, data []byte) {
	n, data := eventFields(raw)
	for _, known := range s.names {
		if known == string(n) {
			return known, data
		}
	}
	name = string(n)
	if len(s.names) < maxEventNames {
		s.names = append(s.names, name)
	}
	return name, data
}

// maxEventNames bounds the names an sseReader keeps (an upstream that
// names every event differently gets a new string for each).
const maxEventNames = 8

// eventFields returns the event's name and data (data lines joined by
// \n); the name aliases raw.
func eventFields(raw []byte) (name, data []byte) {
	multi := false
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		line = bytes.TrimRight(line, "\r")
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			name = value
		case "data":
			if data == nil {
				data = value
			} else {
				if !multi {
					data = append([]byte(nil), data...)
					multi = true
				}
				data = append(append(data, '\n'), value...)
			}
		}
	}
	return name, data
}

// classifyEvent decides an event's kind for the request's protocol
// (conv.Spec.EventKind); holding is true during the prelude.
func classifyEvent(proto Protocol, name string, data []byte, holding bool) evKind {
	return proto.Spec().EventKind(name, data, holding)
}

// stream passes an SSE response through event by event (docs/BEHAVIOUR.md#streaming). The
// opening metadata is held until the first content event so that an
// upstream dying before it fails over invisibly; firstByte, still
// running, bounds that hold.
//
// tx, when not nil, re-encodes each event for a client of another
// protocol; the hold, classification and usage read the upstream's own
// events.
func (q *request) stream(ctx context.Context, e *endpoint, resp *http.Response, firstByte *time.Timer, cancel context.CancelCauseFunc, tx *streamTx) result {
	cfg := &q.snap.cfg
	q.rec.Stream = true
	idle := time.AfterFunc(cfg.IdleTimeout, func() { cancel(errIdleTimeout) })
	defer idle.Stop()
	sr := newSSEReader(&idleReader{r: resp.Body, t: idle, d: cfg.IdleTimeout})
	sr.max = maxPreludeSize
	rc := newResponseController(q.w)
	var held []byte
	// seen counts the upstream's bytes before content: the prelude budget
	// is theirs, not the client's (a translated ping is no bytes at all, and
	// a flood of them would run until the first-byte timeout).
	var seen int
	released, complete := false, false
	for {
		raw, err := sr.next()
		if err != nil {
			if !released {
				return q.preludeFailure(ctx, err)
			}
			if tx != nil && errors.Is(err, io.EOF) {
				if complete = q.endTranslated(tx) || complete; q.rec.ClientGone {
					return q.streamClientGone()
				}
			}
			return q.streamBroken(ctx, err, complete, tx)
		}
		name, data := sr.event(raw)
		kind := e.spec.EventKind(name, data, !released)
		if kind == evError {
			// An upstream's error may echo the key: none of it leaves,
			// nor is logged, unmasked.
			raw, _ = q.redact(e, raw)
			data, _ = q.redact(e, data)
		}
		q.noteEvent(e, data)
		if q.meter.text != nil && kind == evContent {
			q.meter.noteText(e.spec.StreamText(data))
		}
		out := raw
		if tx != nil && (released || kind != evError) {
			if out, err = tx.feed(name, data); err != nil {
				return q.translatedStreamBroken(tx, released, resp.StatusCode, e, err)
			}
		}
		if !released {
			switch kind {
			case evPrelude:
				held = append(held, out...)
				seen += len(raw)
				// What was read or is held and the next event share one budget.
				sr.max = max(1, maxPreludeSize-max(seen, len(held)))
				continue
			case evError:
				return result{
					verdict:  classifyStreamError(data, time.Now()),
					status:   http.StatusOK,
					bodyHead: Head(data, bodyHeadCap),
					msg:      "stream began with an error event: " + upstreamErrorText(data),
				}
			}
			if res, bad := q.mismatchFailure(e, resp.StatusCode); bad {
				return res
			}
			firstByte.Stop()
			released = true
			sr.max = maxEventSize
			q.writeStreamHeader(resp, tx)
			if len(held) > 0 {
				if _, err := q.w.Write(held); err != nil {
					return q.streamClientGone()
				}
			}
		}
		if len(out) > 0 {
			if _, err := q.w.Write(out); err != nil {
				return q.streamClientGone()
			}
			rc.flush()
		}
		switch kind {
		case evTerminal:
			complete = true
		case evError:
			// The upstream told the client itself; the stream is broken.
			q.rec.StreamEnd = StreamUpstreamError
			q.rec.Error = "upstream sent an error event mid-stream: " + Head(data, 200)
			res := result{verdict: brokenAfterContent, status: resp.StatusCode, msg: q.rec.Error}
			res.errType = ErrStreamErr
			return res
		}
	}
}

// writeStreamHeader sends a stream's status and headers. The upstream's
// Content-Length never goes along: a translated stream's events are not
// its bytes, and even one passed through may get an event masked or
// ccmesh's own ending, so the client's stream is framed by ccmesh's
// server. A length left over would cut the client's stream at the
// upstream's byte count, which looks like a client that left.
func (q *request) writeStreamHeader(resp *http.Response, tx *streamTx) {
	if tx != nil {
		q.writeTranslatedHeader(resp, tx.ctype)
		return
	}
	resp.Header.Del("Content-Length")
	q.writeHeader(resp)
}

// preludeFailure classifies a stream that ended, broke or stalled before
// any content: a failed attempt the client never sees.
func (q *request) preludeFailure(ctx context.Context, err error) result {
	if q.r.Context().Err() != nil {
		return q.clientLeft()
	}
	res := result{verdict: brokenRetry, status: http.StatusOK}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errFirstByteTimeout):
		res.errType = ErrFirstByte
		res.msg = fmt.Sprintf("stream sent no content within %s (first-byte timeout)", q.snap.cfg.FirstByteTimeout)
	case errors.Is(cause, errIdleTimeout):
		res.errType = ErrIdle
		res.msg = fmt.Sprintf("stream stalled for %s before any content (idle timeout)", q.snap.cfg.IdleTimeout)
	case errors.Is(err, io.EOF):
		res.errType = ErrStreamEnd
		res.msg = "stream ended before any content"
	case errors.Is(err, errEventTooLarge):
		// Holding more would let one upstream take ccmesh's memory; trying
		// it again would only do that twice.
		res.verdict = verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrPreludeTooLarge}
		res.msg = fmt.Sprintf("stream sent more than %d KiB before any content", maxPreludeSize>>10)
	default:
		res.errType = ErrStreamEnd
		res.msg = "stream broke before any content: " + err.Error()
	}
	return res
}

// streamBroken ends a stream that already reached the client.
func (q *request) streamBroken(ctx context.Context, err error, complete bool, tx *streamTx) result {
	ok := result{verdict: delivered, status: q.rec.Status}
	switch {
	case complete && errors.Is(err, io.EOF):
		q.rec.StreamEnd = StreamComplete
		return ok
	case q.r.Context().Err() != nil:
		return q.streamClientGone()
	case complete:
		// Anything after the terminal event is not worth a failure.
		q.rec.StreamEnd = StreamComplete
		return ok
	}
	end, msg := StreamUpstreamError, "the upstream stream ended before it was complete"
	if errors.Is(context.Cause(ctx), errIdleTimeout) {
		end = StreamIdleTimeout
		msg = fmt.Sprintf("the upstream stream stalled for %s (idle timeout)", q.snap.cfg.IdleTimeout)
	} else if !errors.Is(err, io.EOF) {
		msg = "the upstream stream broke: " + err.Error()
	}
	q.rec.StreamEnd, q.rec.Error = end, msg
	b := q.streamErrorEvent(msg)
	if tx != nil {
		b = tx.fail(msg)
	}
	if _, werr := q.w.Write(b); werr == nil {
		newResponseController(q.w).flush()
	}
	return result{verdict: brokenAfterContent, status: q.rec.Status, msg: msg}
}

func (q *request) streamClientGone() result {
	q.rec.StreamEnd = StreamClientGone
	return q.clientWriteFailed(result{verdict: verdict{act: actDone, errType: ErrClientGone}, msg: "client went away mid-stream"})
}

// streamErrorEvent is the protocol-correct way to end a started stream.
func (q *request) streamErrorEvent(msg string) []byte {
	return q.shape.StreamError("ccmesh: " + msg + "; retry the request")
}

// endTranslated writes what a translated stream's decoder held to the end
// (tool calls, the finish with its usage) and reports whether the
// upstream's stream was complete.
func (q *request) endTranslated(tx *streamTx) bool {
	out, complete := tx.end()
	if len(out) > 0 {
		if _, err := q.w.Write(out); err != nil {
			q.rec.ClientGone = true
			return complete
		}
		newResponseController(q.w).flush()
	}
	return complete
}

// translatedStreamBroken handles an upstream event the decoder could not
// read: before any content a failed attempt, after it a broken stream.
func (q *request) translatedStreamBroken(tx *streamTx, released bool, status int, e *endpoint, err error) result {
	msg := fmt.Sprintf("the upstream's stream is not %s: %s", e.Protocol, err)
	if !released {
		return result{verdict: verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrStreamEnd}, status: status, msg: msg}
	}
	q.rec.StreamEnd, q.rec.Error = StreamUpstreamError, msg
	if _, werr := q.w.Write(tx.fail(msg)); werr == nil {
		newResponseController(q.w).flush()
	}
	return result{verdict: brokenAfterContent, status: status, msg: msg}
}
