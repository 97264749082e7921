package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// outcome is what an answer carries, in the neutral model: the part of it
// TestRealStreams compares.
type outcome struct {
	text, reasoning []string // the non-empty text and reasoning parts
	calls           []conv.Part
	stop            conv.StopReason
	usage           conv.Usage
	failed          bool               // it ended in an error, or was cut
	raw             map[string]rawCall // a Responses recording's calls, by call id
}

func outcomeOf(c *conv.Collect, complete bool) outcome {
	resp, _ := c.Response()
	o := outcomeOfResponse(resp)
	o.failed = c.Err != nil || !complete
	return o
}

func outcomeOfResponse(resp *conv.Response) outcome {
	var o outcome
	for _, p := range resp.Parts {
		switch {
		case p.Kind == conv.PartText && p.Text != "":
			o.text = append(o.text, p.Text)
		case p.Kind == conv.PartReasoning && p.Text != "":
			o.reasoning = append(o.reasoning, p.Text)
		case p.Kind == conv.PartToolCall:
			o.calls = append(o.calls, conv.Part{CallID: p.CallID, Name: p.Name, Args: conv.CanonicalArgs(p.Args)})
		}
	}
	o.stop, o.usage = resp.Stop, resp.Usage
	if o.stop == "" {
		o.stop = conv.StopEnd
	}
	return o
}

// render writes o for a comparison with want: an error is only an error;
// usage counts only when want has some (as every protocol carries it).
func (o outcome) render(want outcome, exact bool) string {
	if want.failed || o.failed {
		return fmt.Sprintf("failed: %v", o.failed)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "text: %q\nreasoning: %q\n", strings.Join(o.text, "\n\n"), strings.Join(o.reasoning, "\n\n"))
	for _, c := range o.calls {
		fmt.Fprintf(&b, "call: %s %s\n", c.Name, c.Args)
	}
	fmt.Fprintf(&b, "stop: %s\n", o.stop)
	switch {
	case exact:
		fmt.Fprintf(&b, "usage: %+v\n", o.usage)
	case !want.usage.IsZero():
		u := o.usage
		fmt.Fprintf(&b, "usage: prompt %d (cached %d) output %d\n", u.PromptTotal(), u.CacheRead, u.Output)
	}
	return b.String()
}

func (o outcome) compare(want outcome) string { return o.render(want, false) }

// neutral is o as a .want.json states it.
func (o outcome) neutral() string { return o.render(outcome{}, true) }

// wantFile is a reduction's committed answer (TestRealStreams and
// e2e/clients/test/realstreams.test.js read it): the recording decoded.
type wantFile struct {
	Text      string `json:"text"`
	Reasoning string `json:"reasoning"`
	Calls     []struct {
		Name string `json:"name"`
		Args any    `json:"args"`
	} `json:"calls"`
	Stop  string `json:"stop"`
	Usage struct {
		Input      int64 `json:"input"`
		Output     int64 `json:"output"`
		CacheRead  int64 `json:"cache_read"`
		CacheWrite int64 `json:"cache_write"`
		Reasoning  int64 `json:"reasoning"`
	} `json:"usage"`
	Error bool `json:"error"`
}

func (w *wantFile) normal() string {
	o := outcome{stop: conv.StopReason(w.Stop), failed: w.Error}
	if w.Text != "" {
		o.text = []string{w.Text}
	}
	if w.Reasoning != "" {
		o.reasoning = []string{w.Reasoning}
	}
	for _, c := range w.Calls {
		o.calls = append(o.calls, conv.Part{Name: c.Name, Args: conv.CanonicalArgs(string(conv.Marshal(c.Args)))})
	}
	u := w.Usage
	o.usage = conv.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Reasoning: u.Reasoning}
	return o.neutral()
}

// toolDecl is a tool a case's client declares.
type toolDecl struct {
	name, namespace string
	custom          bool
}

// hostedFor reports whether call c is the upstream's own as a client of
// protocol client sees it: a Responses custom_tool_call towards a client
// that cannot declare custom tools (docs/BEHAVIOUR.md#translation).
func (o outcome) hostedFor(c conv.Part, client Protocol) bool {
	return client != ProtocolOpenAIResponses && o.raw[c.CallID].typ == "custom_tool_call"
}

