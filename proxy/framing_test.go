package proxy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// framing is how a raw upstream delimits its answer's body.
type framing string

const (
	framedChunked framing = "chunked"
	framedLength  framing = "content-length"
	framedClose   framing = "close" // HTTP/1.0, the body ends when the connection does
)

// rawAnswer is what a rawUpstream sends: body, framed as said; cut sends
// only body[:cut] and closes, the framing still announcing all of it.
type rawAnswer struct {
	frame framing
	ctype string
	body  string
	cut   int
}

// rawUpstream is a fake upstream on a bare TCP listener, so that a test
// chooses the answer's framing byte for byte (httptest's server picks its
// own, and never an HTTP/1.0 close-delimited body).
func rawUpstream(t *testing.T, a rawAnswer) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serveRaw(c, a)
		}
	}()
	return "http://" + l.Addr().String()
}

func serveRaw(c net.Conn, a rawAnswer) {
	defer c.Close()
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, req.Body)
	body := a.body
	if a.cut > 0 {
		body = body[:a.cut]
	}
	var b strings.Builder
	switch a.frame {
	case framedClose:
		fmt.Fprintf(&b, "HTTP/1.0 200 OK\r\nContent-Type: %s\r\n\r\n%s", a.ctype, body)
	case framedLength:
		fmt.Fprintf(&b, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s", a.ctype, len(a.body), body)
	case framedChunked:
		fmt.Fprintf(&b, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n", a.ctype)
		if body != "" {
			fmt.Fprintf(&b, "%x\r\n%s\r\n", len(body), body)
		}
		if a.cut == 0 {
			b.WriteString("0\r\n\r\n")
		}
	}
	_, _ = io.WriteString(c, b.String())
}

// A protocol's side of the framing test: the client's request, the
// upstream's answer, the client's proper end of a stream.
type framingSide struct {
	path   string
	req    func(stream bool) string
	events []proxytest.Event
	json   string
	end    string // the stream's last event, name or data
	// streamPath, when set, is the path of a streamed request (a protocol
	// that says the stream in the path); endIn: end is only part of the
	// last event's data (a protocol with no end event of its own).
	streamPath string
	endIn      bool
}

// geminiChunk is one streamGenerateContent chunk of text.
func geminiChunk(text, finish string) proxytest.Event {
	c := map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}, "index": 0}
	if finish != "" {
		c["finishReason"] = finish
	}
	b, _ := json.Marshal(map[string]any{"candidates": []any{c},
		"usageMetadata": map[string]any{"promptTokenCount": 12, "candidatesTokenCount": 34, "totalTokenCount": 46}})
	return proxytest.Event{Data: string(b)}
}

const geminiJSON = `{"candidates":[{"content":{"role":"model","parts":[{"text":"hello"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":34,"totalTokenCount":46}}`

const responsesJSON = `{"id":"resp_1","object":"response","status":"completed","model":"m","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}],"usage":{"input_tokens":12,"output_tokens":34,"total_tokens":46}}`

var framingSides = map[Protocol]framingSide{
	ProtocolAnthropic: {
		path: "/v1/messages",
		req: func(s bool) string {
			return `{"model":"m-1","max_tokens":100,"messages":[{"role":"user","content":"hi"}],"stream":` + strconv.FormatBool(s) + `}`
		},
		events: proxytest.AnthropicStream(12, 34, "hel", "lo"),
		json:   proxytest.AnthropicMessage("hello", 12, 34).Body,
		end:    "message_stop",
	},
	ProtocolOpenAIChat: {
		path: "/v1/chat/completions",
		req: func(s bool) string {
			return `{"model":"m-1","messages":[{"role":"user","content":"hi"}],"stream":` + strconv.FormatBool(s) + `}`
		},
		events: proxytest.ChatStream(12, 34, "hel", "lo"),
		json:   proxytest.ChatCompletion("hello", 12, 34).Body,
		end:    "[DONE]",
	},
	ProtocolGemini: {
		path:       "/v1beta/models/m-1:generateContent",
		streamPath: "/v1beta/models/m-1:streamGenerateContent?alt=sse",
		req:        func(bool) string { return `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}` },
		events:     []proxytest.Event{geminiChunk("hel", ""), geminiChunk("lo", "STOP")},
		json:       geminiJSON,
		end:        `"finishReason"`,
		endIn:      true,
	},
	ProtocolOpenAIResponses: {
		path:   "/v1/responses",
		req:    func(s bool) string { return `{"model":"m-1","input":"hi","stream":` + strconv.FormatBool(s) + `}` },
		events: proxytest.ResponsesStream(12, 34, "hel", "lo"),
		json:   responsesJSON,
		end:    "response.completed",
	},
}

