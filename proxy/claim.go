package proxy

import (
	"maps"
	"net/http"
)

// claimWriter is the client's ResponseWriter as one side of a race sees
// it (hedge.go). Its first WriteHeader, Write or Flush claims the race, so
// that no write path can reach the client without claiming it first
// (docs/BEHAVIOUR.md#hedging): the winner's writes pass through, the
// loser's are dropped and fail with errHedgeLost.
//
// Until then the side's headers are its own copy of the client's, so the
// two sides, which run at once, never share a header map; the winner's
// copy becomes the client's headers when it claims.
//
// One side's writer is used by that side's goroutine only.
type claimWriter struct {
	w     http.ResponseWriter // the client's
	q     *request            // the side
	h     http.Header         // the side's headers until it claims
	state claimState
}

type claimState uint8

const (
	claimOpen claimState = iota // no write yet
	claimWon
	claimLost
)

// newClaimWriter wraps w for side q. It must be called before either side
// runs: it copies the client's headers.
func newClaimWriter(w http.ResponseWriter, q *request) *claimWriter {
	return &claimWriter{w: w, q: q, h: w.Header().Clone()}
}

// claim decides the race on the side's first write and reports whether
// the side may write.
func (c *claimWriter) claim() bool {
	if c.state != claimOpen {
		return c.state == claimWon
	}
	c.state = claimLost
	rec := c.q.rec
	provisional := rec.AttemptCount
	if !c.q.claim() {
		return false
	}
	c.state = claimWon
	h := c.w.Header()
	clear(h)
	maps.Copy(h, c.h)
	if rec.AttemptCount != provisional {
		// The headers were set before the race was decided; the count of
		// attempts is the race's now (docs/BEHAVIOUR.md#attempt-loop).
		setCCMeshHeaders(h, rec.Endpoint, rec.AttemptCount)
	}
	return true
}

func (c *claimWriter) Header() http.Header {
	if c.state == claimWon {
		return c.w.Header()
	}
	return c.h
}

func (c *claimWriter) WriteHeader(status int) {
	if c.claim() {
		c.w.WriteHeader(status)
	}
}

func (c *claimWriter) Write(b []byte) (int, error) {
	if !c.claim() {
		return 0, errHedgeLost
	}
	return c.w.Write(b)
}

// FlushError is what http.ResponseController calls; there is no Unwrap,
// so nothing reaches the client's writer around the claim.
func (c *claimWriter) FlushError() error {
	if !c.claim() {
		return errHedgeLost
	}
	return http.NewResponseController(c.w).Flush()
}

func (c *claimWriter) Flush() { _ = c.FlushError() }
