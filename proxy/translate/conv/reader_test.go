package conv

import (
	"bytes"
	"encoding/json"
	"testing"
	"unsafe"
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

// TestSharedReader: a NewSharedReader's plain strings and raw values are
// views of its input (no copy), a string with escapes is still its own,
// an append to a raw value does not write into the input, and a
// NewReader's values are copies that outlive a change to the input.
func TestSharedReader(t *testing.T) {
	in := []byte(`{"plain":"hello","esc":"a\nb","raw":{"x":1},"tail":"!"}`)
	within := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		lo := uintptr(unsafe.Pointer(&in[0]))
		return p >= lo && p < lo+uintptr(len(in))
	}
	read := func(r *Reader) (plain, esc string, raw json.RawMessage) {
		t.Helper()
		err := r.Object(func(key []byte) error {
			var err error
			switch string(key) {
			case "plain":
				err = r.String(&plain)
			case "esc":
				err = r.String(&esc)
			case "raw":
				raw, err = r.Raw()
			default:
				err = r.Skip()
			}
			return err
		})
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return plain, esc, raw
	}

	plain, esc, raw := read(NewSharedReader(in))
	if plain != "hello" || esc != "a\nb" || string(raw) != `{"x":1}` {
		t.Fatalf("shared read %q %q %s", plain, esc, raw)
	}
	if !within(plain) || !within(unsafe.String(&raw[0], len(raw))) {
		t.Error("a shared reader copied a plain string or a raw value")
	}
	if within(esc) {
		t.Error("a string with an escape aliases the input, which holds it escaped")
	}
	if cap(raw) != len(raw) {
		t.Errorf("a shared raw value has room past its end (cap %d, len %d): an append would write into the input", cap(raw), len(raw))
	}
	_ = append(raw, '?')
	if !bytes.Equal(in, []byte(`{"plain":"hello","esc":"a\nb","raw":{"x":1},"tail":"!"}`)) {
		t.Errorf("an append to a shared raw value wrote into the input: %s", in)
	}

	plain, _, raw = read(NewReader(in))
	copy(in, bytes.Repeat([]byte{'#'}, len(in)))
	if plain != "hello" || string(raw) != `{"x":1}` {
		t.Errorf("NewReader's values changed with the input: %q %s", plain, raw)
	}
}