// sseText renders events as an upstream sends them; cut is the length of
// the text through the first content delta ("hel").
func sseText(evs []proxytest.Event) (text string, cut int) {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(proxytest.FormatEvent(ev))
		if cut == 0 && strings.Contains(ev.Data, `"hel"`) {
			cut = b.Len()
		}
	}
	return b.String(), cut
}

// Every pair of protocols, translated or passed through, streamed or not,
// whatever framing the upstream chose: the client gets a well-framed
// answer — no Content-Length but the one of what it is sent — and a cut
// upstream stream is an upstream error the breaker hears, ended with
// ccmesh's own event, never a cut client stream logged as client gone
// (docs/BEHAVIOUR.md#streaming).
func TestAnswerFramingEveryPair(t *testing.T) {
	for _, pair := range [][2]Protocol{
		{ProtocolAnthropic, ProtocolAnthropic},
		{ProtocolOpenAIChat, ProtocolOpenAIChat},
		{ProtocolOpenAIResponses, ProtocolOpenAIResponses},
		{ProtocolAnthropic, ProtocolOpenAIChat},
		{ProtocolAnthropic, ProtocolOpenAIResponses},
		{ProtocolOpenAIChat, ProtocolAnthropic},
		{ProtocolOpenAIChat, ProtocolOpenAIResponses},
		{ProtocolOpenAIResponses, ProtocolAnthropic},
		{ProtocolOpenAIResponses, ProtocolOpenAIChat},
		{ProtocolGemini, ProtocolGemini},
		{ProtocolGemini, ProtocolAnthropic},
		{ProtocolGemini, ProtocolOpenAIChat},
		{ProtocolGemini, ProtocolOpenAIResponses},
		{ProtocolAnthropic, ProtocolGemini},
		{ProtocolOpenAIChat, ProtocolGemini},
		{ProtocolOpenAIResponses, ProtocolGemini},
	} {
		client, up := framingSides[pair[0]], framingSides[pair[1]]
		t.Run(string(pair[0])+"→"+string(pair[1]), func(t *testing.T) {
			for _, frame := range []framing{framedChunked, framedLength, framedClose} {
				for _, c := range []struct {
					name        string
					stream, cut bool
				}{{"json", false, false}, {"stream", true, false}, {"stream cut after content", true, true}} {
					t.Run(string(frame)+"/"+c.name, func(t *testing.T) {
						a := rawAnswer{frame: frame, ctype: "application/json", body: up.json}
						if c.stream {
							a.ctype = "text/event-stream"
							var cut int
							a.body, cut = sseText(up.events)
							if c.cut {
								a.cut = cut
							}
						}
						e := ep(1, "raw", rawUpstream(t, a))
						e.Protocol, e.Models = pair[1], []string{"m-*"}
						h := newHarness(t, Config{Endpoints: []Endpoint{e}})
						path := client.path
						if c.stream && client.streamPath != "" {
							path = client.streamPath
						}
						r := h.post(path, client.req(c.stream))
						rec := h.record()
						checkFraming(t, r, rec, client, c.stream, c.cut)
					})
				}
			}
		})
	}
}

func checkFraming(t *testing.T, r reply, rec *Record, client framingSide, stream, cut bool) {
	t.Helper()
	if r.status != http.StatusOK || rec.Status != http.StatusOK {
		t.Fatalf("status %d, logged %d (%s), want 200: %s", r.status, rec.Status, rec.Error, r.body)
	}
	if cl := r.header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(r.body)) {
		t.Errorf("Content-Length %s on a body of %d bytes", cl, len(r.body))
	}
	if !stream {
		if !json.Valid([]byte(r.body)) || !strings.Contains(r.body, "hello") {
			t.Errorf("answer = %s, want JSON saying hello", r.body)
		}
		return
	}
	evs := sseEvents(t, r.body)
	last := evs[len(evs)-1]
	if !strings.Contains(r.body, `"hel"`) {
		t.Errorf("the stream lost its content: %s", r.body)
	}
	outcome := rec.Attempts[len(rec.Attempts)-1].Outcome
	switch {
	case !cut && (last[0] != client.end && last[1] != client.end) && !(client.endIn && strings.Contains(last[1], client.end)):
		t.Errorf("stream ends with %v, want %s:\n%s", last, client.end, r.body)
	case !cut && (rec.StreamEnd != StreamComplete || outcome != breaker.Success):
		t.Errorf("logged %q, breaker heard %v; want %q, success", rec.StreamEnd, outcome, StreamComplete)
	case cut && !strings.Contains(last[1], "retry the request"):
		t.Errorf("a cut stream ends with %v, want ccmesh's error event", last)
	case cut && (rec.StreamEnd != StreamUpstreamError || outcome != breaker.Failure):
		t.Errorf("a cut stream logged %q (%s), breaker heard %v; want %q, failure", rec.StreamEnd, rec.Error, outcome, StreamUpstreamError)
	}
}
