// Package anthropic is the Anthropic Messages API codec of protocol
// translation (docs/BEHAVIOUR.md#translation): it decodes Messages
// requests, responses and stream events into the neutral model of package
// conv and encodes them back out of it.
package anthropic

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Codec is the Anthropic Messages API's half of every translation.
var Codec conv.Codec = codec{}

type codec struct{}

func (codec) Protocol() conv.Protocol { return Protocol }

func (codec) StreamDecoder() conv.StreamDecoder { return &streamDecoder{} }

func (codec) StreamEncoder(req *conv.Request) conv.StreamEncoder {
	e := &streamEncoder{}
	if req != nil {
		e.model = req.Model
	}
	return conv.ClientStream(req, e)
}

// newID returns prefix followed by 24 random hex digits, for a message or
// tool-use id the other side did not give.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// isNull reports whether raw is missing or JSON null.
func isNull(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case 'n':
			return true
		}
		return false
	}
	return true
}

// cacheControl returns raw, or nil when it is missing or null.
func cacheControl(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return nil
	}
	return raw
}
