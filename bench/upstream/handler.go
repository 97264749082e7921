package main

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// minEvents is the shortest proper Anthropic stream: message_start,
// content_block_start, content_block_stop, message_delta and message_stop,
// with no delta between them.
const minEvents = 5

// message is the non-streamed answer: a realistic small Messages reply.
const message = `{"id":"msg_bench","type":"message","role":"assistant","model":"claude-sonnet-4-5",` +
	`"content":[{"type":"text","text":"Hello from the benchmark upstream."}],` +
	`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1200,"output_tokens":9}}`

// Handler answers POST /v1/messages and POST /v1/chat/completions (see
// chat.go); anything else is a 404.
type Handler struct {
	Events   int           // events per stream, ≥ minEvents
	Interval time.Duration // time between events
	// now is the clock; nil means time.Now. Tests set it to check the
	// timestamps.
	now func() time.Time
	// bodies recycles request-body buffers: the upstream must stay cheap
	// next to the proxies it is compared with.
	bodies sync.Pool
}

func (h *Handler) clock() time.Time {
	if h.now != nil {
		return h.now()
	}
	return time.Now()
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	chat := r.URL.Path == "/v1/chat/completions"
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" && !chat {
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not found"}}`, http.StatusNotFound)
		return
	}
	buf, _ := h.bodies.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	defer func() { buf.Reset(); h.bodies.Put(buf) }()
	if _, err := buf.ReadFrom(r.Body); err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	// A substring test, not a decode: the benchmark clients send compact
	// JSON, and decoding would make the upstream a bottleneck.
	stream := bytes.Contains(buf.Bytes(), []byte(`"stream":true`))
	switch {
	case chat && stream:
		h.stream(w, r, chatEvents(bytes.Contains(buf.Bytes(), []byte(`"include_usage":true`))))
	case stream:
		h.stream(w, r, appendEvent)
	default:
		answer := message
		if chat {
			answer = chatMessage
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		_, _ = io.WriteString(w, answer)
	}
}

// eventFunc appends event seq of an n-event stream sent at ts (unix ns);
// appending nothing sends nothing at that tick.
type eventFunc func(b []byte, seq, n int, ts int64) []byte

// stream sends h.Events events, the first at once and each next one
// Interval after the previous one's schedule (a ticker, so delays do not
// add up), each flushed on its own.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, event eventFunc) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(h.Interval)
	defer tick.Stop()
	var line []byte
	for seq := range h.Events {
		if seq > 0 {
			select {
			case <-tick.C:
			case <-r.Context().Done():
				return
			}
		}
		line = event(line[:0], seq, h.Events, h.clock().UnixNano())
		if len(line) == 0 {
			continue
		}
		if _, err := w.Write(line); err != nil {
			return
		}
		fl.Flush()
	}
}

// appendEvent appends event seq of an n-event stream in the Anthropic
// sequence: message_start, content_block_start, deltas,
// content_block_stop, message_delta, message_stop.
func appendEvent(b []byte, seq, n int, ts int64) []byte {
	var name, body string
	switch seq {
	case 0:
		name, body = "message_start", `"message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":1200,"output_tokens":1}}`
	case 1:
		name, body = "content_block_start", `"index":0,"content_block":{"type":"text","text":""}`
	case n - 3:
		name, body = "content_block_stop", `"index":0`
	case n - 2:
		name, body = "message_delta", `"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":`+strconv.Itoa(n-5)+`}`
	case n - 1:
		name, body = "message_stop", ""
	default:
		name, body = "content_block_delta", `"index":0,"delta":{"type":"text_delta","text":"token "}`
	}
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: {\"type\":\""...)
	b = append(b, name...)
	b = append(b, "\",\"seq\":"...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, ",\"ts\":"...)
	b = strconv.AppendInt(b, ts, 10)
	if body != "" {
		b = append(b, ',')
		b = append(b, body...)
	}
	return append(b, "}\n\n"...)
}
