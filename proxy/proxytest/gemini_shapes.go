package proxytest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// GeminiCall is a functionCall the fake Gemini answers with. The Gemini API
// gives no id; ID, when set, is sent as functionCall.id (as Vertex does).
type GeminiCall struct {
	ID   string
	Name string
	Args map[string]any
}

// GeminiPart is one part of a fake Gemini answer; a stream sends one part
// per chunk.
type GeminiPart struct {
	Text    string
	Thought bool // a thought summary ("thought": true)
	Call    *GeminiCall
}

// GeminiUsage is an answer's usageMetadata; a zero Prompt or Candidates is
// estimated from the request and the answer (about four characters a
// token).
type GeminiUsage struct {
	Prompt, Candidates, Thoughts, Cached int
}

// GeminiReply is what the fake Gemini answers one generateContent or
// streamGenerateContent request with.
type GeminiReply struct {
	Parts        []GeminiPart
	FinishReason string // "" is STOP
	Usage        GeminiUsage
	// Fault, when set, is answered instead, as is (an error, a hang).
	Fault *Response
	// CutAfter ≥ 1 aborts a stream after that many chunks.
	CutAfter int
	// Raw, when set, is what a stream request gets: these chunks (each
	// one JSON, as a recording's lines) as they are, in the form the
	// request asked for. generateContent ignores it.
	Raw []string
}

// GeminiText is a reply of text parts, streamed one part a chunk.
func GeminiText(chunks ...string) GeminiReply {
	r := GeminiReply{}
	for _, c := range chunks {
		r.Parts = append(r.Parts, GeminiPart{Text: c})
	}
	return r
}

// GeminiFault is a reply that answers resp instead of generating.
func GeminiFault(resp Response) GeminiReply {
	return GeminiReply{Fault: &resp}
}

// GeminiError is an error answer in Gemini's shape:
// {"error":{"code","message","status","details"}}.
func GeminiError(code int, status, msg string, details ...any) Response {
	if details == nil {
		details = []any{}
	}
	return Response{Status: code, Header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}}, Body: js(map[string]any{
		"error": map[string]any{"code": code, "message": msg, "status": status, "details": details},
	})}
}

// GeminiRateLimited is a 429 RESOURCE_EXHAUSTED that asks to wait
// retryDelay (a google.rpc.RetryInfo, e.g. "7s" or "1.5s"), worded as a
// per-minute limit.
func GeminiRateLimited(retryDelay string) Response {
	return GeminiError(http.StatusTooManyRequests, "RESOURCE_EXHAUSTED",
		"Resource has been exhausted (e.g. check quota).",
		map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{
			"quotaMetric": "generativelanguage.googleapis.com/generate_content_paid_tier_input_token_count",
			"quotaId":     "GenerateContentPaidTierInputTokensPerModelPerMinute",
		}}},
		map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retryDelay})
}

// GeminiQuotaExhausted is the 429 RESOURCE_EXHAUSTED of a spent daily free
// tier, worded as the Gemini API words it ("You exceeded your current
// quota", a per-day QuotaFailure, a RetryInfo).
func GeminiQuotaExhausted(model string) Response {
	return GeminiError(http.StatusTooManyRequests, "RESOURCE_EXHAUSTED",
		"You exceeded your current quota, please check your plan and billing details. For more information on this error, "+
			"head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: "+
			"generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 50, model: "+model+"\nPlease retry in 36.6s.",
		map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{
			"quotaMetric":     "generativelanguage.googleapis.com/generate_content_free_tier_requests",
			"quotaId":         "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
			"quotaDimensions": map[string]any{"location": "global", "model": model},
			"quotaValue":      "50",
		}}},
		map[string]any{"@type": "type.googleapis.com/google.rpc.Help", "links": []any{map[string]any{
			"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
		}}},
		map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "36s"})
}

// GeminiPermissionDenied is the 403 of a request without any credential.
func GeminiPermissionDenied() Response {
	return GeminiError(http.StatusForbidden, "PERMISSION_DENIED",
		"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.")
}

// GeminiKeyInvalid is the 400 of a wrong x-goog-api-key (or ?key=).
func GeminiKeyInvalid() Response {
	return GeminiError(http.StatusBadRequest, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
		map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com",
			"metadata": map[string]any{"service": "generativelanguage.googleapis.com"}},
		map[string]any{"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US", "message": "API key not valid. Please pass a valid API key."})
}

// GeminiUnauthenticated is the 401 of a wrong Authorization: Bearer.
func GeminiUnauthenticated() Response {
	return GeminiError(http.StatusUnauthorized, "UNAUTHENTICATED",
		"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. "+
			"See https://developers.google.com/identity/sign-in/web/devconsole-project.",
		map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "ACCESS_TOKEN_TYPE_UNSUPPORTED", "domain": "googleapis.com",
			"metadata": map[string]any{"service": "generativelanguage.googleapis.com"}})
}

// GeminiModelNotFound is the 404 of a model the API does not know.
func GeminiModelNotFound(model string) Response {
	return GeminiError(http.StatusNotFound, "NOT_FOUND", fmt.Sprintf(
		"models/%s is not found for API version v1beta, or is not supported for generateContent. "+
			"Call ListModels to see the list of available models and their supported methods.", model))
}

