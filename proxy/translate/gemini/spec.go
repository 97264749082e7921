package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

func init() { conv.Declare(Spec) }

// Spec is the Gemini API in the protocol table (package translate). Its
// clients name the model and the stream in the path (Route), send their
// key as x-goog-api-key or ?key= (KeyHeader, KeyQuery), and stream either
// as SSE (alt=sse) or as one JSON array (Inbound.Form).
var Spec = &conv.Spec{
	Protocol:  Protocol,
	Codec:     Codec,
	Family:    "gemini",
	Profile:   "openai", // per-minute limits and 5xx bursts, as OpenAI's
	Route:     route,
	RouteDoc:  "/v1beta/models/{model}:generateContent, :streamGenerateContent, :countTokens",
	Version:   "/v1beta",
	KeyHeader: "X-Goog-Api-Key",
	KeyQuery:  "key",
	UpstreamPath: func(model string, stream bool) (string, string) {
		p, q, _ := strings.Cut(Path(model, stream), "?")
		return p, q
	},
	EventKind:  eventKind,
	BodyUsage:  usageOf,
	EventUsage: usageOf,
	StreamText: chunkText,
	ErrorBody:  func(status int, msg string) []byte { return ErrorBody(status, msg, 0) },
	StreamError: func(msg string) []byte {
		return fmt.Appendf(nil, "data: %s\n\n", ErrorBody(http.StatusServiceUnavailable, msg, 0))
	},
	ErrorStatuses: map[string]int{
		"RESOURCE_EXHAUSTED": http.StatusTooManyRequests,
		"UNAVAILABLE":        http.StatusServiceUnavailable,
	},
	ReadError:    readError,
	NewState:     func() any { return NewSignatureStore(DefaultStoreBytes, DefaultStoreTTL) },
	CodecFor:     codecFor,
	ProbeModel:   "gemini-2.5-flash",
	Probe:        probe,
	ModelsPath:   "/v1beta/models",
	ModelsPage:   modelsPage,
	ModelsLimit:  [2]string{"pageSize", "1000"}, // the largest page the list serves
	ModelsAfter:  "pageToken",
	ModelsAnswer: modelsAnswer,
	CountUpstream: func(model string) (string, string) {
		return "/v1beta/models/" + model + ":countTokens", ""
	},
	DecodeCount: DecodeCountTokens,
	EncodeCount: encodeCount,
	CountAnswer: CountTokensBody,
	ReadCount:   readCount,
}

// route claims a Gemini method path: generate, stream (alt=sse or the
// array form) or countTokens.
func route(path, rawQuery string) (conv.Inbound, bool) {
	if m, ok := countPath(path); ok {
		return conv.Inbound{Model: m, StreamSaid: true, Count: true}, true
	}
	model, stream, sse, ok := ParsePath(path, rawQuery)
	if !ok {
		return conv.Inbound{}, false
	}
	in := conv.Inbound{Model: model, Stream: stream, StreamSaid: true}
	if stream && !sse {
		in.Form = arrayForm
	}
	return in, true
}

// arrayForm is streamGenerateContent without alt=sse: one JSON array.
var arrayForm = &conv.StreamForm{Encoder: ArrayStreamEncoder, Type: "application/json"}

// countPath reads /v1beta/models/{model}:countTokens for its model.
func countPath(path string) (string, bool) {
	rest, ok := strings.CutSuffix(path, ":countTokens")
	if !ok {
		return "", false
	}
	i := strings.LastIndex(rest, "/models/")
	if i < 0 {
		return "", false
	}
	m := rest[i+len("/models/"):]
	if m == "" || strings.Contains(m, "/") {
		return "", false
	}
	return m, true
}

// codecFor is the codec of r's conversation over the proxy's store; any
// other state (none) is the plain codec.
func codecFor(state any, client string, r *conv.Request) conv.Codec {
	if s, ok := state.(*SignatureStore); ok && s != nil && r != nil {
		return ForConversation(s, ConversationKey(client, r))
	}
	return Codec
}

var finishKey, blockKey = []byte(`"finishReason"`), []byte(`"blockReason"`)

