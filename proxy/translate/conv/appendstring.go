package conv

import (
	"unicode/utf8"

	"github.com/ccmesh/ccmesh/internal/jsonscan"
)

// AppendString appends s as a JSON string exactly as Marshal writes it
// (encoding/json without HTML escaping: the short escapes \b \f \n \r \t,
// other control characters as \u00XX, invalid UTF-8 as \ufffd, U+2028
// and U+2029 escaped), copying its plain ASCII runs whole: a prompt's text
// is written at the speed of a copy, not a byte at a time (bench/NOTES.md,
// Translation at pass-through cost).
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		n := jsonscan.EscapesString(s[i:])
		dst = append(dst, s[i:i+n]...)
		if i += n; i >= len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// Appender is a value that writes itself as Marshal would, or says it
// cannot (ok false) and is then marshalled as usual; MarshalObject asks
// the elements of an array member.
type Appender interface {
	AppendJSON(dst []byte) (out []byte, ok bool)
}

// AppendArray writes s as encoding/json writes a slice — null when it is
// nil — each element by elem (a method expression such as
// (*block).appendJSON fits); ok is false, and dst as it was, when elem
// declines one (an Appender's array members).
func AppendArray[T any](dst []byte, s []T, elem func(*T, []byte) ([]byte, bool)) ([]byte, bool) {
	if s == nil {
		return append(dst, "null"...), true
	}
	start := len(dst)
	dst = append(dst, '[')
	for i := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = elem(&s[i], dst); !ok {
			return dst[:start], false
		}
	}
	return append(dst, ']'), true
}
