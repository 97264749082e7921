package conv

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/ccmesh/ccmesh/internal/jsonscan"
)

// Reader reads one JSON document in a single pass, for the request
// decoders: encoding/json validates its whole input before each Unmarshal
// and walks it again to decode, so nested Unmarshal calls over
// json.RawMessage parts walk a body's text several times (bench/NOTES.md,
// "Request decoding"). A Reader validates what it reads or skips as it
// goes. Its values follow encoding/json's: strings with invalid UTF-8 or
// lone surrogates read as U+FFFD, numbers as strconv parses them, null
// leaves a scalar as it was.
type Reader struct {
	data  []byte
	off   int
	depth int
	// shared: strings without escapes and raw values share data's memory
	// rather than copying it (NewSharedReader).
	shared bool
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// NewReader reads data. What it returns is its own: data may change
// afterwards.
func NewReader(data []byte) *Reader { return &Reader{data: data} }

// NewSharedReader reads data, which must not change while anything read
// from it is in use: a string without escapes, and a raw value, is a view
// of data, not a copy (a raw value's capacity ends with it, so an append
// to it copies). The request decoders read the client's body so: it lives
// as long as the request and never changes, and its text is most of a
// decoded request (bench/NOTES.md, "Translation at pass-through cost").
func NewSharedReader(data []byte) *Reader { return &Reader{data: data, shared: true} }

// Kind is the first byte of the next value ('{', '[', '"', 'n', 't', 'f',
// '-' or a digit), or 0 at the end of the input.
func (r *Reader) Kind() byte {
	r.space()
	if r.off >= len(r.data) {
		return 0
	}
	return r.data[r.off]
}

// KindName names a Kind for an error message, as encoding/json does.
func KindName(k byte) string {
	switch k {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 'n':
		return "null"
	case 't', 'f':
		return "bool"
	case 0:
		return "nothing"
	}
	return "number"
}

func (r *Reader) space() {
	for r.off < len(r.data) {
		switch r.data[r.off] {
		case ' ', '\t', '\n', '\r':
			r.off++
		default:
			return
		}
	}
}

func (r *Reader) syntax(what string) error {
	if r.off >= len(r.data) {
		return fmt.Errorf("unexpected end of JSON input (%s)", what)
	}
	return fmt.Errorf("invalid character %s %s at offset %d", quoteChar(r.data[r.off]), what, r.off)
}

func quoteChar(c byte) string {
	switch {
	case c == '\'':
		return `'\''`
	case c == '"':
		return `'"'`
	case c < 0x20 || c >= 0x7f:
		return strconv.Quote(string(rune(c)))
	}
	return "'" + string(c) + "'"
}

// End checks that nothing but space follows the document.
func (r *Reader) End() error {
	r.space()
	if r.off < len(r.data) {
		return r.syntax("after top-level value")
	}
	return nil
}

// Offset is where the next value starts, for RawSince.
func (r *Reader) Offset() int {
	r.space()
	return r.off
}

// Mark is a position to Rewind to.
type Mark struct{ off, depth int }

// Mark is where the next value starts.
func (r *Reader) Mark() Mark {
	r.space()
	return Mark{r.off, r.depth}
}

// Rewind goes back to m, to skip a value whose reading stopped at an
// error the body's validity must be checked past.
func (r *Reader) Rewind(m Mark) { r.off, r.depth = m.off, m.depth }

// RawSince is a copy of the input from start (an Offset) to here: the raw
// text of a value just read (a view of it from a NewSharedReader).
func (r *Reader) RawSince(start int) json.RawMessage {
	if r.shared {
		return json.RawMessage(r.data[start:r.off:r.off])
	}
	return append(json.RawMessage(nil), r.data[start:r.off]...)
}

// Null reads a null if one is next.
func (r *Reader) Null() (bool, error) {
	if r.Kind() != 'n' {
		return false, nil
	}
	return true, r.literal("null")
}

func (r *Reader) literal(lit string) error {
	for i := 0; i < len(lit); i++ {
		if r.off >= len(r.data) || r.data[r.off] != lit[i] {
			return r.syntax("in literal " + lit)
		}
		r.off++
	}
	return nil
}

// TypeError is a value of the wrong JSON type.
func TypeError(got byte, want string) error {
	return fmt.Errorf("cannot unmarshal %s into %s", KindName(got), want)
}

// Object reads an object, calling fn for each member with the Reader at
// its value; fn must read or skip that value. The key is valid only
// during the call. A null is no object and no error.
func (r *Reader) Object(fn func(key []byte) error) error {
	if done, err := r.enter('{', '}', "an object"); done {
		return err
	}
	for {
		if r.Kind() != '"' {
			return r.syntax("looking for beginning of object key string")
		}
		key, err := r.key()
		if err != nil {
			return err
		}
		if r.Kind() != ':' {
			return r.syntax("after object key")
		}
		r.off++
		if err := fn(key); err != nil {
			return err
		}
		if more, err := r.next('}', "after object key:value pair"); !more {
			return err
		}
	}
}

// enter starts a container that open begins and end closes; done is
// true when nothing is left to read in it: it was null, empty, of another
// type (err says which) or too deep.
func (r *Reader) enter(open, end byte, want string) (done bool, err error) {
	switch k := r.Kind(); k {
	case 'n':
		return true, r.literal("null")
	case open:
	default:
		return true, r.mismatch(k, want)
	}
	if r.depth++; r.depth > maxDepth {
		return true, errors.New("exceeded max depth")
	}
	r.off++
	if r.Kind() == end {
		r.off++
		r.depth--
		return true, nil
	}
	return false, nil
}

// next reads what follows a container's member or element: a comma
// (more is true) or end, which leaves the container.
func (r *Reader) next(end byte, after string) (more bool, err error) {
	switch r.Kind() {
	case ',':
		r.off++
		return true, nil
	case end:
		r.off++
		r.depth--
		return false, nil
	}
	return false, r.syntax(after)
}

// mismatch skips a value of kind k (checking it is JSON) that is not the
// want the caller reads.
func (r *Reader) mismatch(k byte, want string) error {
	if err := r.Skip(); err != nil {
		return err
	}
	return TypeError(k, want)
}

// key reads an object key without copying it when it has no escapes.
func (r *Reader) key() ([]byte, error) {
	start := r.off + 1
	end, plain, err := r.scanString()
	if err != nil {
		return nil, err
	}
	if plain {
		return r.data[start : end-1], nil
	}
	return []byte(unquote(r.data[start : end-1])), nil
}

// Array reads an array, calling fn with the Reader at each element; fn
// must read or skip it. A null is no array and no error.
func (r *Reader) Array(fn func(i int) error) error {
	if done, err := r.enter('[', ']', "an array"); done {
		return err
	}
	for i := 0; ; i++ {
		if r.Kind() == 0 {
			return r.syntax("looking for beginning of value")
		}
		if err := fn(i); err != nil {
			return err
		}
		if more, err := r.next(']', "after array element"); !more {
			return err
		}
	}
}

// String reads a string into *dst; a null leaves *dst as it was.
func (r *Reader) String(dst *string) error {
	switch k := r.Kind(); k {
	case 'n':
		return r.literal("null")
	case '"':
	default:
		return r.mismatch(k, "a string")
	}
	start := r.off + 1
	end, plain, err := r.scanString()
	if err != nil {
		return err
	}
	switch {
	case plain && r.shared && end-1 > start:
		*dst = unsafe.String(&r.data[start], end-1-start)
	case plain:
		*dst = string(r.data[start : end-1])
	default:
		*dst = unquote(r.data[start : end-1])
	}
	return nil
}

// scanString finds the end of the string starting at r.off (just past
// its closing quote) and moves there; plain is true when the text between
// the quotes is valid UTF-8 without escapes and can be used as it is.
func (r *Reader) scanString() (end int, plain bool, err error) {
	d := r.data
	i := r.off + 1
	plain = true
	ascii := true
	for i < len(d) {
		n, a := jsonscan.Plain(d[i:])
		ascii = ascii && a
		if i += n; i >= len(d) {
			break
		}
		c := d[i]
		switch {
		case c == '"':
			if !ascii && plain {
				plain = utf8.Valid(d[r.off+1 : i])
			}
			r.off = i + 1
			return r.off, plain, nil
		case c == '\\':
			plain = false
			if i+1 >= len(d) {
				r.off = len(d)
				return 0, false, r.syntax("in string literal")
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= len(d) || !isHex(d[j]) {
						r.off = min(j, len(d))
						return 0, false, r.syntax("in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				r.off = i + 1
				return 0, false, r.syntax("in string escape code")
			}
		case c < 0x20:
			r.off = i
			return 0, false, r.syntax("in string literal")
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			i++
		}
	}
	r.off = len(d)
	return 0, false, r.syntax("in string literal")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// unquote decodes the text of a scanned string (escapes checked), the way
// encoding/json does: invalid UTF-8 and lone surrogates become U+FFFD.
// Runs of plain bytes are copied whole, into the string's only copy.
func unquote(s []byte) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		// the text was scanned: no quote or control character is left
		j := i + jsonscan.Escapes(s[i:])
		b.Write(s[i:j])
		if i = j; i >= len(s) {
			break
		}
		if s[i] != '\\' {
			rr, size := utf8.DecodeRune(s[i:])
			i += size
			b.WriteRune(rr)
			continue
		}
		e := s[i+1]
		if e != 'u' {
			b.WriteByte(unescape(e))
			i += 2
			continue
		}
		rr := hex4(s[i+2 : i+6])
		i += 6
		if utf16.IsSurrogate(rr) {
			rr2 := utf8.RuneError
			if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
				rr2 = utf16.DecodeRune(rr, hex4(s[i+2:i+6]))
			}
			if rr2 != utf8.RuneError {
				i += 6
			}
			rr = rr2
		}
		b.WriteRune(rr)
	}
	return b.String()
}

func unescape(e byte) byte {
	switch e {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return e // '"', '\\', '/'
}

func hex4(s []byte) rune {
	var v rune
	for _, c := range s {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		v = v<<4 | rune(c)
	}
	return v
}

// Bool reads a boolean into *dst; a null leaves *dst as it was.
func (r *Reader) Bool(dst *bool) error {
	switch k := r.Kind(); k {
	case 'n':
		return r.literal("null")
	case 't':
		*dst = true
		return r.literal("true")
	case 'f':
		*dst = false
		return r.literal("false")
	default:
		return r.mismatch(k, "a bool")
	}
}

// number scans a number and returns its text.
func (r *Reader) number() ([]byte, error) {
	d, start := r.data, r.off
	i := start
	if i < len(d) && d[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case digits() == 0:
		r.off = i
		return nil, r.syntax("in numeric literal")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if digits() == 0 {
			r.off = i
			return nil, r.syntax("after decimal point in numeric literal")
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if digits() == 0 {
			r.off = i
			return nil, r.syntax("in exponent of numeric literal")
		}
	}
	r.off = i
	return d[start:i], nil
}

// numeric reads a number's text, or a null (null is true), or skips a
// value of another type, which is no want.
func (r *Reader) numeric(want string) (s []byte, null bool, err error) {
	switch k := r.Kind(); {
	case k == 'n':
		return nil, true, r.literal("null")
	case k == '-' || '0' <= k && k <= '9':
	default:
		return nil, false, r.mismatch(k, want)
	}
	s, err = r.number()
	return s, false, err
}

// Int64 reads an integer into a new *dst; a null sets *dst to nil.
func (r *Reader) Int64(dst **int64) error {
	s, null, err := r.numeric("an integer")
	if null {
		*dst = nil
	}
	if null || err != nil {
		return err
	}
	v, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil {
		return fmt.Errorf("cannot unmarshal number %s into an integer", s)
	}
	*dst = &v
	return nil
}

// Float64 reads a number into a new *dst; a null sets *dst to nil.
func (r *Reader) Float64(dst **float64) error {
	s, null, err := r.numeric("a number")
	if null {
		*dst = nil
	}
	if null || err != nil {
		return err
	}
	v, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return fmt.Errorf("cannot unmarshal number %s into a number", s)
	}
	*dst = &v
	return nil
}

// Strings reads an array of strings into *dst (a null element is "");
// a null sets *dst to nil.
func (r *Reader) Strings(dst *[]string) error {
	if r.Kind() == 'n' {
		*dst = nil
		return r.literal("null")
	}
	out := []string{}
	err := r.Array(func(int) error {
		var s string
		err := r.String(&s)
		out = append(out, s)
		return err
	})
	*dst = out
	return err
}

// Raw reads any value and returns a copy of its text.
func (r *Reader) Raw() (json.RawMessage, error) {
	start := r.Offset()
	if err := r.Skip(); err != nil {
		return nil, err
	}
	return r.RawSince(start), nil
}

// Skip reads any value, checking it, and drops it.
func (r *Reader) Skip() error {
	switch k := r.Kind(); {
	case k == '{':
		return r.Object(func([]byte) error { return r.Skip() })
	case k == '[':
		return r.Array(func(int) error { return r.Skip() })
	case k == '"':
		_, _, err := r.scanString()
		return err
	case k == 'n':
		return r.literal("null")
	case k == 't':
		return r.literal("true")
	case k == 'f':
		return r.literal("false")
	case k == '-' || '0' <= k && k <= '9':
		_, err := r.number()
		return err
	}
	return r.syntax("looking for beginning of value")
}

// FoldKey is key in ASCII lower case, for the case-insensitive match
// encoding/json makes when no member name matches exactly; ok is false
// when key has no upper-case letter (folding changes nothing).
func FoldKey(key []byte) (folded []byte, ok bool) {
	for i, c := range key {
		if 'A' <= c && c <= 'Z' {
			folded = append([]byte(nil), key...)
			for j := i; j < len(folded); j++ {
				if c := folded[j]; 'A' <= c && c <= 'Z' {
					folded[j] = c + 'a' - 'A'
				}
			}
			return folded, true
		}
	}
	return key, false
}
