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
	if len(paths) > 64 {
		panic("conv.Lookup: more than 64 paths")
	}
	all := uint64(1)<<len(paths) - 1
	bad := false
	err := r.Object(func(key []byte) error { return r.lookupMember(key, paths, all, 0, vals, &bad) })
	if err != nil || bad || r.End() != nil {
		return nil, false
	}
	return vals, true
}

// lookupMember reads the value of the member key at depth (0: the top
// level) for the paths in the set live (bit i: paths[i]), keeping it where
// a path ends there and looking inside it where one goes on. No path is a
// prefix of another.
func (r *Reader) lookupMember(key []byte, paths [][]string, live uint64, depth int, vals [][]json.RawMessage, bad *bool) error {
	through := matching(paths, live, depth, key)
	if through == 0 {
		return r.Skip()
	}
	for i, p := range paths {
		if through&(1<<i) == 0 || len(p) > depth+1 {
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
		return r.Object(func(k []byte) error { return r.lookupMember(k, paths, through, depth+1, vals, bad) })
	case 'n':
		for i := range paths {
			if through&(1<<i) != 0 {
				vals[i] = vals[i][:0]
			}
		}
		return r.literal("null")
	}
	*bad = true
	return r.Skip()
}

// matching is the set of the live paths whose key at depth is key.
func matching(paths [][]string, live uint64, depth int, key []byte) uint64 {
	var out uint64
	for i, p := range paths {
		if live&(1<<i) != 0 && len(p) > depth && bytes.EqualFold(key, []byte(p[depth])) {
			out |= 1 << i
		}
	}
	return out
}
