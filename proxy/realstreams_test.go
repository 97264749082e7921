package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
	"github.com/ccmesh/ccmesh/proxy/translate"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// TestRealStreams replays streams recorded from real providers
// (docs/BEHAVIOUR.md#translation, "Recorded streams") from a fake upstream
// of their protocol through the proxy to a client of each protocol, streamed
// and not, and checks that the client gets a valid answer of its own
// protocol carrying what the recording carries. The committed corpus is
// proxy/testdata/realstreams (reductions, each with the answer it must
// give in a .want.json); CCMESH_REALSTREAMS names a directory laid out the
// same way (anthropic/, chat/, responses/, gemini/ of *.chunks.txt) to
// replay as well.
func TestRealStreams(t *testing.T) {
	corpora := []string{filepath.Join("testdata", "realstreams")}
	if dir := os.Getenv("CCMESH_REALSTREAMS"); dir != "" {
		corpora = append(corpora, dir)
	}
	for _, dir := range corpora {
		recs := loadRecordings(t, dir)
		if len(recs) == 0 {
			t.Fatalf("no recordings under %s", dir)
		}
		rs := newReplayer(t)
		var streamed, plain tally
		for _, rec := range recs {
			t.Run(rec.name, func(t *testing.T) {
				want := rec.expected(t)
				for _, client := range Protocols {
					t.Run(string(client)+"/stream", func(t *testing.T) {
						streamed.count(t, func() []string { return rs.check(rec, want, client, true) })
					})
					t.Run(string(client)+"/plain", func(t *testing.T) {
						plain.count(t, func() []string { return rs.check(rec, want, client, false) })
					})
				}
			})
		}
		t.Logf("%s: %d recordings; streamed %d/%d cases passed, not streamed %d/%d",
			dir, len(recs), streamed.passed, streamed.total, plain.passed, plain.total)
		for _, f := range append(streamed.failed, plain.failed...) {
			t.Logf("  failed: %s", f)
		}
	}
}

// tally counts cases and the names of those that failed.
type tally struct {
	passed, total int
	failed        []string
}

func (c *tally) count(t *testing.T, run func() []string) {
	t.Helper()
	c.total++
	problems := run()
	if len(problems) == 0 {
		c.passed++
		return
	}
	c.failed = append(c.failed, t.Name())
	for _, p := range problems {
		t.Error(p)
	}
}

// recording is one recorded stream: its protocol and its lines (each one
// event's JSON, as SOURCES.md of the corpus describes them).
type recording struct {
	name  string // <protocol dir>/<file name without .chunks.txt>
	proto Protocol
	lines []string
	want  *wantFile // the committed answer, for a reduction
}

var corpusDirs = map[string]Protocol{"anthropic": ProtocolAnthropic, "chat": ProtocolOpenAIChat, "responses": ProtocolOpenAIResponses, "gemini": ProtocolGemini}

// loadRecordings reads every <proto>/*.chunks.txt under dir; lines that
// start with # are a reduction's comments.
func loadRecordings(t *testing.T, dir string) []*recording {
	t.Helper()
	var recs []*recording
	for sub, proto := range corpusDirs {
		files, err := filepath.Glob(filepath.Join(dir, sub, "*.chunks.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatalf("read recording: %v", err)
			}
			rec := &recording{name: sub + "/" + strings.TrimSuffix(filepath.Base(f), ".chunks.txt"), proto: proto}
			for _, l := range strings.Split(string(b), "\n") {
				if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
					rec.lines = append(rec.lines, l)
				}
			}
			if w, err := os.ReadFile(strings.TrimSuffix(f, ".chunks.txt") + ".want.json"); err == nil {
				rec.want = new(wantFile)
				if err := json.Unmarshal(w, rec.want); err != nil {
					t.Fatalf("%s: want.json: %v", f, err)
				}
			}
			recs = append(recs, rec)
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].name < recs[j].name })
	return recs
}

// events frames the recording as its upstream sends it: Anthropic and
// Responses lines as `event: <type>` / `data: <line>`, Chat lines as data
// only and then [DONE] unless the last line is an error, Gemini lines as
// data only (streamGenerateContent?alt=sse, which ccmesh always asks
// Gemini for: docs/BEHAVIOUR.md#translation).
func (r *recording) events() []proxytest.Event {
	var evs []proxytest.Event
	for _, l := range r.lines {
		ev := proxytest.Event{Data: l}
		if r.proto != ProtocolOpenAIChat && r.proto != ProtocolGemini {
			var v struct {
				Type string `json:"type"`
			}
			if json.Unmarshal([]byte(l), &v) == nil {
				ev.Name = v.Type
			}
		}
		evs = append(evs, ev)
	}
	if r.proto == ProtocolOpenAIChat && (len(r.lines) == 0 || !isErrorChunk(r.lines[len(r.lines)-1])) {
		evs = append(evs, proxytest.Event{Data: "[DONE]"})
	}
	return evs
}

