package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/ccmesh/ccmesh/breaker"

	"github.com/ccmesh/ccmesh/proxy/translate"
)

// countTokensPath is the Messages API's token counter. Every protocol's
// counter (conv.Inbound.Count) ccmesh answers itself when the upstream
// cannot (docs/BEHAVIOUR.md#attempt-loop, docs/BEHAVIOUR.md#translation).
const countTokensPath = "/v1/messages/count_tokens"

// estimateTokens counts the input tokens of the count_tokens body with the
// BPE tokenizer: system, messages and tool schemas. A body the Messages
// codec cannot read is estimated at four bytes per token.
func (q *request) estimateTokens() int64 {
	r, err := q.clientRequest()
	if err != nil {
		return max(1, int64(len(q.body)+3)/4)
	}
	return translate.CountTokens(r)
}

// answerEstimate answers count_tokens with the local estimate; why says
// why no upstream answered, for the log.
func (q *request) answerEstimate(why string) {
	q.answerCount(q.estimateTokens(), true)
	q.rec.Error = "count_tokens: " + why + "; ccmesh answered with a local estimate"
}

// answerCount answers a token count of n in the client's protocol
// (conv.Spec.CountAnswer); estimated marks ccmesh's own count.
func (q *request) answerCount(n int64, estimated bool) {
	b := q.shape.CountAnswer(n)
	h := q.w.Header()
	setCCMeshHeaders(h, q.rec.Endpoint, q.rec.AttemptCount)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if estimated {
		h.Set("X-Ccmesh-Estimated", "true")
	}
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write(b) // a client that left cannot be told anything
	q.rec.Status, q.rec.TokensIn = http.StatusOK, n
}

// countOn asks e, an endpoint of another protocol than the client's, for
// a token count in its own protocol (conv.Spec.CountUpstream,
// EncodeCount) and answers the client in its protocol; an answer that is
// not a count is answered with the local estimate, as any failed count is.
func (q *request) countOn(e *endpoint, ttfb *time.Duration) result {
	req, err := q.clientRequest()
	if err != nil {
		return q.clientBadBody(err)
	}
	r := *req
	r.Model = q.modelFor(e)
	q.rec.ModelForwarded = r.Model
	body, err := e.spec.EncodeCount(&r)
	if err != nil {
		q.answerEstimate(fmt.Sprintf("endpoint %s (%s) cannot count this request: %s", e.Name, e.Protocol, err))
		return result{verdict: verdict{act: actDone, outcome: neutral}, status: http.StatusOK}
	}
	ctx, cancel := context.WithCancelCause(q.ctx())
	defer cancel(nil)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, e.upstreamURL(e.spec.CountUpstream(r.Model)), bytes.NewReader(body))
	if err != nil {
		return result{verdict: verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrTransport},
			msg: "build upstream request: " + err.Error()}
	}
	h := q.upstreamHeader(e)
	q.dropBetas(h)
	protocolHeaders(h, e.spec)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	h.Set("Accept-Encoding", "identity")
	hr.Header = h
	firstByte := time.AfterFunc(q.snap.cfg.FirstByteTimeout, func() { cancel(errFirstByteTimeout) })
	defer firstByte.Stop()
	q.rec.SentUpstream = true
	sent := time.Now()
	resp, err := q.transportTo(e).RoundTrip(hr)
	*ttfb = time.Since(sent)
	if err != nil {
		return q.transportFailure(ctx, err)
	}
	defer resp.Body.Close()
	firstByte.Stop()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return q.upstreamError(e, resp, nil)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, errBodyCap))
	n := e.spec.ReadCount(decodeBody(resp.Header.Get("Content-Encoding"), raw, errBodyCap))
	if err != nil || n <= 0 {
		q.answerEstimate(fmt.Sprintf("endpoint %s answered no count", e.Name))
		return result{verdict: verdict{act: actDone, outcome: neutral}, status: http.StatusOK}
	}
	q.answerCount(n, false)
	return result{verdict: delivered, status: resp.StatusCode}
}
