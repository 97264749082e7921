package conv

import (
	"strings"
	"testing"
)

// TestCanonicalArgsFastPath: arguments already canonical are returned as
// they are, without a decode and an encode (bench/NOTES.md, "Request
// decoding"); whatever the check lets through is what the full path
// writes.
func TestCanonicalArgsFastPath(t *testing.T) {
	for _, c := range []struct {
		in   string
		fast bool
	}{
		{`{}`, true},
		{`{"file_path":"/tmp/a.go","limit":200,"offset":-1.5e+3}`, true},
		{`{"a":[1,{"b":null,"c":true}],"d":"x\"y\\z\n\t\r é 😀 <&>"}`, true},
		{`{"a":[],"b":{}}`, true},
		{`{"b":1,"a":2}`, false},
		{`{"a":1,"a":2}`, false},
		{`{"a": 1}`, false},
		{` {"a":1}`, false},
		{`{"a":"\u00e9"}`, false},
		{`{"a":"\/"}`, false},
		{`{"a\"":1}`, false},
		{`{"a":01}`, false},
		{`{"a":1.}`, false},
		{"{\"a\":\"\u2028\"}", false},
		{"{\"a\":\"\xff\"}", false},
		{`{"a":1}x`, false},
		{`{"a":1`, false},
		{`[1]`, false},
		{`{"a":tru}`, false},
		{`{"cmd":"echo ccmesh-e2e"}`, true},
		{`{"a":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, false},
	} {
		t.Run(c.in, func(t *testing.T) {
			if got := canonical(c.in); got != c.fast {
				t.Errorf("canonical(%q) = %v, want %v", c.in, got, c.fast)
			}
			if c.fast {
				if slow := canonicalSlow(c.in); slow != c.in {
					t.Errorf("the full path writes %q, not %q", slow, c.in)
				}
				if n := testing.AllocsPerRun(10, func() { _ = CanonicalArgs(c.in) }); n != 0 {
					t.Errorf("CanonicalArgs(%q) allocates %v times, want 0", c.in, n)
				}
			}
		})
	}
}

// canonicalSlow is CanonicalArgs without its fast path.
func canonicalSlow(s string) string { return CanonicalArgs(" " + s) }
