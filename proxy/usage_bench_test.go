package proxy

import "testing"

// BenchmarkUsageOfEvent reads the usage of the events that carry one, per
// protocol: the meter runs it on every event of every stream.
func BenchmarkUsageOfEvent(b *testing.B) {
	for _, c := range []struct {
		name  string
		proto Protocol
		data  string
	}{
		{"anthropic", ProtocolAnthropic, `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":34}}`},
		{"chat", ProtocolOpenAIChat, `{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":2006,"completion_tokens":300,"prompt_tokens_details":{"cached_tokens":1920}}}`},
		{"chat content", ProtocolOpenAIChat, `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hello"}}]}`},
		{"responses", ProtocolOpenAIResponses, `{"type":"response.completed","response":{"id":"r","status":"completed","usage":{"input_tokens":3000,"input_tokens_details":{"cached_tokens":2048},"output_tokens":700}}}`},
	} {
		data := []byte(c.data)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				usageOfEvent(c.proto, data)
			}
		})
	}
}
