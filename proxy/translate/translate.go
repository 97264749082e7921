// Package translate joins the three protocol codecs (anthropic, chat,
// responses) over the neutral model in conv: any client protocol to any
// upstream protocol (docs/BEHAVIOUR.md#translation). The proxy asks it for
// a protocol's codec and for a local token count; the attempt loop does
// the rest.
package translate

import (
	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// Codec returns protocol p's codec, or nil for an unknown protocol.
func Codec(p conv.Protocol) conv.Codec {
	switch p {
	case conv.Anthropic:
		return anthropic.Codec
	case conv.Chat:
		return chat.Codec
	case conv.Responses:
		return responses.Codec
	}
	return nil
}
