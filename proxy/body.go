package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ccmesh/ccmesh/internal/jsonscan"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// bodyInfo is what the proxy needs from a request body, found by one scan
// of the top-level object so the body is never decoded or re-encoded.
type bodyInfo struct {
	model      string
	modelStart int // byte span of the model value, quotes included
	modelEnd   int
	hasModel   bool
	// inPath: the model is the path's (conv.Inbound), and the body has
	// none to rewrite.
	inPath bool
	stream bool
	// Spans of the top-level members a request's session is read from
	// (session.go); zero when absent. Only the session strategy reads them.
	metadata, promptCacheKey, user span
}

// span is a byte range of the body, a JSON value.
type span struct{ start, end int }

var errNotJSON = errors.New("request body is not a JSON object")

// scanBody finds the top-level "model" and "stream" members. It checks the
// structure it walks (strings, brackets, separators), enough to refuse a
// body that is not JSON before any upstream sees it.
func scanBody(b []byte) (bodyInfo, error) {
	var info bodyInfo
	sc := scanner{b: b}
	sc.ws()
	if !sc.eat('{') {
		return info, errNotJSON
	}
	sc.ws()
	if sc.eat('}') {
		return info, sc.end()
	}
	for {
		sc.ws()
		ks, ke, err := sc.str()
		if err != nil {
			return info, err
		}
		key := b[ks+1 : ke-1]
		sc.ws()
		if !sc.eat(':') {
			return info, fmt.Errorf("%w: expected ':' at byte %d", errNotJSON, sc.i)
		}
		sc.ws()
		vs := sc.i
		if err := sc.value(0); err != nil {
			return info, err
		}
		switch string(key) {
		case "model":
			// The last member wins, as in encoding/json; a model that is
			// not a string is no model.
			info.model, info.hasModel = "", false
			if b[vs] == '"' {
				m, err := unquote(b[vs:sc.i])
				if err != nil {
					return info, err
				}
				info.model, info.modelStart, info.modelEnd, info.hasModel = m, vs, sc.i, true
			}
		case "stream":
			info.stream = string(b[vs:sc.i]) == "true"
		case "metadata":
			info.metadata = span{vs, sc.i}
		case "prompt_cache_key":
			info.promptCacheKey = span{vs, sc.i}
		case "user":
			info.user = span{vs, sc.i}
		}
		sc.ws()
		if sc.eat(',') {
			continue
		}
		if sc.eat('}') {
			return info, sc.end()
		}
		return info, fmt.Errorf("%w: expected ',' or '}' at byte %d", errNotJSON, sc.i)
	}
}

func unquote(raw []byte) (string, error) {
	if !strings.ContainsRune(string(raw), '\\') {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: model: %w", errNotJSON, err)
	}
	return s, nil
}

// fromPath takes what the inbound path says over what the body says.
func (info *bodyInfo) fromPath(in conv.Inbound) {
	if in.Model != "" {
		info.model, info.hasModel, info.inPath = in.Model, true, true
	}
	if in.StreamSaid {
		info.stream = in.Stream
	}
}

// withModel returns body with the model value replaced by m, every other
// byte untouched.
func withModel(body []byte, info bodyInfo, m string) []byte {
	q, _ := json.Marshal(m) // a string always marshals
	out := make([]byte, 0, len(body)-(info.modelEnd-info.modelStart)+len(q))
	out = append(out, body[:info.modelStart]...)
	out = append(out, q...)
	return append(out, body[info.modelEnd:]...)
}

type scanner struct {
	b []byte
	i int
}

const maxDepth = 512

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) end() error {
	s.ws()
	if s.i != len(s.b) {
		return fmt.Errorf("%w: trailing data at byte %d", errNotJSON, s.i)
	}
	return nil
}

// str scans a string starting at s.i and returns its span, quotes included.
func (s *scanner) str() (start, end int, err error) {
	start = s.i
	if !s.eat('"') {
		return 0, 0, fmt.Errorf("%w: expected string at byte %d", errNotJSON, s.i)
	}
	for s.i < len(s.b) {
		n, _ := jsonscan.Plain(s.b[s.i:])
		if s.i += n; s.i >= len(s.b) {
			break
		}
		switch c := s.b[s.i]; {
		case c == '\\':
			s.i += 2
		case c == '"':
			s.i++
			return start, s.i, nil
		case c < 0x20:
			return 0, 0, fmt.Errorf("%w: control character in string at byte %d", errNotJSON, s.i)
		default:
			s.i++
		}
	}
	return 0, 0, fmt.Errorf("%w: unterminated string", errNotJSON)
}

// value skips one JSON value.
func (s *scanner) value(depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: nested too deeply", errNotJSON)
	}
	if s.i >= len(s.b) {
		return fmt.Errorf("%w: unexpected end", errNotJSON)
	}
	switch c := s.b[s.i]; c {
	case '"':
		_, _, err := s.str()
		return err
	case '{', '[':
		return s.container(c, depth)
	default:
		start := s.i
		for s.i < len(s.b) && strings.IndexByte("+-.0123456789eEtruefalsn", s.b[s.i]) >= 0 {
			s.i++
		}
		if s.i == start {
			return fmt.Errorf("%w: unexpected %q at byte %d", errNotJSON, c, s.i)
		}
		return nil
	}
}

func (s *scanner) container(open byte, depth int) error {
	closer := byte('}')
	if open == '[' {
		closer = ']'
	}
	s.i++
	s.ws()
	if s.eat(closer) {
		return nil
	}
	for {
		s.ws()
		if open == '{' {
			if _, _, err := s.str(); err != nil {
				return err
			}
			s.ws()
			if !s.eat(':') {
				return fmt.Errorf("%w: expected ':' at byte %d", errNotJSON, s.i)
			}
			s.ws()
		}
		if err := s.value(depth + 1); err != nil {
			return err
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		if s.eat(closer) {
			return nil
		}
		return fmt.Errorf("%w: expected ',' or %q at byte %d", errNotJSON, closer, s.i)
	}
}

// readBody reads the whole body, at most limit bytes; tooLarge reports a
// body past the limit (docs/BEHAVIOUR.md#headers: 413 before any upstream).
func readBody(r io.Reader, contentLength, limit int64) (b []byte, tooLarge bool, err error) {
	if contentLength > limit {
		return nil, true, nil
	}
	size := contentLength
	if size < 0 || size > 1<<20 {
		size = 512
	}
	buf := make([]byte, 0, size+1)
	lr := io.LimitReader(r, limit+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, fmt.Errorf("read request body: %w", err)
		}
	}
	if int64(len(buf)) > limit {
		return nil, true, nil
	}
	return buf, false, nil
}
