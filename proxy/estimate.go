package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// countTokensPath is the Messages API's token counter; ccmesh answers it
// itself when the upstream cannot (docs/BEHAVIOUR.md#attempt-loop).
const countTokensPath = "/v1/messages/count_tokens"

// estimateTokens approximates the input tokens of a count_tokens body:
// the text of system and messages at about four characters of Latin
// script per token and one token per other character (CJK runs near one
// token per character), and the tool definitions' JSON at four bytes per
// token. It is an estimate, marked as such in the answer's headers.
func estimateTokens(body []byte) int64 {
	var doc struct {
		System   json.RawMessage `json:"system"`
		Messages json.RawMessage `json:"messages"`
		Tools    json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return int64(len(body)+3) / 4
	}
	n := textTokens(doc.System) + textTokens(doc.Messages) + int64(len(doc.Tools)+3)/4
	return max(1, n)
}

// textTokens estimates the strings inside a JSON value.
func textTokens(v json.RawMessage) int64 {
	if len(v) == 0 {
		return 0
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	var latin, other int64
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		s, ok := tok.(string)
		if !ok {
			continue
		}
		for len(s) > 0 {
			r, size := utf8.DecodeRuneInString(s)
			if r < 0x2E80 { // below the CJK blocks
				latin++
			} else {
				other++
			}
			s = s[size:]
		}
	}
	return (latin+3)/4 + other
}

// answerEstimate answers count_tokens with the local estimate after the
// upstream answered status.
func (q *request) answerEstimate(status int) {
	n := estimateTokens(q.body)
	b := fmt.Appendf(nil, `{"input_tokens":%d}`, n)
	h := q.w.Header()
	setCCMeshHeaders(h, q.rec.Endpoint, q.rec.AttemptCount)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("X-Ccmesh-Estimated", "true")
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write(b) // a client that left cannot be told anything
	q.rec.Status, q.rec.TokensIn = http.StatusOK, n
	q.rec.Error = fmt.Sprintf("count_tokens: the upstream answered %d; ccmesh answered with a local estimate", status)
}
