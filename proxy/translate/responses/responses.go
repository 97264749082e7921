// Package responses is the OpenAI Responses API codec of protocol
// translation (docs/BEHAVIOUR.md#translation): requests from Codex CLI and
// OpenAI SDK clients on /v1/responses, and upstreams that speak it.
//
// What the Responses API has and the neutral model does not:
//   - hosted tools (web_search, tool_search, file_search, …) and items that
//     only the server understands (item_reference, web_search_call, …) are
//     dropped on decode and named in Request.Dropped;
//   - stop sequences have no Responses equivalent: EncodeRequest leaves
//     Request.Stop out;
//   - a tool result has no error flag: IsError is not carried.
//
// Anthropic thinking signatures reach a Responses client inside a reasoning
// item's encrypted_content, marked with conv.SignaturePrefix or
// conv.RedactedPrefix; the request decoder turns them back into
// Part.Signature / Part.Redacted and the request encoder never sends them
// upstream.
package responses

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Codec is the Responses API codec.
var Codec conv.Codec = codec{}

type codec struct{}

func (codec) Protocol() conv.Protocol { return Protocol }

// nsDescKey is the Request.Extra entry in which DecodeRequest keeps the
// descriptions of the client's namespace tools (a JSON object, namespace
// name → description): conv.Tool has no place for them, and EncodeRequest
// needs them to give a Responses upstream the namespaces back. It is never
// written to a body: EncodeRequest skips every Extra key with this prefix.
const nsDescKey = "ccmesh.namespaces"

// privateExtraPrefix marks Extra entries that are the codec's own notes.
const privateExtraPrefix = "ccmesh."

// Seams for tests: ids and timestamps.
var (
	newToken = func() string {
		var b [12]byte
		_, _ = rand.Read(b[:])
		return hex.EncodeToString(b[:])
	}
	now = time.Now
)

// itemID is the id of the i-th output item of a response whose token is tok.
func itemID(prefix, tok string, i int) string {
	return prefix + "_" + tok + "_" + strconv.Itoa(i)
}

// parseDataURI splits a base64 data URI ("data:image/png;base64,AAAA").
// ok is false for anything else (a URL, or a data URI that is not base64).
func parseDataURI(s string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(s, "data:")
	if !found {
		return "", "", false
	}
	meta, payload, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	mt, b64 := strings.CutSuffix(meta, ";base64")
	if !b64 {
		return "", "", false
	}
	return mt, payload, true
}

// dataURI is the base64 data URI of data.
func dataURI(mediaType, data string) string {
	return "data:" + mediaType + ";base64," + data
}

// isPlainText reports whether a media type is text/plain (parameters aside).
func isPlainText(mediaType string) bool {
	mt, _, _ := strings.Cut(mediaType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/plain")
}

// isNull reports whether a raw member is missing or JSON null.
func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// toolInfo is what a client declared about a tool, by its flat name.
type toolInfo struct {
	custom    bool
	namespace string // "" unless the function came from a namespace tool
	fn        string // its own name inside the namespace
}

// toolIndex maps the flat names of tools to their declarations; nil when
// no tool is custom or namespaced (every call is then a plain function).
func toolIndex(tools []conv.Tool) map[string]toolInfo {
	var m map[string]toolInfo
	for _, t := range tools {
		if t.Kind != conv.ToolCustom && t.Namespace == "" {
			continue
		}
		if m == nil {
			m = make(map[string]toolInfo)
		}
		info := toolInfo{custom: t.Kind == conv.ToolCustom}
		if t.Namespace != "" {
			info.namespace = t.Namespace
			info.fn = strings.TrimPrefix(t.Name, conv.NamespacedName(t.Namespace, ""))
		}
		m[t.Name] = info
	}
	return m
}

// callName splits a flat tool name into the namespace and name a
// Responses call carries.
func (info toolInfo) callName(flat string) (namespace, name string) {
	if info.namespace != "" {
		return info.namespace, info.fn
	}
	return "", flat
}

// flatName is the neutral name of a call to name in namespace ns.
func flatName(ns, name string) string {
	if ns == "" {
		return name
	}
	return conv.NamespacedName(ns, name)
}

// wireText is a {type, text} element: summary_text, reasoning_text,
// input_text, output_text.
type wireText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// summaryText is a reasoning item's summary element as written.
type summaryText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// summaryOf is the summary array of a reasoning item whose text is text
// (empty, not null, when there is none).
func summaryOf(text string) []summaryText {
	if text == "" {
		return []summaryText{}
	}
	return []summaryText{{Type: "summary_text", Text: text}}
}
