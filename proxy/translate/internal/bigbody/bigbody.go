// Package bigbody builds the large requests the codecs' benchmarks
// translate: a Claude Code-like conversation of 200 turns (bench/NOTES.md,
// "Request decoding"). Only tests and benchmarks import it.
package bigbody

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/gemini"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// Turns is how many assistant/user exchanges follow the captured start.
const Turns = 200

var (
	once   sync.Once
	bodies map[conv.Protocol][]byte
	err    error
)

// Body returns the big request in protocol p: the Anthropic one is built
// from testdata/captured/claude-code-turn2.json (its system prompt, tools
// and first turns) followed by Turns generated exchanges; the others are
// that request as their codecs write it.
func Body(p conv.Protocol) ([]byte, error) {
	once.Do(build)
	if err != nil {
		return nil, err
	}
	b, ok := bodies[p]
	if !ok {
		return nil, fmt.Errorf("bigbody: no body for %s", p)
	}
	return b, nil
}

func build() {
	a, e := claudeCode()
	if e != nil {
		err = e
		return
	}
	bodies = map[conv.Protocol][]byte{anthropic.Protocol: a}
	r, e := anthropic.Codec.DecodeRequest(a)
	if e != nil {
		err = fmt.Errorf("bigbody: decode: %w", e)
		return
	}
	for _, c := range []conv.Codec{chat.Codec, responses.Codec, gemini.Codec} {
		out := *r
		b, e := c.EncodeRequest(&out)
		if e != nil {
			err = fmt.Errorf("bigbody: encode %s: %w", c.Protocol(), e)
			return
		}
		bodies[c.Protocol()] = b
	}
}

func claudeCode() ([]byte, error) {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "captured", "claude-code-turn2.json")
	raw, e := os.ReadFile(path)
	if e != nil {
		return nil, fmt.Errorf("bigbody: read captured body: %w", e)
	}
	// Members stay raw and in the order Claude Code wrote them (type
	// first in every block); only the top level is re-ordered.
	var top map[string]json.RawMessage
	if e := json.Unmarshal(raw, &top); e != nil {
		return nil, fmt.Errorf("bigbody: decode captured body: %w", e)
	}
	var msgs []json.RawMessage
	if e := json.Unmarshal(top["messages"], &msgs); e != nil {
		return nil, fmt.Errorf("bigbody: decode captured messages: %w", e)
	}
	for i := range Turns {
		msgs = append(msgs, assistant(i), user(i))
	}
	top["messages"] = conv.Marshal(msgs)
	return conv.Marshal(top), nil
}

// prose is deterministic text with the escapes real bodies carry
// (newlines, quotes, tabs, a little non-ASCII).
func prose(i, n int) string {
	var sb strings.Builder
	for j := 0; sb.Len() < n; j++ {
		fmt.Fprintf(&sb, "Line %d.%d: the \"handler\" in proxy/attempt.go returns early\twhen the breaker is open — see näive case.\n", i, j)
	}
	return sb.String()
}

func str(s string) string { return string(conv.Marshal(s)) }

func assistant(i int) json.RawMessage {
	var blocks []string
	if i%4 == 0 {
		blocks = append(blocks, fmt.Sprintf(`{"type":"thinking","thinking":%s,"signature":%s}`, str(prose(i, 600)), str(strings.Repeat("EqQBCkgIBhABGAIiQH", 20))))
	}
	blocks = append(blocks,
		fmt.Sprintf(`{"type":"text","text":%s}`, str(prose(i, 500))),
		fmt.Sprintf(`{"type":"tool_use","id":"toolu_%04d","name":"Read","input":{"file_path":"/tmp/ccmesh-capture/src/file%d.go","limit":200,"offset":%d}}`, i, i, i),
	)
	return json.RawMessage(`{"role":"assistant","content":[` + strings.Join(blocks, ",") + `]}`)
}

func user(i int) json.RawMessage {
	cc := ""
	if i == Turns-1 {
		cc = `,"cache_control":{"type":"ephemeral"}`
	}
	return json.RawMessage(fmt.Sprintf(`{"role":"user","content":[{"tool_use_id":"toolu_%04d","type":"tool_result","content":%s%s}]}`, i, str(prose(i, 3600)), cc))
}
