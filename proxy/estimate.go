package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/ccmesh/ccmesh/proxy/translate"
)

// countTokensPath is the Messages API's token counter; ccmesh answers it
// itself when the upstream cannot (docs/BEHAVIOUR.md#attempt-loop,
// docs/BEHAVIOUR.md#translation).
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
	n := q.estimateTokens()
	b := fmt.Appendf(nil, `{"input_tokens":%d}`, n)
	h := q.w.Header()
	setCCMeshHeaders(h, q.rec.Endpoint, q.rec.AttemptCount)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("X-Ccmesh-Estimated", "true")
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write(b) // a client that left cannot be told anything
	q.rec.Status, q.rec.TokensIn = http.StatusOK, n
	q.rec.Error = "count_tokens: " + why + "; ccmesh answered with a local estimate"
}

// countedTokens is the input_tokens of a count_tokens answer.
func countedTokens(body []byte) int64 {
	var doc struct {
		InputTokens int64 `json:"input_tokens"`
	}
	_ = json.Unmarshal(body, &doc) // an unreadable answer counted nothing
	return doc.InputTokens
}
