// Package jsonscan finds the end of the plain run of a JSON string's text
// eight bytes at a time: the JSON readers of the proxy (the model scan of
// proxy/body.go) and of the codecs (proxy/translate/conv/reader.go) and the
// codecs' string writer skip that run with it instead of looking at each
// byte, which is most of what reading or writing a long prompt costs.
package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

const (
	ones = 0x0101010101010101
	high = 0x8080808080808080
)

// stops marks, in the high bit of each of w's bytes, a quote, a backslash
// or a control character (below 0x20): what ends a plain run inside a
// JSON string. A byte's mark may also be set above the first real one
// (the subtractions borrow), never below it, so the lowest mark is exact.
func stops(w uint64) uint64 {
	q := w ^ (ones * '"')
	s := w ^ (ones * '\\')
	return ((w - ones*0x20) | (q - ones) | (s - ones)) &^ w & high
}

// Plain returns the length of the longest prefix of b without a quote, a
// backslash or a control character, and whether that prefix is all ASCII.
func Plain(b []byte) (n int, ascii bool) {
	var seen uint64 // the high bits of the prefix's bytes
	for ; n+8 <= len(b); n += 8 {
		w := binary.LittleEndian.Uint64(b[n:])
		if m := stops(w); m != 0 {
			k := bits.TrailingZeros64(m) / 8
			seen |= w & (1<<(8*k) - 1)
			return n + k, seen&high == 0
		}
		seen |= w
	}
	for ; n < len(b); n++ {
		c := b[n]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		seen |= uint64(c)
	}
	return n, seen&high == 0
}

// Escapes returns the length of the longest prefix of b that a JSON
// writer copies as it is: no quote, backslash or control character, and
// ASCII (a byte of 0x80 or above needs a look at its rune: U+2028,
// U+2029 and invalid UTF-8 are written escaped or replaced).
func Escapes(b []byte) int {
	n := 0
	for ; n+8 <= len(b); n += 8 {
		w := binary.LittleEndian.Uint64(b[n:])
		if m := stops(w) | w&high; m != 0 {
			return n + bits.TrailingZeros64(m)/8
		}
	}
	for ; n < len(b); n++ {
		if c := b[n]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			break
		}
	}
	return n
}

// EscapesString is Escapes of a string, without copying it.
func EscapesString(s string) int {
	return Escapes(unsafe.Slice(unsafe.StringData(s), len(s)))
}
