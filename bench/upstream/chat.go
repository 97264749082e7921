package main

import "strconv"

// chatMessage is the non-streamed Chat Completions answer, the same reply
// as message in the OpenAI shape.
const chatMessage = `{"id":"chatcmpl-bench","object":"chat.completion","created":1764547200,"model":"claude-sonnet-4-5",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"Hello from the benchmark upstream."},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":1200,"completion_tokens":9,"total_tokens":1209}}`

// chatEvents returns the chunk sequence of a Chat Completions stream: seq
// 0 the role chunk, 1 … n−4 content chunks, n−3 the finish chunk, n−2 the
// usage chunk (sent only when the request asked for it with
// stream_options.include_usage, as OpenAI does), n−1 [DONE].
//
// A proxy that translates the stream into another protocol (ccmesh,
// docs/BEHAVIOUR.md#translation) rebuilds every event around the text, so
// the content chunks carry their position and send time inside the text
// itself, as "seq=N ts=UNIXNS " (no character JSON would escape): the text
// reaches the client unchanged in whatever protocol it speaks, and
// bench/loadgen measures each content event's delay from it. The other
// chunks carry neither: what the client receives in their place is made
// by the proxy (bench/NOTES.md).
func chatEvents(usage bool) eventFunc {
	return func(b []byte, seq, n int, ts int64) []byte {
		const head = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764547200,"model":"claude-sonnet-4-5","choices":[`
		switch seq {
		case 0:
			return append(b, head+`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n"...)
		case n - 3:
			return append(b, head+`{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n"...)
		case n - 2:
			if !usage {
				return b
			}
			b = append(b, head+`],"usage":{"prompt_tokens":1200,"completion_tokens":`...)
			b = strconv.AppendInt(b, int64(n-4), 10)
			b = append(b, `,"total_tokens":`...)
			b = strconv.AppendInt(b, int64(1200+n-4), 10)
			return append(b, "}}\n\n"...)
		case n - 1:
			return append(b, "data: [DONE]\n\n"...)
		}
		b = append(b, head+`{"index":0,"delta":{"content":"seq=`...)
		b = strconv.AppendInt(b, int64(seq), 10)
		b = append(b, " ts="...)
		b = strconv.AppendInt(b, ts, 10)
		return append(b, ` "},"finish_reason":null}]}`+"\n\n"...)
	}
}
