package conv

import (
	"bytes"
	"encoding/json"
)

// Lookup finds, in one pass over the JSON document b that checks all of
// it, the value at each path: a top-level member's key, or a member's key
// then the key inside that member's object. A key matches as
// encoding/json matches a struct field, ignoring ASCII case, the last
// match winning. vals[i] is the raw text of paths[i]'s
// value (a slice of b), nil where the document has none. ok is false when
// b is not JSON or not an object, or a path passes through a value that is
// neither an object nor null: where json.Unmarshal into a struct of those
// fields fails, as the usage and model readers built on it did
// (UsageMember, proxy/answered.go).
//
// A body of many kilobytes is walked once, instead of checked then decoded
// whole by encoding/json for a few small members (bench/NOTES.md,
// Translation).
func Lookup(b []byte, paths ...[]string) (vals [][]json.RawMessage, ok bool) {
	vals = make([][]json.RawMessage, len(paths))
	r := NewReader(b)
	if r.Kind() != '{' {
		return nil, false
	}
	bad := false
	err := r.Object(func(key []byte) error { return r.lookupMember(key, paths, 0, vals, &bad) })
	if err != nil || bad || r.End() != nil {
		return nil, false
	}
	return vals, true
}

// lookupMember reads the value of the member key at depth (0: the top
// level), keeping it where a path ends there and looking inside it where
// one goes on. No path is a prefix of another.
func (r *Reader) lookupMember(key []byte, paths [][]string, depth int, vals [][]json.RawMessage, bad *bool) error {
	through := matching(paths, depth, key)
	if through == nil {
		return r.Skip()
	}
	for i, p := range through {
		if p == nil || len(p) > depth+1 {
			continue
		}
		start := r.Offset()
		if err := r.Skip(); err != nil {
			return err
		}
		vals[i] = append(vals[i], json.RawMessage(r.data[start:r.off]))
		return nil
	}
	switch r.Kind() {
	case '{':
		return r.Object(func(k []byte) error { return r.lookupMember(k, through, depth+1, vals, bad) })
	case 'n':
		for i, p := range through {
			if p != nil {
				vals[i] = vals[i][:0]
			}
		}
		return r.literal("null")
	}
	*bad = true
	return r.Skip()
}

// matching is the paths whose key at depth is key (nil in the place of the
// others, so that indexes stay those of vals), or nil when none is.
func matching(paths [][]string, depth int, key []byte) [][]string {
	var out [][]string
	for i, p := range paths {
		if len(p) > depth && bytes.EqualFold(key, []byte(p[depth])) {
			if out == nil {
				out = make([][]string, len(paths))
			}
			out[i] = p
		}
	}
	return out
}
