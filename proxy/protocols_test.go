package proxy

import (
	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/gemini"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// The tests name the protocols as the proxy once did; the proxy itself
// names none (each is its codec package's conv.Spec).
const (
	ProtocolAnthropic       = anthropic.Protocol
	ProtocolOpenAIChat      = chat.Protocol
	ProtocolOpenAIResponses = responses.Protocol
	ProtocolGemini          = gemini.Protocol
)

// claudeError is an Anthropic error body, as tests read one.
type claudeError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// upstreamPath is the path a request of protocol p is sent to upstream.
func upstreamPath(p Protocol) string {
	path, _ := p.Spec().Upstream("", false)
	return path
}