// eventKind: every chunk is a whole GenerateContentResponse; one without
// parts (only usage) opens a stream, one with an error fails it, and the
// chunk with the finishReason is the last (Gemini sends no end event), as
// is one whose promptFeedback blocks the prompt: a refusal without content
// (docs/BEHAVIOUR.md#translation), not a stream that broke before any.
func eventKind(_ string, data []byte, holding bool) conv.EventKind {
	if len(bytes.TrimSpace(data)) == 0 {
		return conv.EventPrelude
	}
	if bytes.Contains(data, []byte(`"error"`)) {
		var w struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(data, &w) == nil && !isNull(w.Error) {
			return conv.EventError
		}
	}
	if bytes.Contains(data, finishKey) || bytes.Contains(data, blockKey) {
		return conv.EventTerminal
	}
	if !holding {
		return conv.EventContent
	}
	var w wireResponse
	if json.Unmarshal(data, &w) != nil {
		return conv.EventContent
	}
	if c := first(w.Candidates); c != nil && c.Content != nil && len(c.Content.Parts) > 0 {
		return conv.EventContent
	}
	return conv.EventPrelude
}

// usageOf reads a response's (or a chunk's) usageMetadata.
func usageOf(b []byte) (conv.Usage, bool) {
	var w struct {
		UsageMetadata *wireUsage `json:"usageMetadata"`
	}
	if json.Unmarshal(b, &w) != nil || w.UsageMetadata == nil {
		return conv.Usage{}, false
	}
	return usageIn(w.UsageMetadata), true
}

// chunkText is the text and thoughts a chunk adds, for the estimate.
func chunkText(data []byte) string {
	var w wireResponse
	if json.Unmarshal(data, &w) != nil {
		return ""
	}
	c := first(w.Candidates)
	if c == nil || c.Content == nil {
		return ""
	}
	var sb strings.Builder
	for _, p := range c.Content.Parts {
		if p.Text != nil {
			sb.WriteString(*p.Text)
		}
	}
	return sb.String()
}

// readError classifies a Gemini error body for the attempt loop.
func readError(_ int, body []byte) (conv.UpstreamError, bool) {
	e, ok := ParseError(body)
	if !ok {
		return conv.UpstreamError{}, false
	}
	return conv.UpstreamError{RateLimited: e.RateLimited, RetryAfter: e.RetryDelay, Quota: e.Quota, KeyRefused: e.Auth}, true
}

func probe(model string) (string, []byte) {
	return "/v1beta/models/" + model + ":generateContent",
		[]byte(`{"contents":[{"role":"user","parts":[{"text":"ping"}]}],"generationConfig":{"maxOutputTokens":1}}`)
}

// modelsPage reads one page of models.list: names are "models/x".
func modelsPage(body []byte) (conv.ModelPage, error) {
	var w struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
		NextPageToken string `json:"nextPageToken"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return conv.ModelPage{}, fmt.Errorf("gemini model list: %w", err)
	}
	page := conv.ModelPage{More: w.NextPageToken != "", Cursor: w.NextPageToken}
	for _, m := range w.Models {
		if id := strings.TrimPrefix(m.Name, "models/"); id != "" {
			page.IDs = append(page.IDs, id)
		}
	}
	return page, nil
}

type listedModel struct {
	Name                       string   `json:"name"`
	BaseModelID                string   `json:"baseModelId"`
	DisplayName                string   `json:"displayName"`
	SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
}

// modelsAnswer is ccmesh's own model list for a Gemini client.
func modelsAnswer(ids []string) any {
	list := struct {
		Models []listedModel `json:"models"`
	}{Models: make([]listedModel, 0, len(ids))}
	for _, id := range ids {
		list.Models = append(list.Models, listedModel{Name: "models/" + id, BaseModelID: id, DisplayName: id,
			SupportedGenerationMethods: []string{"generateContent", "streamGenerateContent", "countTokens"}})
	}
	return list
}

// encodeCount is a countTokens body for r: the whole request inside
// generateContentRequest, so its system instruction and tools count too.
func encodeCount(r *conv.Request) ([]byte, error) {
	b, err := Codec.EncodeRequest(r)
	if err != nil {
		return nil, fmt.Errorf("gemini countTokens: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("gemini countTokens: %w", err)
	}
	delete(m, "generationConfig") // countTokens refuses an output limit it does not need
	m["model"] = conv.Marshal("models/" + r.Model)
	return conv.Marshal(map[string]any{"generateContentRequest": m}), nil
}

// readCount is the totalTokens of a countTokens answer.
func readCount(body []byte) int64 {
	var w struct {
		TotalTokens int64 `json:"totalTokens"`
	}
	_ = json.Unmarshal(body, &w) // an unreadable answer counted nothing
	return w.TotalTokens
}
