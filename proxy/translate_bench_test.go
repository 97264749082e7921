package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// BenchmarkProxyTranslate: one non-streamed request at a time (c=1, as
// make bench's first row) through the proxy over loopback with the body
// bench/loadgen sends (a ~4 KiB user turn), passed through to an endpoint
// of the client's protocol or translated for a Chat Completions one. The
// difference between a translating row and "passthrough" is what
// translation costs a request (bench/NOTES.md, Translation).
func BenchmarkProxyTranslate(b *testing.B) {
	filler := strings.Repeat("lorem ipsum ", 4096/12)
	claude := `{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":false,"messages":[{"role":"user","content":"` + filler + `"}]}`
	responses := `{"model":"claude-sonnet-4-5","max_output_tokens":1024,"stream":false,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"` + filler + `"}]}]}`
	gemini := `{"contents":[{"role":"user","parts":[{"text":"` + filler + `"}]}],"generationConfig":{"maxOutputTokens":1024}}`
	rows := []struct {
		name, path, body string
		upstream         Protocol
		answer           proxytest.Response
	}{
		{"passthrough", "/v1/messages", claude, ProtocolAnthropic, proxytest.AnthropicMessage("Hello from the benchmark upstream.", 1200, 9)},
		{"claude-chat", "/v1/messages", claude, ProtocolOpenAIChat, proxytest.ChatCompletion("Hello from the benchmark upstream.", 1200, 9)},
		{"responses-chat", "/v1/responses", responses, ProtocolOpenAIChat, proxytest.ChatCompletion("Hello from the benchmark upstream.", 1200, 9)},
		{"gemini-chat", "/v1beta/models/claude-sonnet-4-5:generateContent", gemini, ProtocolOpenAIChat, proxytest.ChatCompletion("Hello from the benchmark upstream.", 1200, 9)},
	}
	for _, row := range rows {
		b.Run(row.name, func(b *testing.B) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				proxytest.Serve(w, r, row.answer)
			}))
			defer up.Close()
			e := ep(1, "a", up.URL)
			e.Protocol = row.upstream
			e.Models = []string{"claude-*"}
			srv := New(Options{Breakers: breaker.NewSet(breaker.Config{}, nil), Logger: zerolog.Nop()})
			srv.Update(Config{Endpoints: []Endpoint{e}})
			front := httptest.NewServer(srv)
			defer front.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			defer client.CloseIdleConnections()
			body := []byte(row.body)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, front.URL+row.path, bytes.NewReader(body))
				req.Header.Set("anthropic-version", "2023-06-01")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				answer, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || !bytes.Contains(answer, []byte("benchmark upstream")) {
					b.Fatalf("status %d: %s", resp.StatusCode, answer)
				}
			}
		})
	}
}
