package conv

import (
	"encoding/json"
	"testing"
)

// TestReaderValidates holds Reader to encoding/json on what is valid JSON.
func TestReaderValidates(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+3`, `-12.0E-2`, `"a"`, ` {"a" : [1, "b", null, {"c":{}}] } `,
		`"\u00e9\ud83d\ude00\n\"\\\/"`, `{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `01`, `1.`, `1e`, `-`, `.5`, `+1`,
		`"\x"`, `"\u12"`, "\"a\nb\"", `"abc`, `{"a":1} x`, `nul`, `tru`, `[`, `{`, ``, ` `, `{"a":1 "b":2}`, `[1 2]`,
		"\"\xff\"", `{1:2}`, `"\ud800"`, `NaN`,
	} {
		t.Run(in, func(t *testing.T) {
			r := NewReader([]byte(in))
			err := r.Skip()
			if err == nil {
				err = r.End()
			}
			if got, want := err == nil, json.Valid([]byte(in)); got != want {
				t.Errorf("Reader accepts %q: %v (%v), want %v", in, got, err, want)
			}
		})
	}
}

// TestReaderStrings holds Reader's strings to encoding/json's, invalid
// UTF-8 and lone surrogates included.
func TestReaderStrings(t *testing.T) {
	for _, in := range []string{
		`"plain"`, `"é ü 😀"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800"`, `"a\tb\nc\\d\"e\/f\b\f\r"`,
		"\"\xff\xfe a\"", "\"\xe2\x82\"", `"\u0000"`, `""`, "\"\xed\xa0\x80\"",
	} {
		t.Run(in, func(t *testing.T) {
			var want string
			if err := json.Unmarshal([]byte(in), &want); err != nil {
				t.Fatal(err)
			}
			var got string
			if err := NewReader([]byte(in)).String(&got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("String(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

// TestReaderNumbers holds Reader's numbers to encoding/json's.
func TestReaderNumbers(t *testing.T) {
	for _, c := range []struct {
		in      string
		wantErr bool
	}{
		{`5`, false}, {`-0`, false}, {`1.5`, true}, {`1e3`, true}, {`9223372036854775808`, true}, {`"5"`, true}, {`null`, false},
	} {
		t.Run(c.in, func(t *testing.T) {
			var p *int64
			err := NewReader([]byte(c.in)).Int64(&p)
			var want *int64
			werr := json.Unmarshal([]byte(c.in), &want)
			if (err != nil) != c.wantErr || (werr != nil) != c.wantErr {
				t.Fatalf("Int64(%s) error = %v, encoding/json %v, want an error: %v", c.in, err, werr, c.wantErr)
			}
			if err == nil && (p == nil) != (want == nil) || p != nil && *p != *want {
				t.Errorf("Int64(%s) = %v, want %v", c.in, p, want)
			}
		})
	}
}
