package gemini

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// TestEventKindBlockedPrompt: a chunk whose promptFeedback blocks the
// prompt is a whole answer, a refusal without content
// (docs/BEHAVIOUR.md#translation): the last event of its stream, not a
// prelude after which the stream seems to end before any content.
func TestEventKindBlockedPrompt(t *testing.T) {
	for _, c := range []struct {
		name string
		data string
		want conv.EventKind
	}{
		{"blocked prompt", `{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":9,"totalTokenCount":9}}`, conv.EventTerminal},
		{"finish", `{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP"}]}`, conv.EventTerminal},
		{"usage only", `{"usageMetadata":{"promptTokenCount":9}}`, conv.EventPrelude},
		{"text", `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]}}]}`, conv.EventContent},
		{"error", `{"error":{"code":500,"message":"x","status":"INTERNAL"}}`, conv.EventError},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := eventKind("", []byte(c.data), true); got != c.want {
				t.Errorf("eventKind(%s) = %d, want %d", c.data, got, c.want)
			}
		})
	}
}
