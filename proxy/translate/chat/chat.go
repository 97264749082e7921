// Package chat is the OpenAI Chat Completions codec of protocol
// translation (docs/BEHAVIOUR.md#translation): requests, responses and
// streams as OpenAI and the OpenAI-compatible providers (DeepSeek,
// Kimi/Moonshot, GLM, Qwen, OpenRouter, SiliconFlow, …) speak them, to and
// from the neutral model of package conv.
//
// Provider quirks it reads: reasoning text as reasoning_content
// (DeepSeek, Kimi, GLM, Qwen) or reasoning (OpenRouter), reasoning inlined
// in the content between <think> and </think>, DeepSeek's
// prompt_cache_hit_tokens, tool-call fragments that arrive before the
// call's id and name, finish_reason repeated in several chunks, and usage
// in a chunk after the finish.
package chat

import (
	"crypto/rand"
	"time"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Codec is the Chat Completions codec.
var Codec conv.Codec = codec{}

type codec struct{}

func (codec) Protocol() conv.Protocol { return Protocol }

func (codec) StreamDecoder() conv.StreamDecoder { return newStreamDecoder() }

func (codec) StreamEncoder(req *conv.Request) conv.StreamEncoder {
	return conv.ClientStream(req, newStreamEncoder(req))
}

// now and newID are variables so that tests can pin the created time and
// the generated ids.
var (
	now   = time.Now
	newID = func(prefix string) string { return prefix + rand.Text() }
)
