package proxy

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

func TestScanBody(t *testing.T) {
	tests := []struct {
		name, body string
		wantModel  string
		hasModel   bool
		stream     bool
		wantErr    bool
	}{
		{name: "plain", body: claudeBody, wantModel: "claude-sonnet-4-5", hasModel: true},
		{name: "stream and spaces", body: " {\n \"stream\" : true ,\"model\" :\t\"m\" }\n", wantModel: "m", hasModel: true, stream: true},
		{name: "nested model ignored", body: `{"metadata":{"model":"x"},"messages":[{"model":"y"}],"model":"z"}`, wantModel: "z", hasModel: true},
		{name: "escaped model", body: `{"model":"a\u002Fb"}`, wantModel: "a/b", hasModel: true},
		{name: "escaped quote in other string", body: `{"system":"say \"model\": no","model":"m"}`, wantModel: "m", hasModel: true},
		{name: "no model", body: `{"messages":[]}`},
		{name: "non-string model", body: `{"model":5}`},
		{name: "empty object", body: `{}`},
		{name: "array", body: `[]`, wantErr: true},
		{name: "truncated", body: `{"model":"m"`, wantErr: true},
		{name: "trailing garbage", body: `{"model":"m"} x`, wantErr: true},
		{name: "missing colon", body: `{"model" "m"}`, wantErr: true},
		{name: "bad nested", body: `{"a":[1,}`, wantErr: true},
		{name: "empty", body: ``, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, err := scanBody([]byte(tc.body))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				if !errors.Is(err, errNotJSON) {
					t.Errorf("err = %v, want errNotJSON", err)
				}
				return
			}
			if info.model != tc.wantModel || info.hasModel != tc.hasModel || info.stream != tc.stream {
				t.Errorf("got model %q has %v stream %v, want %q %v %v", info.model, info.hasModel, info.stream, tc.wantModel, tc.hasModel, tc.stream)
			}
		})
	}
}

