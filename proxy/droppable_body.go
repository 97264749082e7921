package proxy

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Leaving parts out of a body is done on its bytes: one walk copies the
// body and skips the members ds names, so every other value and the order
// of members (which prompt caches see) stay as the client sent them; only
// the whitespace between members goes.

// where is the place in the body a walk is at, as far as the droppable
// paths care.
type where uint8

const (
	atOther        where = iota
	atTop                // the top-level object
	atTools              // the top-level "tools" array
	atTool               // one element of it
	atCacheControl       // the object value of any "cache_control" member
)

// dropSet is ds compiled for one walk.
type dropSet struct {
	top          map[string]bool // top-level members
	tool         map[string]bool // members of each tool
	cacheControl bool            // cache_control anywhere
	ttl          bool            // cache_control.ttl anywhere
	adaptive     bool            // thinking.adaptive
	renameMax    bool            // max_completion_tokens → max_tokens
	maxTokens    int64           // the body's max_tokens, for an adaptive budget
}

func compileDrops(ds Drops) *dropSet {
	s := &dropSet{top: map[string]bool{}, tool: map[string]bool{}}
	for _, d := range ds {
		switch p := string(d); {
		case p == "cache_control":
			s.cacheControl = true
		case p == "cache_control.ttl":
			s.ttl = true
		case p == "thinking.adaptive":
			s.adaptive = true
		case p == "max_completion_tokens":
			s.renameMax = true
		case len(p) > len("tools[].") && p[:len("tools[].")] == "tools[].":
			s.tool[p[len("tools[]."):]] = true
		case len(p) > len(dropPrefixBeta) && p[:len(dropPrefixBeta)] == dropPrefixBeta:
		default:
			s.top[p] = true
		}
	}
	return s
}

// applyDrops returns body without the parts ds names; body itself when
// none of them is there (or the body is not a JSON object: the upstream
// hears what the client sent).
func applyDrops(body []byte, ds Drops) []byte {
	if !ds.bodyDrops() {
		return body
	}
	s := compileDrops(ds)
	if s.adaptive {
		s.maxTokens = maxTokensOf(body)
	}
	w := pruner{sc: scanner{b: body}, set: s, out: make([]byte, 0, len(body))}
	w.sc.ws()
	if w.sc.i >= len(body) || body[w.sc.i] != '{' {
		return body
	}
	if err := w.value(atTop, 0); err != nil || !w.changed {
		return body
	}
	return w.out
}

type pruner struct {
	sc      scanner
	set     *dropSet
	out     []byte
	changed bool
}

// value copies the value at the scanner, pruning inside it.
func (w *pruner) value(at where, depth int) error {
	if depth > maxDepth {
		return errNotJSON
	}
	b := w.sc.b
	switch b[w.sc.i] {
	case '{':
		return w.object(at, depth)
	case '[':
		return w.array(at, depth)
	}
	start := w.sc.i
	if err := w.sc.value(depth); err != nil {
		return err
	}
	w.out = append(w.out, b[start:w.sc.i]...)
	return nil
}

func (w *pruner) array(at where, depth int) error {
	w.sc.i++
	w.out = append(w.out, '[')
	elem := atOther
	if at == atTools {
		elem = atTool
	}
	for first := true; ; first = false {
		w.sc.ws()
		if w.sc.eat(']') {
			w.out = append(w.out, ']')
			return nil
		}
		if !first {
			if !w.sc.eat(',') {
				return errNotJSON
			}
			w.out = append(w.out, ',')
			w.sc.ws()
		}
		if w.sc.i >= len(w.sc.b) {
			return errNotJSON
		}
		if err := w.value(elem, depth+1); err != nil {
			return err
		}
	}
}

