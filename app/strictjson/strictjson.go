// Package strictjson decodes the admin API's request bodies
// (docs/BEHAVIOUR.md#bad-input-and-faults) with errors a user can act on:
// what encoding/json lets through without a word — a key that names no
// field, a string that is not UTF-8 — is refused, and every refusal names
// its field. The app answers an Error as a 400 with its code and field.
package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// What encoding/json lets through without a word is refused: a key that
// names no field ("enabeld" would leave enabled as it was and answer 200)
// and a string that is not UTF-8 (decoded with U+FFFD in place of its
// bytes, a key silently damaged).

// Codes of Decode's refusals.
const (
	CodeBadJSON      = "bad_json"      // not JSON, or a value of the wrong type
	CodeUnknownField = "unknown_field" // a key that names no field
	CodeInvalidUTF8  = "invalid_utf8"  // a string that is not UTF-8
)

// Error is why a body was refused: its code, the field's JSON path ("" for
// the whole body) and a message for the user.
type Error struct {
	Code    string
	Field   string
	Message string
}

func (e *Error) Error() string { return e.Message }

func errorf(code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// checkFields walks body, which json.Unmarshal has decoded into a value of
// type t, and reports the first key that names no field of the struct it
// was decoded into, or the first string (key or value) holding bytes that
// are not UTF-8, whichever comes first in the document. Keys must match a
// field's JSON name exactly: encoding/json's case-insensitive match is
// not documented API. Maps take any key; values decoded by a type of its
// own (json.RawMessage, any) are not checked for fields.
func checkFields(body []byte, t reflect.Type) *Error {
	w := fieldWalker{dec: json.NewDecoder(bytes.NewReader(body)), bad: -1}
	if !utf8.Valid(body) {
		w.bad = firstInvalidUTF8(body)
	}
	w.dec.UseNumber()
	return w.value(t, "")
}

type fieldWalker struct {
	dec *json.Decoder
	bad int64 // offset of the first byte that is not UTF-8, or -1
}

// holdsBad reports whether the token read from start to the decoder's
// offset now holds the bad byte.
func (w *fieldWalker) holdsBad(start int64) bool {
	return w.bad >= start && w.bad < w.dec.InputOffset()
}

// value walks one JSON value that was decoded into a value of type t (nil:
// a type of its own, any keys) found at path.
func (w *fieldWalker) value(t reflect.Type, path string) *Error {
	start := w.dec.InputOffset()
	tok, err := w.dec.Token()
	if err != nil {
		return nil // json.Unmarshal has read the document; nothing more to see
	}
	t = checkedType(t)
	switch tok {
	case json.Delim('{'):
		var fields map[string]reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		}
		for w.dec.More() {
			kstart := w.dec.InputOffset()
			ktok, err := w.dec.Token()
			if err != nil {
				return nil
			}
			key, _ := ktok.(string)
			kpath := joinPath(path, key)
			if w.holdsBad(kstart) {
				return invalidUTF8(kpath)
			}
			var elem reflect.Type
			switch {
			case fields != nil:
				ft, ok := fields[key]
				if !ok {
					return unknownField(kpath, key, fields)
				}
				elem = ft
			case t != nil && t.Kind() == reflect.Map:
				elem = t.Elem()
			}
			if err := w.value(elem, kpath); err != nil {
				return err
			}
		}
		_, _ = w.dec.Token() // '}'
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; w.dec.More(); i++ {
			if err := w.value(elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, _ = w.dec.Token() // ']'
	case nil: // null
	default:
		if _, ok := tok.(string); ok && w.holdsBad(start) {
			return invalidUTF8(path)
		}
	}
	return nil
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkedType is t without its pointers, or nil when its values decode by
// their own rules (an interface, a json.Unmarshaler such as
// json.RawMessage): their keys are not fields.
func checkedType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface {
		return nil
	}
	if p := reflect.PointerTo(t); p.Implements(jsonUnmarshaler) || p.Implements(textUnmarshaler) {
		return nil
	}
	return t
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields maps the JSON names of struct t's fields to their types as
// encoding/json decodes them: a field of t wins over one of the same name
// in a struct t embeds.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	out := map[string]reflect.Type{}
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	for _, e := range embedded {
		for name, ft := range jsonFields(e) {
			if _, ok := out[name]; !ok {
				out[name] = ft
			}
		}
	}
	fieldCache.Store(t, out)
	return out
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func unknownField(path, key string, fields map[string]reflect.Type) *Error {
	msg := fmt.Sprintf("unknown field %q: ccmesh knows no field of that name here; check its spelling", path)
	if near := nearestName(key, fields); near != "" {
		msg = fmt.Sprintf("unknown field %q: did you mean %q?", path, near)
	}
	return &Error{Code: CodeUnknownField, Field: path, Message: msg}
}

func invalidUTF8(path string) *Error {
	return &Error{Code: CodeInvalidUTF8, Field: path,
		Message: fmt.Sprintf("field %q is not valid UTF-8 text; type or paste it again", path)}
}

// nearestName is the field name closest to key, if one is close enough to
// be a typo of it: the same but for case, or at most two edits away.
func nearestName(key string, fields map[string]reflect.Type) string {
	if len(key) > 64 { // no name is that long; and the distance costs len(key) × len(name)
		return ""
	}
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	slices.Sort(names)
	best, bestDist := "", 3
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return n
		}
		if d := editDistance(key, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// firstInvalidUTF8 is the offset of the first byte of b that does not
// start a valid UTF-8 sequence.
func firstInvalidUTF8(b []byte) int64 {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return int64(i)
		}
		i += size
	}
	return -1
}

// Decode decodes one JSON value into v, with errors a user can act on:
// a wrong type names the field (bad_json), and so do a key v has no field
// for (unknown_field) and a string that is not UTF-8 (invalid_utf8), which
// encoding/json would skip and mangle without a word (checkFields).
func Decode(body []byte, v any) *Error {
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			field := jsonPath(te.Field)
			return &Error{Code: CodeBadJSON, Field: field,
				Message: fmt.Sprintf("field %q must be %s, not a JSON %s", field, jsonKind(te.Type), te.Value)}
		case te != nil && te.Struct == "":
			return errorf(CodeBadJSON, "", "the request body must be %s, not a JSON %s", jsonKind(te.Type), te.Value)
		}
		return errorf(CodeBadJSON, "", "request body is not valid JSON: %v", err)
	}
	return checkFields(body, reflect.TypeOf(v))
}

// jsonPath is a decoding error's field path with JSON names only:
// encoding/json also lists the Go name of each embedded struct on the way
// (endpointInput's EndpointPatch), and no JSON name of the admin API
// starts with an upper-case letter.
func jsonPath(path string) string {
	parts := strings.Split(path, ".")
	out := parts[:0]
	for _, p := range parts {
		if p != "" && unicode.IsUpper(rune(p[0])) {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ".")
}

// jsonKind names what JSON a Go type reads, for bad_json messages: users
// write JSON, so that is the language the message speaks.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	}
	return "a " + t.String()
}