func TestWithModel(t *testing.T) {
	body := []byte(`{"a":1, "model" : "@x/claude-haiku" ,"b":[2]}`)
	info, err := scanBody(body)
	if err != nil {
		t.Fatal(err)
	}
	got := string(withModel(body, info, `glm"4`))
	if want := `{"a":1, "model" : "glm\"4" ,"b":[2]}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestPattern(t *testing.T) {
	tests := []struct {
		pat, s string
		want   bool
	}{
		{"claude-*", "claude-sonnet-4-5", true},
		{"claude-*", "gpt-5", false},
		{"*sonnet*", "claude-sonnet-4-5", true},
		{"*sonnet*", "claude-opus", false},
		{"exact", "exact", true},
		{"exact", "exact2", false},
		{"a*a", "a", false},
		{"a*a", "aa", true},
		{"*", "", true},
		{"c*-*-5", "claude-sonnet-4-5", true},
	}
	for _, tc := range tests {
		if got := compilePattern(tc.pat).match(tc.s); got != tc.want {
			t.Errorf("%q.match(%q) = %v, want %v", tc.pat, tc.s, got, tc.want)
		}
	}
}

func TestIsLoopbackHost(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"127.0.0.1:3457", true}, {"127.8.9.1", true}, {"localhost", true}, {"LOCALHOST:80", true},
		{"[::1]:3457", true}, {"::1", true}, {"localhost.", true},
		{"", false}, {"0.0.0.0:3457", false}, {"192.168.0.2", false}, {"localhost.evil.com", false},
		{"evil.localhost:1", false}, {"[::2]:1", false},
	}
	for _, tc := range tests {
		if got := IsLoopbackHost(tc.host); got != tc.want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

func TestDropQueryParam(t *testing.T) {
	tests := []struct{ in, want string }{
		{"beta=true&ccmesh_endpoint=a", "beta=true"},
		{"ccmesh_endpoint=a&beta=true", "beta=true"},
		{"ccmesh%5Fendpoint=a", ""},
		{"beta=true&x=%2F", "beta=true&x=%2F"},
	}
	for _, tc := range tests {
		if got := dropQueryParam(tc.in, "ccmesh_endpoint"); got != tc.want {
			t.Errorf("dropQueryParam(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDecodeBody(t *testing.T) {
	plain := []byte(`{"error":{"type":"insufficient_quota","message":"You exceeded your current quota"}}`)
	for _, enc := range []string{"gzip", "br", "zstd"} {
		t.Run(enc, func(t *testing.T) {
			if got := decodeBody(enc, proxytest.Encode(enc, plain), errBodyCap); string(got) != string(plain) {
				t.Errorf("decoded %q", got)
			}
		})
	}
	t.Run("unknown coding keeps raw", func(t *testing.T) {
		if got := decodeBody("compress", plain, errBodyCap); string(got) != string(plain) {
			t.Errorf("got %q", got)
		}
	})
	t.Run("upstream error text", func(t *testing.T) {
		if got := upstreamErrorText(plain); got != "insufficient_quota: You exceeded your current quota" {
			t.Errorf("got %q", got)
		}
	})
}

func TestClassifyEvent(t *testing.T) {
	tests := []struct {
		name  string
		proto Protocol
		ev    string
		data  string
		want  evKind
	}{
		{"claude message_start", ProtocolAnthropic, "message_start", `{}`, evPrelude},
		{"claude ping", ProtocolAnthropic, "ping", `{}`, evPrelude},
		{"claude thinking block", ProtocolAnthropic, "content_block_start", `{"content_block":{"type":"thinking"}}`, evContent},
		{"claude error", ProtocolAnthropic, "error", `{}`, evError},
		{"claude stop", ProtocolAnthropic, "message_stop", `{}`, evTerminal},
		{"claude unnamed", ProtocolAnthropic, "", `{"type":"ping"}`, evPrelude},
		{"chat role only", ProtocolOpenAIChat, "", `{"choices":[{"delta":{"role":"assistant","content":""},"finish_reason":null}]}`, evPrelude},
		{"chat content", ProtocolOpenAIChat, "", `{"choices":[{"delta":{"content":"hi"}}]}`, evContent},
		{"chat tool call", ProtocolOpenAIChat, "", `{"choices":[{"delta":{"role":"assistant","tool_calls":[{"index":0}]}}]}`, evContent},
		{"chat error", ProtocolOpenAIChat, "", `{"error":{"message":"x"}}`, evError},
		{"chat content mentioning error", ProtocolOpenAIChat, "", `{"choices":[{"delta":{"content":"\"error\": x"}}]}`, evContent},
		{"chat done", ProtocolOpenAIChat, "", `[DONE]`, evTerminal},
		{"responses created", ProtocolOpenAIResponses, "response.created", `{}`, evPrelude},
		{"responses delta", ProtocolOpenAIResponses, "response.output_text.delta", `{}`, evContent},
		{"responses failed", ProtocolOpenAIResponses, "response.failed", `{}`, evError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := classifyEvent(tc.proto, tc.ev, []byte(tc.data), true); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestSSEReader(t *testing.T) {
	long := strings.Repeat("x", 40<<10) // longer than the reader's buffer
	in := "\r\n: comment\r\n\r\nevent: a\r\ndata: 1\r\n\r\ndata: " + long + "\ndata: 2\n\nevent: partial"
	sr := newSSEReader(strings.NewReader(in))
	want := []string{"\r\n: comment\r\n\r\n", "event: a\r\ndata: 1\r\n\r\n", "data: " + long + "\ndata: 2\n\n"}
	for i, w := range want {
		got, err := sr.next()
		if err != nil || string(got) != w {
			t.Fatalf("event %d = %.40q (%v), want %.40q", i, got, err, w)
		}
	}
	name, data := parseEvent([]byte(want[2]))
	if name != "" || string(data) != long+"\n2" {
		t.Errorf("parseEvent: name %q data len %d", name, len(data))
	}
	if got, err := sr.next(); err != io.EOF || string(got) != "event: partial" {
		t.Errorf("tail = %q, %v; want the partial event and EOF", got, err)
	}
}

// parseEvent returns an event's name and data, as a stream reads them
// (sseReader.event) without its names.
func parseEvent(raw []byte) (name string, data []byte) {
	n, data := eventFields(raw)
	return string(n), data
}
