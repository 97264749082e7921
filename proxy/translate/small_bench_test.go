package translate

import (
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/gemini"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// smallBodies are the requests bench/loadgen sends (a ~4 KiB user turn),
// by client protocol, and smallAnswer the Chat answer bench/upstream gives.
var (
	smallFiller = strings.Repeat("lorem ipsum ", 4096/12)
	smallBodies = map[conv.Protocol]string{
		anthropic.Protocol: `{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":false,"messages":[{"role":"user","content":"` + smallFiller + `"}]}`,
		responses.Protocol: `{"model":"claude-sonnet-4-5","max_output_tokens":1024,"stream":false,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"` + smallFiller + `"}]}]}`,
		gemini.Protocol:    `{"contents":[{"role":"user","parts":[{"text":"` + smallFiller + `"}]}],"generationConfig":{"maxOutputTokens":1024}}`,
	}
	smallAnswer = []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1764547200,"model":"claude-sonnet-4-5",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"Hello from the benchmark upstream."},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":1200,"completion_tokens":9,"total_tokens":1209}}`)
)

// BenchmarkTranslateSmall is one request of make bench's translation rows
// through the codecs alone, each step on its own: the client's request
// decoded, encoded for a Chat endpoint, the Chat answer decoded and
// encoded for the client (bench/NOTES.md, Translation).
func BenchmarkTranslateSmall(b *testing.B) {
	for _, from := range []conv.Protocol{anthropic.Protocol, responses.Protocol, gemini.Protocol} {
		client, up := Codec(from), Codec(chat.Protocol)
		body := []byte(smallBodies[from])
		req, err := client.DecodeRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		resp, err := up.DecodeResponse(smallAnswer)
		if err != nil {
			b.Fatal(err)
		}
		name := string(from) + "-chat/"
		step := func(what string, fn func() error) {
			b.Run(name+what, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := fn(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		step("decode-request", func() error { _, err := client.DecodeRequest(body); return err })
		step("encode-request", func() error { _, err := up.EncodeRequest(req); return err })
		step("decode-response", func() error { _, err := up.DecodeResponse(smallAnswer); return err })
		step("encode-response", func() error { _, err := client.EncodeResponse(resp, req); return err })
	}
}