// declared is what the client declares: every call of the recording, as
// the client's protocol declares such a tool.
func (o outcome) declared(client, upstream Protocol) []toolDecl {
	var out []toolDecl
	seen := map[string]bool{}
	for _, c := range o.calls {
		raw := o.raw[c.CallID]
		d := toolDecl{name: c.Name}
		switch {
		case o.hostedFor(c, client) && client != upstream:
			continue
		case raw.namespace != "" && client == ProtocolOpenAIResponses:
			d = toolDecl{name: raw.name, namespace: raw.namespace}
		case raw.namespace != "":
			d.name = raw.name
		case raw.typ == "custom_tool_call":
			d.custom = true
		}
		if k := d.namespace + "/" + d.name; !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}

// forClient is what a client of protocol client must get: the same
// answer through a pass-through; through a translation, the calls it can
// run under the names it declared and the stop reason its protocol has.
func (o outcome) forClient(client, upstream Protocol) outcome {
	if client == upstream {
		return o
	}
	e := o
	e.calls = nil
	for _, c := range o.calls {
		if o.hostedFor(c, client) {
			continue
		}
		if raw := o.raw[c.CallID]; raw.namespace != "" && client != ProtocolOpenAIResponses {
			c.Name = raw.name
		}
		e.calls = append(e.calls, c)
	}
	called := len(e.calls) > 0
	switch s := e.stop; {
	case called && (s == conv.StopEnd || s == conv.StopToolUse):
		e.stop = conv.StopToolUse
	case s == conv.StopToolUse:
		e.stop = conv.StopEnd // no call the client can run: the stop follows the text
	case (client == ProtocolOpenAIChat || client == ProtocolGemini) && s != conv.StopMaxTokens && s != conv.StopRefusal,
		client == ProtocolOpenAIResponses && s != conv.StopMaxTokens:
		e.stop = conv.StopEnd
	}
	if called && client != ProtocolAnthropic && e.stop != conv.StopMaxTokens && e.stop != conv.StopRefusal {
		e.stop = conv.StopToolUse
	}
	return e
}

// joined is o with its text parts and its reasoning parts each run
// together, as one part of each reads after a Gemini stream.
func (o outcome) joined() outcome {
	if len(o.text) > 1 {
		o.text = []string{strings.Join(o.text, "")}
	}
	if len(o.reasoning) > 1 {
		o.reasoning = []string{strings.Join(o.reasoning, "")}
	}
	return o
}

// clientBody is a case's request in the client's protocol.
func clientBody(client Protocol, stream bool, tools []toolDecl) string {
	schema := json.RawMessage(`{"type":"object","properties":{}}`)
	req := map[string]any{"model": replayModel, "stream": stream}
	var ts []any
	switch client {
	case ProtocolAnthropic:
		req["max_tokens"] = 1024
		req["messages"] = []any{map[string]any{"role": "user", "content": "hi"}}
		for _, d := range tools {
			ts = append(ts, map[string]any{"name": d.name, "input_schema": schema})
		}
	case ProtocolOpenAIChat:
		req["messages"] = []any{map[string]any{"role": "user", "content": "hi"}}
		if stream {
			req["stream_options"] = map[string]any{"include_usage": true}
		}
		for _, d := range tools {
			ts = append(ts, map[string]any{"type": "function", "function": map[string]any{"name": d.name, "parameters": schema}})
		}
	case ProtocolGemini:
		return geminiBody(tools)
	case ProtocolOpenAIResponses:
		req["input"] = "hi"
		for _, d := range tools {
			switch {
			case d.custom:
				ts = append(ts, map[string]any{"type": "custom", "name": d.name})
			case d.namespace != "":
				ts = append(ts, map[string]any{"type": "namespace", "name": d.namespace, "description": "tools",
					"tools": []any{map[string]any{"type": "function", "name": d.name, "parameters": schema}}})
			default:
				ts = append(ts, map[string]any{"type": "function", "name": d.name, "parameters": schema})
			}
		}
	}
	if len(ts) > 0 {
		req["tools"] = ts
	}
	return string(conv.Marshal(req))
}

// geminiBody is a case's generateContent request: the model and the
// stream flag are in its path (clientPath).
func geminiBody(tools []toolDecl) string {
	req := map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}}}}
	var fns []any
	for _, d := range tools {
		fns = append(fns, map[string]any{"name": d.name, "parameters": map[string]any{"type": "object", "properties": map[string]any{}}})
	}
	if len(fns) > 0 {
		req["tools"] = []any{map[string]any{"functionDeclarations": fns}}
	}
	return string(conv.Marshal(req))
}

// readAnswer decodes the client's answer with the client protocol's codec
// and reports what makes it invalid for that protocol (checked on the
// events ccmesh wrote itself, translated).
func readAnswer(client Protocol, resp *http.Response, body []byte, stream, translated bool) (outcome, []string) {
	codec := translate.Codec(conv.Protocol(client))
	ctype := resp.Header.Get("Content-Type")
	if resp.StatusCode != http.StatusOK {
		if msg := errorShape(client, body); msg != "" {
			return outcome{failed: true}, []string{fmt.Sprintf("HTTP %d: %s", resp.StatusCode, msg)}
		}
		return outcome{failed: true}, nil
	}
	if !stream {
		if !strings.HasPrefix(ctype, "application/json") {
			return outcome{}, []string{"a plain answer of type " + ctype}
		}
		r, err := codec.DecodeResponse(body)
		if err != nil {
			return outcome{failed: true}, []string{fmt.Sprintf("the client's codec cannot read the answer: %v", err)}
		}
		return outcomeOfResponse(r), nil
	}
	if !strings.HasPrefix(ctype, "text/event-stream") {
		return outcome{}, []string{"a streamed answer of type " + ctype}
	}
	dec, c := codec.StreamDecoder(), conv.NewCollect()
	v := newStreamCheck(client)
	sr := newSSEReader(bytes.NewReader(body))
	var problems []string
	decoded := true
	for {
		raw, err := sr.next()
		if errors.Is(err, io.EOF) && len(bytes.TrimSpace(raw)) == 0 {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return outcome{failed: true}, []string{fmt.Sprintf("read the stream: %v", err)}
		}
		name, data := parseEvent(raw)
		if data == nil {
			continue
		}
		if translated {
			if p := v.event(name, data); p != "" {
				problems = append(problems, p)
			}
		}
		if decoded {
			if err := dec.Decode(name, data, c.Add); err != nil {
				decoded = false
				if translated {
					problems = append(problems, fmt.Sprintf("the client's codec cannot read event %q: %v", name, err))
				}
			}
		}
		if err != nil {
			break
		}
	}
	if translated {
		if p := v.end(); p != "" {
			problems = append(problems, p)
		}
	}
	complete := decoded && dec.End(c.Add)
	return outcomeOf(c, complete), problems
}
