package gemini

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// An Anthropic upstream's signed thinking must come back before the
// tool_use it led to, or the API refuses thinking for that history (the
// Anthropic codec then turns thinking off). Gemini CLI drops thought parts
// from the history it sends back, but keeps a function call's
// thoughtSignature exactly as received
// (proxy/translate/testdata/captured/gemini-cli/README.md). So the
// thinking of an answer, its text and signature (or its redacted data),
// also rides on the first function call after it, in thoughtSignature
// behind thinkingPrefix; the request decoder gives it back as the
// reasoning parts at the start of that turn (where the answer had them),
// unless the client sent them itself.
// Marked values are never sent to Gemini (the request encoder writes
// only Gemini's own signatures).
const thinkingPrefix = "ccmesh.anthropic.thinking."

// carried is one thinking block inside a marked signature.
type carried struct {
	Text      string `json:"t,omitempty"`
	Signature string `json:"s,omitempty"`
	Redacted  string `json:"r,omitempty"`
}

// signedThinking reports whether p is reasoning an Anthropic upstream
// signed (or redacted): what must come back with the call after it.
func signedThinking(p *conv.Part) bool {
	return p.Kind == conv.PartReasoning && p.GeminiSignature == "" && (p.Signature != "" || p.Redacted != "")
}

// carryThinking is the marked signature that carries parts (signed
// thinking), "" when there are none.
func carryThinking(parts []conv.Part) string {
	var c []carried
	for i := range parts {
		if p := &parts[i]; signedThinking(p) {
			c = append(c, carried{Text: p.Text, Signature: p.Signature, Redacted: p.Redacted})
		}
	}
	if len(c) == 0 {
		return ""
	}
	return thinkingPrefix + base64.RawURLEncoding.EncodeToString(conv.Marshal(c))
}

// carriedThinking reads a marked signature back into reasoning parts; ok
// is false when sig is not one.
func carriedThinking(sig string) (parts []conv.Part, ok bool) {
	rest, ok := strings.CutPrefix(sig, thinkingPrefix)
	if !ok {
		return nil, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	var c []carried
	if err != nil || json.Unmarshal(raw, &c) != nil {
		return nil, true // marked but broken: no thinking, and no signature for Gemini either
	}
	for _, b := range c {
		if b.Signature != "" || b.Redacted != "" {
			parts = append(parts, conv.Part{Kind: conv.PartReasoning, Text: b.Text, Signature: b.Signature, Redacted: b.Redacted})
		}
	}
	return parts, true
}

// carryCalls puts the signed thinking of an answer on its first function
// call without a signature of Gemini's own.
func carryCalls(parts []wirePart, src []conv.Part) {
	mark := carryThinking(src)
	if mark == "" {
		return
	}
	for i := range parts {
		if parts[i].FunctionCall != nil {
			if parts[i].ThoughtSignature == "" {
				parts[i].ThoughtSignature = mark
			}
			return
		}
	}
}