func isErrorChunk(line string) bool {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	return json.Unmarshal([]byte(line), &v) == nil && len(v.Error) > 0 && string(v.Error) != "null"
}

// expected decodes the recording with its own protocol's stream decoder:
// what any client must get, up to what its protocol can carry. A
// reduction's .want.json pins that decoding.
func (r *recording) expected(t *testing.T) outcome {
	t.Helper()
	dec := translate.Codec(conv.Protocol(r.proto)).StreamDecoder()
	c := conv.NewCollect()
	var decErr error
	for _, ev := range r.events() {
		if decErr = dec.Decode(ev.Name, []byte(ev.Data), c.Add); decErr != nil {
			break
		}
	}
	complete := decErr == nil && dec.End(c.Add)
	o := outcomeOf(c, complete)
	o.raw = rawCalls(r)
	if r.want != nil {
		if got, want := o.neutral(), r.want.normal(); got != want {
			t.Errorf("the recording decodes to\n%s\nwant (.want.json)\n%s", got, want)
		}
	}
	return o
}

// rawCall is what a Responses recording's output_item.done says of a call,
// read without the codec: its item type and namespace.
type rawCall struct {
	typ, namespace, name string
}

func rawCalls(r *recording) map[string]rawCall {
	if r.proto != ProtocolOpenAIResponses {
		return nil
	}
	m := map[string]rawCall{}
	for _, l := range r.lines {
		var ev struct {
			Type string `json:"type"`
			Item struct {
				Type, ID, Name, Namespace string
				CallID                    string `json:"call_id"`
			} `json:"item"`
		}
		if json.Unmarshal([]byte(l), &ev) != nil || ev.Type != "response.output_item.done" {
			continue
		}
		it := ev.Item
		if it.Type != "function_call" && it.Type != "custom_tool_call" {
			continue
		}
		id := it.CallID
		if id == "" {
			id = it.ID
		}
		m[id] = rawCall{typ: it.Type, namespace: it.Namespace, name: it.Name}
	}
	return m
}

// replayer is a proxy with one fake upstream per protocol; a case points
// the one of the recording's protocol at the recording.
type replayer struct {
	t    *testing.T
	h    *harness
	ups  map[Protocol]*proxytest.Upstream
	name map[Protocol]string
}

const replayModel = "rs-model"

func newReplayer(t *testing.T) *replayer {
	rs := &replayer{t: t, ups: map[Protocol]*proxytest.Upstream{}, name: map[Protocol]string{}}
	var eps []Endpoint
	for i, p := range Protocols {
		up := upstream(t, proxytest.Response{Status: http.StatusTeapot})
		e := ep(int64(i+1), "rs-"+strings.TrimPrefix(string(p), "openai-"), up.URL)
		e.Protocol, e.Models = p, []string{replayModel}
		rs.ups[p], rs.name[p] = up, e.Name
		eps = append(eps, e)
	}
	rs.h = newHarness(t, Config{Endpoints: eps})
	return rs
}

// clientPath is where a client of protocol client posts a case: a Gemini
// client names the model and the stream flag in the path.
func clientPath(client Protocol, stream bool) string {
	if client != ProtocolGemini {
		return upstreamPath(client)
	}
	if stream {
		return "/v1beta/models/" + replayModel + ":streamGenerateContent?alt=sse"
	}
	return "/v1beta/models/" + replayModel + ":generateContent"
}

// check runs one case and returns what is wrong with the client's answer.
func (rs *replayer) check(rec *recording, want outcome, client Protocol, stream bool) []string {
	rs.ups[rec.proto].SetDefault(proxytest.Response{Events: rec.events()})
	body := clientBody(client, stream, want.declared(client, rec.proto))
	req, err := http.NewRequest(http.MethodPost, rs.h.front.URL+clientPath(client, stream), strings.NewReader(body))
	if err != nil {
		rs.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Ccmesh-Endpoint", rs.name[rec.proto])
	if client == ProtocolAnthropic {
		req.Header.Set("Anthropic-Version", "2023-06-01")
	}
	resp, err := rs.h.client.Do(req)
	if err != nil {
		return []string{fmt.Sprintf("request: %v", err)}
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return []string{fmt.Sprintf("read the answer: %v", err)}
	}
	got, problems := readAnswer(client, resp, buf.Bytes(), stream, client != rec.proto)
	exp := want.forClient(client, rec.proto)
	if client == ProtocolGemini && stream {
		// A Gemini stream has no part boundaries: text after text is one
		// text part to its client, however many blocks the upstream sent.
		exp = exp.joined()
	}
	if g, w := got.compare(exp), exp.compare(exp); g != w {
		problems = append(problems, fmt.Sprintf("the client got\n%s\nwant\n%s", g, w))
	}
	if len(problems) > 0 && buf.Len() < 4000 {
		problems = append(problems, "answer: "+buf.String())
	}
	return problems
}
