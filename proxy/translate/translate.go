// Package translate joins the protocol codecs (anthropic, chat,
// responses, gemini) over the neutral model in conv: any client protocol to any
// upstream protocol (docs/BEHAVIOUR.md#translation). It holds the table of
// protocols — each codec package's conv.Spec, in the order the UI offers
// them — that the proxy and the app ask about everything protocol-specific,
// and the local token count.
package translate

import (
	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/gemini"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// Specs is the table of protocols, in the order the UI offers them. A new
// protocol is its codec package and one line here.
var Specs = conv.Register(
	anthropic.Spec,
	chat.Spec,
	responses.Spec,
	gemini.Spec,
)

// Codec returns protocol p's codec, or nil for an unknown protocol.
func Codec(p conv.Protocol) conv.Codec {
	if s := p.Spec(); s != nil {
		return s.Codec
	}
	return nil
}
