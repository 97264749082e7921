package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

func TestStatTicks(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    int64
		wantErr bool
	}{
		{"plain", "42 (ccmesh) S 1 42 42 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 8 0 1000", 325, false},
		{"name with spaces and parens", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0", 7, false},
		{"no name", "7 a R", 0, true},
		{"short", "7 (x) R 1 2", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := statTicks([]byte(tt.stat))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("statTicks = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestStatusKB(t *testing.T) {
	status := "Name:\tccmesh\nVmHWM:\t   30796 kB\nVmRSS:\t   29920 kB\n"
	tests := []struct {
		key  string
		want int64
	}{{"VmRSS:", 29920}, {"VmHWM:", 30796}, {"VmSwap:", 0}}
	for _, tt := range tests {
		if got := statusKB([]byte(status), tt.key); got != tt.want {
			t.Errorf("statusKB(%s) = %d, want %d", tt.key, got, tt.want)
		}
	}
}

func TestRequestBody(t *testing.T) {
	for _, api := range []string{"messages", "chat", "responses"} {
		for _, stream := range []bool{false, true} {
			b := requestBody(config{api: api, model: "m-1", bodyBytes: 4096}, stream)
			var v struct {
				Model    string            `json:"model"`
				Stream   bool              `json:"stream"`
				Messages []json.RawMessage `json:"messages"`
				Input    []json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatalf("%s body is not JSON: %v", api, err)
			}
			if v.Model != "m-1" || v.Stream != stream || len(b) < 4000 || len(b) > 4200 {
				t.Errorf("%s body: model %q stream %v len %d; want m-1, stream %v, about 4096 bytes", api, v.Model, v.Stream, len(b), stream)
			}
			if (api == "responses") != (len(v.Input) == 1) || (api == "responses") == (len(v.Messages) == 1) {
				t.Errorf("%s body has %d messages and %d input items", api, len(v.Messages), len(v.Input))
			}
		}
	}
	// The Claude body is the one the benchmark always sent.
	b := requestBody(config{api: "messages", model: "claude-sonnet-4-5", bodyBytes: 4096}, false)
	if !strings.HasPrefix(string(b), `{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":false,"messages":[{"role":"user","content":"lorem ipsum`) || len(b) != 4096 {
		t.Errorf("Claude body changed: %.100s… (%d bytes)", b, len(b))
	}
}

// event formats an upstream event as bench/upstream does.
func event(name string, seq int, ts int64) string {
	return "event: " + name + "\ndata: {\"type\":\"" + name + "\",\"seq\":" + itoa(int64(seq)) + ",\"ts\":" + itoa(ts) + "}\n\n"
}

func itoa(v int64) string { b, _ := json.Marshal(v); return string(b) }

// chunks is a reader that returns one chunk per Read, as a socket would
// return what arrived together.
type chunks struct{ parts []string }

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	c.parts[0] = c.parts[0][n:]
	if c.parts[0] == "" {
		c.parts = c.parts[1:]
	}
	return n, nil
}

func TestReadEventsAndJudge(t *testing.T) {
	const ms = int64(time.Millisecond)
	t0 := int64(1_000_000 * ms)
	names := []string{"message_start", "content_block_start", "content_block_delta", "message_stop"}
	ev := func(i int) string { return event(names[i], i, t0+int64(i)*20*ms) }
	tests := []struct {
		name                      string
		parts                     []string
		wantEvents                int
		wantNotAlone, wantPrelude int
		wantComplete              bool
	}{
		{"each alone", []string{ev(0), ev(1), ev(2), ev(3)}, 4, 0, 0, true},
		{"prelude held", []string{ev(0) + ev(1), ev(2), ev(3)}, 4, 1, 1, true},
		{"coalesced later", []string{ev(0), ev(1), ev(2) + ev(3)}, 4, 1, 0, true},
		{"split across reads", []string{ev(0)[:10], ev(0)[10:], ev(1), ev(2), ev(3)}, 4, 0, 0, true},
		{"missing event", []string{ev(0), ev(1), ev(3)}, 3, 0, 0, false},
		{"no message_stop", []string{ev(0), ev(1), ev(2)}, 3, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := readEvents(&chunks{parts: tt.parts})
			if err != nil {
				t.Fatalf("readEvents: %v", err)
			}
			if len(evs) != tt.wantEvents {
				t.Fatalf("got %d events, want %d", len(evs), tt.wantEvents)
			}
			st := judge(evs, time.Unix(0, t0), 20*time.Millisecond)
			if st.notAlone != tt.wantNotAlone || st.preludeNotAlone != tt.wantPrelude {
				t.Errorf("not alone %d (prelude %d), want %d (%d)", st.notAlone, st.preludeNotAlone, tt.wantNotAlone, tt.wantPrelude)
			}
			if len(st.delays) != tt.wantEvents-1 {
				t.Errorf("%d delays, want %d (all but message_start)", len(st.delays), tt.wantEvents-1)
			}
			if err := checkComplete(evs, config{api: "messages", upstream: "anthropic", events: 4}); (err == nil) != tt.wantComplete {
				t.Errorf("checkComplete = %v, want complete %v", err, tt.wantComplete)
			}
		})
	}
}

// TestTranslatedStream reads a Chat upstream's stream (bench/upstream,
// chat.go) as a Claude client gets it through a translating proxy, and as
// a Chat client gets it directly: only the content events carry the send
// time, in their text.
func TestTranslatedStream(t *testing.T) {
	const ms = int64(time.Millisecond)
	t0 := int64(1_000_000 * ms)
	text := func(seq int) string { return "seq=" + itoa(int64(seq)) + " ts=" + itoa(t0+int64(seq)*20*ms) + " " }
	claude := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	delta := func(seq int) string {
		return claude("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+text(seq)+`"}}`)
	}
	chunk := func(seq int) string {
		return `data: {"choices":[{"index":0,"delta":{"content":"` + text(seq) + `"}}]}` + "\n\n"
	}
	// 7 upstream chunks: role, content 1–3, finish, usage, [DONE].
	start := claude("message_start", `{"type":"message_start","message":{"id":"x"}}`) +
		claude("content_block_start", `{"type":"content_block_start","index":0}`)
	end := claude("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		claude("message_delta", `{"type":"message_delta"}`) + claude("message_stop", `{"type":"message_stop"}`)
	// The Responses stream's done events repeat the whole text.
	rsp := func(name, data string) string { return claude(name, `{"type":"`+name+`",`+data+`}`) }
	rdelta := func(seq int) string { return rsp("response.output_text.delta", `"delta":"`+text(seq)+`"`) }
	whole := text(1) + text(2) + text(3)
	// A Gemini client's stream: unnamed chunks, the last with a finishReason.
	gchunk := func(text, finish string) string {
		return `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"` + text + `"}]}` + finish +
			`,"index":0}],"modelVersion":"gemini-bench"}` + "\n\n"
	}
	gfinish := gchunk("", `,"finishReason":"STOP"`)
	tests := []struct {
		name         string
		api          string
		parts        []string
		wantDelays   int
		wantNotAlone int
		wantComplete bool
	}{
		{"claude, each alone", "messages", []string{start + delta(1), delta(2), delta(3), end}, 3, 0, true},
		{"claude, coalesced", "messages", []string{start + delta(1), delta(2) + delta(3), end}, 3, 1, true},
		{"claude, missing", "messages", []string{start + delta(1), delta(3), end}, 2, 0, false},
		{"claude, no message_stop", "messages", []string{start + delta(1), delta(2), delta(3)}, 3, 0, false},
		{"chat", "chat", []string{`data: {"choices":[{"delta":{"role":"assistant","content":""}}]}` + "\n\n", chunk(1), chunk(2), chunk(3),
			`data: {"choices":[{"delta":{},"finish_reason":"stop"}]}` + "\n\n", "data: [DONE]\n\n"}, 3, 0, true},
		{"chat, no [DONE]", "chat", []string{chunk(1), chunk(2), chunk(3)}, 3, 0, false},
		{"responses", "responses", []string{rsp("response.created", `"x":1`) + rdelta(1), rdelta(2), rdelta(3),
			rsp("response.output_text.done", `"text":"`+whole+`"`) + rsp("response.completed", `"output":[{"text":"`+whole+`"}]`)}, 3, 0, true},
		{"gemini", "gemini", []string{gchunk(text(1), ""), gchunk(text(2), ""), gchunk(text(3), ""), gfinish}, 3, 0, true},
		{"gemini, coalesced", "gemini", []string{gchunk(text(1), ""), gchunk(text(2), "") + gchunk(text(3), ""), gfinish}, 3, 1, true},
		{"gemini, missing", "gemini", []string{gchunk(text(1), ""), gchunk(text(3), ""), gfinish}, 2, 0, false},
		{"gemini, no finishReason", "gemini", []string{gchunk(text(1), ""), gchunk(text(2), ""), gchunk(text(3), "")}, 3, 0, false},
		{"gemini, error after content", "gemini", []string{gchunk(text(1), ""), gchunk(text(2), ""), gchunk(text(3), ""),
			`data: {"error":{"code":500,"message":"upstream error","status":"INTERNAL"}}` + "\n\n"}, 3, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := readEvents(&chunks{parts: tt.parts})
			if err != nil {
				t.Fatalf("readEvents: %v", err)
			}
			st := judge(evs, time.Unix(0, t0), 20*time.Millisecond)
			if len(st.delays) != tt.wantDelays || st.notAlone != tt.wantNotAlone {
				t.Errorf("%d delays, %d not alone; want %d, %d", len(st.delays), st.notAlone, tt.wantDelays, tt.wantNotAlone)
			}
			err = checkComplete(evs, config{api: tt.api, upstream: "chat", events: 7})
			if (err == nil) != tt.wantComplete {
				t.Errorf("checkComplete = %v, want complete %v", err, tt.wantComplete)
			}
		})
	}
}

func TestGeminiRequest(t *testing.T) {
	for _, stream := range []bool{false, true} {
		b := requestBody(config{api: "gemini", model: "gemini-bench", bodyBytes: 4096}, stream)
		var v struct {
			Model    *string `json:"model"`
			Stream   *bool   `json:"stream"`
			Contents []struct {
				Role  string `json:"role"`
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"contents"`
			GenerationConfig struct {
				MaxOutputTokens int `json:"maxOutputTokens"`
			} `json:"generationConfig"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("gemini body is not JSON: %v", err)
		}
		if v.Model != nil || v.Stream != nil {
			t.Errorf("gemini body names the model or the stream: %.100s", b)
		}
		if len(v.Contents) != 1 || v.Contents[0].Role != "user" || len(v.Contents[0].Parts) != 1 ||
			!strings.HasPrefix(v.Contents[0].Parts[0].Text, "lorem ipsum") || v.GenerationConfig.MaxOutputTokens != 1024 {
			t.Errorf("gemini body is not one user turn of text with maxOutputTokens 1024: %.200s", b)
		}
		if len(b) < 4000 || len(b) > 4200 {
			t.Errorf("gemini body is %d bytes, want about 4096", len(b))
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-url", "http://h:1/v1beta"}, "http://h:1/v1beta/models/gemini-bench:generateContent"},
		{[]string{"-url", "http://h:1/v1beta/", "-mode", "sse"}, "http://h:1/v1beta/models/gemini-bench:streamGenerateContent?alt=sse"},
		{[]string{"-url", "http://h:1/v1beta", "-model", "@relay/gemini-2.5-flash"}, "http://h:1/v1beta/models/@relay%2Fgemini-2.5-flash:generateContent"},
	} {
		c, err := parse(append([]string{"-api", "gemini", "-model", "gemini-bench"}, tt.args...))
		if err != nil {
			t.Fatal(err)
		}
		if c.url != tt.want {
			t.Errorf("parse(%v) url %q, want %q", tt.args, c.url, tt.want)
		}
	}
}

func TestGeminiAnswered(t *testing.T) {
	tests := []struct {
		name, body string
		ok         bool
	}{
		{"text", `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1200}}`, true},
		{"no candidates", `{"promptFeedback":{"blockReason":"SAFETY"}}`, false},
		{"empty candidates", `{"candidates":[],"usageMetadata":{"promptTokenCount":1200}}`, false},
		{"empty text", `{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP"}]}`, false},
		{"an error", `{"error":{"code":500,"message":"x","status":"INTERNAL"}}`, false},
		{"cut", `{"candidates":[{"content":{"role":"model","parts":[{"text":"`, false},
	}
	for _, tt := range tests {
		if err := geminiAnswered([]byte(tt.body)); (err == nil) != tt.ok {
			t.Errorf("%s: geminiAnswered = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// TestRunGemini runs the Gemini client's modes against an in-process
// server that answers as ccmesh does a Gemini client: its path, its key
// header, a candidate's text; as SSE the text chunks with the upstream's
// seq and send time and a finishReason chunk last.
func TestRunGemini(t *testing.T) {
	var empty atomic.Bool // answer without text
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Header.Get("x-goog-api-key") == "" {
			http.Error(w, `{"error":{"code":401}}`, http.StatusUnauthorized)
			return
		}
		switch {
		case r.URL.Path == "/v1beta/models/gemini-bench:generateContent" && empty.Load():
			_, _ = io.WriteString(w, `{"candidates":[],"modelVersion":"gemini-bench"}`)
		case r.URL.Path == "/v1beta/models/gemini-bench:generateContent":
			_, _ = io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello"}]},"finishReason":"STOP","index":0}],"modelVersion":"gemini-bench"}`)
		case r.URL.Path == "/v1beta/models/gemini-bench:streamGenerateContent" && r.URL.RawQuery == "alt=sse":
			w.Header().Set("Content-Type", "text/event-stream")
			for seq := 1; seq <= 3; seq++ {
				_, _ = io.WriteString(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"seq=`+itoa(int64(seq))+
					` ts=`+itoa(time.Now().UnixNano())+` "}]},"index":0}]}`+"\n\n")
				w.(http.Flusher).Flush()
				time.Sleep(5 * time.Millisecond)
			}
			_, _ = io.WriteString(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}]}`+"\n\n")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	tests := []struct {
		name                     string
		args                     []string
		empty                    bool
		wantRequests, wantErrors int
	}{
		{"latency", []string{"-mode", "latency", "-n", "20"}, false, 20, 0},
		{"rate", []string{"-mode", "rate", "-rps", "200", "-c", "4", "-d", "100ms"}, false, 20, 0},
		{"latency, no text", []string{"-mode", "latency", "-n", "5"}, true, 5, 5},
		{"sse", []string{"-mode", "sse", "-c", "2", "-r", "2", "-upstream", "chat", "-events", "7", "-interval", "5ms"}, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			empty.Store(tt.empty)
			c, err := parse(append(tt.args, "-api", "gemini", "-model", "gemini-bench", "-url", srv.URL+"/v1beta"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := run(t.Context(), c)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != tt.wantRequests || res.Errors != tt.wantErrors {
				t.Errorf("requests %d, errors %d (%s); want %d, %d", res.Requests, res.Errors, res.ErrorEg, tt.wantRequests, tt.wantErrors)
			}
			if c.mode == "sse" && (res.Streams != 4 || res.Incomplete != 0 || res.Events != 12) {
				t.Errorf("streams %d, incomplete %d, timed events %d; want 4, 0, 12", res.Streams, res.Incomplete, res.Events)
			}
		})
	}
}

func TestReadEventsErrors(t *testing.T) {
	tests := []struct {
		name string
		r    io.Reader
	}{
		{"cut inside an event", strings.NewReader("event: message_start\ndata: {\"seq\":0")},
		{"read error", iotest.ErrReader(errors.New("connection reset"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := readEvents(tt.r); err == nil {
				t.Error("readEvents returned no error")
			}
		})
	}
}

func TestParseWrk(t *testing.T) {
	out := "Running 5s test @ http://x\n" +
		`WRKJSON {"requests":100,"duration_us":5000000,"connect":0,"read":1,"write":0,"status":2,"timeout":0,"p50_us":900,"p99_us":4000,"max_us":9000}` + "\n"
	s, err := parseWrk([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 100 || s.Read != 1 || s.Status != 2 || s.P99Us != 4000 {
		t.Errorf("parseWrk = %+v, want requests 100, read 1, status 2, p99 4000", s)
	}
	if _, err := parseWrk([]byte("wrk: connection refused\n")); err == nil {
		t.Error("parseWrk without a summary returned no error")
	}
}

// TestRunModes runs each HTTP mode briefly against an in-process server
// and checks the counts (not the timings, which a test cannot judge).
func TestRunModes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Header.Get("x-fail") != "" {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	tests := []struct {
		name         string
		args         []string
		wantRequests int
	}{
		{"latency", []string{"-mode", "latency", "-n", "20"}, 20},
		{"rate", []string{"-mode", "rate", "-rps", "200", "-c", "4", "-d", "100ms"}, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parse(append(tt.args, "-url", srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			res, err := run(t.Context(), c)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != tt.wantRequests || res.Errors != 0 {
				t.Errorf("requests %d, errors %d (%s); want %d, 0", res.Requests, res.Errors, res.ErrorEg, tt.wantRequests)
			}
			if res.P50Us <= 0 || res.P99Us < res.P50Us {
				t.Errorf("p50 %v p99 %v: want 0 < p50 ≤ p99", res.P50Us, res.P99Us)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr bool
	}{
		{"ok", []string{"-url", "http://x", "-pid", "1,2"}, false},
		{"no url", []string{}, true},
		{"bad pid", []string{"-url", "http://x", "-pid", "one"}, true},
		{"zero conns", []string{"-url", "http://x", "-c", "0"}, true},
		{"gemini", []string{"-url", "http://x/v1beta", "-api", "gemini"}, false},
		{"unknown api", []string{"-url", "http://x", "-api", "bedrock"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(tt.args)
			if (err != nil) != tt.wantErr {
				t.Errorf("parse(%v) error = %v, want error %v", tt.args, err, tt.wantErr)
			}
		})
	}
}

func TestSlowest(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		ds := make([]time.Duration, len(v))
		for i, x := range v {
			ds[i] = time.Duration(x) * time.Millisecond
		}
		return ds
	}
	tests := []struct {
		ds   []time.Duration
		n    int
		want []int
	}{
		{ms(1, 9, 1, 1, 8, 1), 2, []int{1, 4}},
		{ms(5, 5, 5), 2, []int{0, 1}}, // ties: the earlier first
		{ms(1, 2), 5, []int{0, 1}},
		{nil, 3, []int{}},
	}
	for _, tt := range tests {
		if got := slowest(tt.ds, tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("slowest(%v, %d) = %v, want %v", tt.ds, tt.n, got, tt.want)
		}
	}
}
