package jsonscan

import (
	"testing"
	"unicode/utf8"
)

// naive is Plain and Escapes one byte at a time.
func naive(b []byte) (plain int, ascii bool, copyable int) {
	plain, copyable = -1, -1
	ascii = true
	for i, c := range b {
		stop := c == '"' || c == '\\' || c < 0x20
		if copyable < 0 && (stop || c >= utf8.RuneSelf) {
			copyable = i
		}
		if stop {
			plain = i
			break
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if plain < 0 {
		plain = len(b)
	}
	if copyable < 0 {
		copyable = len(b)
	}
	return plain, ascii, copyable
}

func check(t *testing.T, b []byte) {
	t.Helper()
	wantN, wantASCII, wantCopy := naive(b)
	n, ascii := Plain(b)
	if n != wantN || ascii != wantASCII {
		t.Errorf("Plain(%q) = %d, %t; want %d, %t", b, n, ascii, wantN, wantASCII)
	}
	if got := Escapes(b); got != wantCopy {
		t.Errorf("Escapes(%q) = %d; want %d", b, got, wantCopy)
	}
}

// Every byte value at every position of a 17-byte run (two words and a
// tail), after plain ASCII and after a multi-byte rune: the word-wise
// marks never miss a stop nor stop early.
func TestPlainEveryByteEveryPosition(t *testing.T) {
	for _, lead := range []string{"", "é"} {
		for pos := range 17 {
			for c := range 256 {
				b := []byte(lead + "abcdefghijklmnopq")[:len(lead)+17]
				b[len(lead)+pos] = byte(c)
				check(t, b)
			}
		}
	}
}

// A borrow from a stop byte must not hide an earlier one, nor a byte above
// 0x7f make a stop look earlier: pairs of interesting bytes in one word.
func TestPlainPairsInAWord(t *testing.T) {
	interesting := []byte{0, 0x1f, 0x20, 0x21, '"', 0x23, '\\', 0x5b, 0x5d, 0x7f, 0x80, 0xa0, 0xff}
	for _, x := range interesting {
		for _, y := range interesting {
			for i := range 8 {
				for j := range 8 {
					b := []byte("aaaaaaaaaaaaaaaa")
					b[i], b[8+j] = x, y
					check(t, b)
					b[j] = y
					check(t, b)
				}
			}
		}
	}
}

func FuzzPlain(f *testing.F) {
	for _, s := range []string{"", "plain text", `a"b`, "tab\there", "é\\n", "\x7f\x80\"", "0123456789abcdef\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { check(t, b) })
}

func BenchmarkPlain(b *testing.B) {
	text := []byte(string(make([]byte, 0)) + "lorem ipsum dolor sit amet, consectetur adipiscing elit " + `"`)
	for len(text) < 4096 {
		text = append(text[:len(text)-1], text...)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Plain(text)
	}
}

func TestEscapesString(t *testing.T) {
	for _, s := range []string{"", "plain", "tab\there", "é", "0123456789abcdef\"", "\x7f\x80"} {
		if got, want := EscapesString(s), Escapes([]byte(s)); got != want {
			t.Errorf("EscapesString(%q) = %d, Escapes gives %d", s, got, want)
		}
	}
}
