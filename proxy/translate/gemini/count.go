package gemini

import (
	"encoding/json"
	"fmt"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// DecodeCountTokens reads a countTokens body
// (ai.google.dev/api/tokens#method:-models.counttokens): {"contents": …}
// as Gemini CLI sends it, or a whole generateContentRequest (with its
// system instruction and tools) inside one; either way the request to
// count, for the local estimate.
func DecodeCountTokens(body []byte) (*conv.Request, error) {
	var w struct {
		GenerateContentRequest json.RawMessage `json:"generateContentRequest"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("gemini countTokens: %w", err)
	}
	if !isNull(w.GenerateContentRequest) {
		body = w.GenerateContentRequest
	}
	r, err := Codec.DecodeRequest(body)
	if err != nil {
		return nil, fmt.Errorf("gemini countTokens: %w", err)
	}
	return r, nil
}

// CountTokensBody is a countTokens answer for a Gemini client.
func CountTokensBody(total int64) []byte {
	return conv.Marshal(map[string]int64{"totalTokens": total})
}
