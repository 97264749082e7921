// Package gemini is the Gemini API codec of protocol translation
// (docs/BEHAVIOUR.md#translation): it decodes generateContent and
// streamGenerateContent requests, responses and stream chunks into the
// neutral model of package conv and encodes them back out of it.
//
// The Gemini API carries the model and the stream flag in the path, not
// the body (ParsePath, Path); its function calls may come without an id
// (the codec makes one up and removes it again towards Gemini); and Gemini
// 3 refuses a history whose function calls lack the thoughtSignature it
// sent, which a client of another protocol cannot keep — the codec of a
// conversation (ForConversation) keeps them in a SignatureStore.
package gemini

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Protocol is the Gemini API (generateContent), as endpoints and the log
// name it.
const Protocol conv.Protocol = "gemini"

// Codec is the Gemini API's half of every translation, without a
// signature store: signatures travel only inside Gemini bodies, and a
// function call of another protocol's history gets the documented
// fallback signature (see fallbackSignature).
var Codec conv.Codec = codec{}

// ForConversation is the codec of one conversation: its decoders record
// the signatures of the function calls Gemini makes in s under key, and
// its request encoder puts them back on those calls when a client of any
// protocol returns them. A nil s is Codec.
func ForConversation(s *SignatureStore, key string) conv.Codec {
	return codec{store: s, key: key}
}

type codec struct {
	store *SignatureStore
	key   string
}

func (codec) Protocol() conv.Protocol { return Protocol }

func (c codec) StreamDecoder() conv.StreamDecoder { return &streamDecoder{c: c} }

// StreamEncoder writes streamGenerateContent?alt=sse: one SSE event per
// GenerateContentResponse chunk.
func (codec) StreamEncoder(req *conv.Request) conv.StreamEncoder {
	return conv.ClientStream(req, newStreamEncoder(req, false))
}

// ArrayStreamEncoder writes streamGenerateContent without alt=sse: one
// JSON array of GenerateContentResponse chunks, streamed element by
// element ("[", chunks separated by ",", "]").
func ArrayStreamEncoder(req *conv.Request) conv.StreamEncoder {
	return conv.ClientStream(req, newStreamEncoder(req, true))
}

// madePrefix starts every call id the codec makes up for a Gemini
// function call that came without one; ids with it are never sent to
// Gemini (docs/BEHAVIOUR.md#translation).
const madePrefix = "gmcall_"

// newCallID makes up a unique call id.
func newCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return madePrefix + hex.EncodeToString(b[:])
}

// historyCallID makes up the id of the n-th call of contents[i] of a
// request: stable from one turn to the next (a history only grows), so
// that an upstream's prompt cache still matches the translated history.
func historyCallID(i, n int) string { return fmt.Sprintf("%sh%d_%d", madePrefix, i, n) }

// wireID is the id a call has towards Gemini: "" for one the codec made up.
func wireID(id string) string {
	if strings.HasPrefix(id, madePrefix) {
		return ""
	}
	return id
}

// ParsePath reads a Gemini API method path, /v1beta/models/{model}:generateContent
// or :streamGenerateContent (any version, "models/" optional, a tuned
// model's "tunedModels/" too), for the model and the stream flag, which a
// Gemini client gives there and not in the body. sse reports alt=sse in
// query, the SSE stream form; without it a stream is one JSON array.
func ParsePath(path, query string) (model string, stream, sse, ok bool) {
	i := strings.LastIndexByte(path, ':')
	if i < 0 {
		return "", false, false, false
	}
	switch path[i+1:] {
	case "generateContent":
	case "streamGenerateContent":
		stream = true
	default:
		return "", false, false, false
	}
	rest := path[:i]
	for _, prefix := range []string{"/models/", "/tunedModels/"} {
		if j := strings.LastIndex(rest, prefix); j >= 0 {
			model = rest[j+len(prefix):]
			break
		}
	}
	// A model segment may pin an endpoint as @name/model, as a body's
	// model may (docs/BEHAVIOUR.md#explicit-endpoint); the proxy takes the
	// prefix off. Any other slash is not a model name.
	bare := model
	if strings.HasPrefix(model, "@") {
		if k := strings.IndexByte(model, '/'); k > 1 {
			bare = model[k+1:]
		}
	}
	if bare == "" || strings.Contains(bare, "/") {
		return "", false, false, false
	}
	for _, kv := range strings.Split(query, "&") {
		if kv == "alt=sse" {
			sse = true
		}
	}
	return model, stream, sse && stream, true
}

// Path is the upstream path of a request for model: generateContent, or
// streamGenerateContent?alt=sse (the codec's stream decoder reads SSE).
func Path(model string, stream bool) string {
	if stream {
		return "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
	}
	return "/v1beta/models/" + model + ":generateContent"
}

// isNull reports whether raw is missing or JSON null.
func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// ConversationKey is the store key of the conversation r belongs to, for
// a client the proxy knows as client (its ccmesh key or its address): the
// client, and what the request says of its conversation, when anything —
// Codex's prompt_cache_key, else the user id (Claude Code's carries its
// session). The call ids inside it are unique already; the key keeps one
// client from reading another's signatures.
func ConversationKey(client string, r *conv.Request) string {
	if s := cmp.Or(r.PromptCacheKey, r.User); s != "" {
		return client + "\x00" + s
	}
	return client
}