func (w *pruner) object(at where, depth int) error {
	b := w.sc.b
	w.sc.i++
	w.out = append(w.out, '{')
	wrote := false // a member was copied: the next one needs a comma
	for first := true; ; first = false {
		w.sc.ws()
		if w.sc.eat('}') {
			w.out = append(w.out, '}')
			return nil
		}
		if !first {
			if !w.sc.eat(',') {
				return errNotJSON
			}
			w.sc.ws()
		}
		ks, ke, err := w.sc.str()
		if err != nil {
			return err
		}
		key := b[ks+1 : ke-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			k, err := unquote(b[ks:ke])
			if err != nil {
				return err
			}
			key = []byte(k)
		}
		w.sc.ws()
		if !w.sc.eat(':') {
			return errNotJSON
		}
		w.sc.ws()
		if w.sc.i >= len(b) {
			return errNotJSON
		}
		vs := w.sc.i
		switch {
		case w.skip(at, key):
			if err := w.sc.value(depth + 1); err != nil {
				return err
			}
			w.changed = true
			continue
		case at == atTop && string(key) == "thinking" && w.set.adaptive:
			if err := w.sc.value(depth + 1); err != nil {
				return err
			}
			v := b[vs:w.sc.i]
			switch budget, ok := adaptiveBudget(v, w.set.maxTokens); {
			case ok:
				w.member(&wrote, b[ks:ke], budget)
				w.changed = true
			case isAdaptive(v):
				w.changed = true // no room for a budget: thinking is left out
			default:
				w.member(&wrote, b[ks:ke], v)
			}
			continue
		case at == atTop && string(key) == "max_completion_tokens" && w.set.renameMax:
			if err := w.sc.value(depth + 1); err != nil {
				return err
			}
			w.member(&wrote, []byte(`"max_tokens"`), b[vs:w.sc.i])
			w.changed = true
			continue
		}
		if wrote {
			w.out = append(w.out, ',')
		}
		wrote = true
		w.out = append(w.out, b[ks:ke]...)
		w.out = append(w.out, ':')
		if err := w.value(w.child(at, key), depth+1); err != nil {
			return err
		}
	}
}

// member appends one member as key:value.
func (w *pruner) member(wrote *bool, key, value []byte) {
	if *wrote {
		w.out = append(w.out, ',')
	}
	*wrote = true
	w.out = append(w.out, key...)
	w.out = append(w.out, ':')
	w.out = append(w.out, value...)
}

func (w *pruner) skip(at where, key []byte) bool {
	s := w.set
	switch {
	case string(key) == "cache_control" && s.cacheControl:
		return true
	case at == atTop:
		return s.top[string(key)]
	case at == atTool:
		return s.tool[string(key)]
	case at == atCacheControl:
		return string(key) == "ttl" && s.ttl
	}
	return false
}

func (w *pruner) child(at where, key []byte) where {
	switch {
	case string(key) == "cache_control":
		return atCacheControl
	case at == atTop && string(key) == "tools":
		return atTools
	}
	return atOther
}

// isAdaptive reports a thinking value of type "adaptive".
func isAdaptive(v []byte) bool {
	var t struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(v, &t) == nil && t.Type == "adaptive"
}

// Anthropic's explicit thinking needs 1024 ≤ budget_tokens < max_tokens.
const (
	minThinkingBudget = 1024
	maxThinkingBudget = 31999
)

// adaptiveBudget is adaptive thinking as an explicit budget: half the
// output limit, within Anthropic's bounds; false when the limit leaves no
// room (the thinking member is then left out).
func adaptiveBudget(v []byte, maxTokens int64) ([]byte, bool) {
	if !isAdaptive(v) || maxTokens <= minThinkingBudget {
		return nil, false
	}
	budget := min(max(maxTokens/2, minThinkingBudget), maxThinkingBudget, maxTokens-1)
	return []byte(`{"type":"enabled","budget_tokens":` + strconv.FormatInt(budget, 10) + `}`), true
}

// maxTokensOf is the body's top-level max_tokens, 0 when absent.
func maxTokensOf(body []byte) int64 {
	var v struct {
		MaxTokens int64 `json:"max_tokens"`
	}
	_ = json.Unmarshal(body, &v) // a body that is no object has no limit
	return v.MaxTokens
}