// Gemini 3's refusals of a turn whose function call lost its signature, as
// the Gemini API words them (docs/BEHAVIOUR.md#what-clients-send).
func geminiMissingSignature(name string, position int) Response {
	return GeminiError(http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf(
		"Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, "+
			"and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , "+
			"position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", name, position))
}

func geminiCorruptedSignature() Response {
	return GeminiError(http.StatusBadRequest, "INVALID_ARGUMENT", "Corrupted thought signature.")
}

// geminiChunks renders reply as the GenerateContentResponse chunks of a
// stream: one part each, usage on every chunk (as the API sends it), the
// finish reason on the last.
func geminiChunks(reply GeminiReply, model, responseID string, usage GeminiUsage, sign func(int, *GeminiCall) string) []map[string]any {
	parts := reply.Parts
	if len(parts) == 0 {
		parts = []GeminiPart{{Text: ""}}
	}
	finish := reply.FinishReason
	if finish == "" {
		finish = "STOP"
	}
	out := make([]map[string]any, 0, len(parts))
	for i, p := range parts {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": []any{geminiPartJSON(p, sign(i, p.Call))}}, "index": 0}
		if i == len(parts)-1 {
			cand["finishReason"] = finish
		}
		out = append(out, map[string]any{
			"candidates":    []any{cand},
			"usageMetadata": usageJSON(usage),
			"modelVersion":  model,
			"responseId":    responseID,
		})
	}
	return out
}

// geminiMerged is the one answer of generateContent: every part in one
// candidate.
func geminiMerged(chunks []map[string]any) map[string]any {
	var parts []any
	for _, c := range chunks {
		cand := c["candidates"].([]any)[0].(map[string]any)
		parts = append(parts, cand["content"].(map[string]any)["parts"].([]any)...)
	}
	last := chunks[len(chunks)-1]
	cand := last["candidates"].([]any)[0].(map[string]any)
	return map[string]any{
		"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": parts}, "finishReason": cand["finishReason"], "index": 0,
		}},
		"usageMetadata": last["usageMetadata"],
		"modelVersion":  last["modelVersion"],
		"responseId":    last["responseId"],
	}
}

func geminiPartJSON(p GeminiPart, signature string) map[string]any {
	m := map[string]any{}
	if p.Call != nil {
		call := map[string]any{"name": p.Call.Name, "args": p.Call.Args}
		if p.Call.Args == nil {
			call["args"] = map[string]any{}
		}
		if p.Call.ID != "" {
			call["id"] = p.Call.ID
		}
		m["functionCall"] = call
	} else {
		m["text"] = p.Text
		if p.Thought {
			m["thought"] = true
		}
	}
	if signature != "" {
		m["thoughtSignature"] = signature
	}
	return m
}

func usageJSON(u GeminiUsage) map[string]any {
	m := map[string]any{
		"promptTokenCount":     u.Prompt,
		"candidatesTokenCount": u.Candidates,
		"totalTokenCount":      u.Prompt + u.Candidates + u.Thoughts,
		"promptTokensDetails":  []any{map[string]any{"modality": "TEXT", "tokenCount": u.Prompt}},
	}
	if u.Thoughts > 0 {
		m["thoughtsTokenCount"] = u.Thoughts
	}
	if u.Cached > 0 {
		m["cachedContentTokenCount"] = u.Cached
	}
	return m
}

// estimateTokens is the fake's token count: about four bytes a token, 258
// for each inline image (as the API counts a small one).
func estimateTokens(contents []geminiContent) int {
	n := 0
	for _, c := range contents {
		for _, p := range c.Parts {
			switch {
			case p.InlineData != nil:
				n += 258
			case p.Text != nil:
				n += (len(*p.Text) + 3) / 4
			default:
				n += (len(p.FunctionCall) + len(p.FunctionResponse) + 3) / 4
			}
		}
	}
	return n
}

func replyTokens(r GeminiReply) (out, thoughts int) {
	for _, p := range r.Parts {
		n := (len(p.Text) + 3) / 4
		if p.Call != nil {
			b, _ := json.Marshal(p.Call.Args)
			n = (len(p.Call.Name) + len(b) + 3) / 4
		}
		if p.Thought {
			thoughts += n
		} else {
			out += n
		}
	}
	return max(out, 1), thoughts
}

// geminiFrame is chunk i of a stream: an SSE event ended by CRLF CRLF, as
// the API sends them, or an element of the JSON-array form (no alt=sse),
// whose elements arrive as the chunks are made.
func geminiFrame(i int, chunk string, sse bool) string {
	switch {
	case sse:
		return "data: " + chunk + "\r\n\r\n"
	case i == 0:
		return "[" + chunk
	default:
		return "\n,\r\n" + chunk
	}
}

// The dummy signatures a client may send for a call Gemini did not sign,
// which Gemini 3 lets through.
func isDummySignature(s string) bool {
	return s == "skip_thought_signature_validator" || s == "context_engineering_is_the_way_to_go"
}
