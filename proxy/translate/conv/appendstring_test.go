package conv

import (
	"strings"
	"testing"
)

var appendStringSeeds = []string{
	"", "plain", `quote " and \ backslash`, "tab\tnew\nline\rcr\bbs\fff", "\x00\x01\x1f\x7f",
	"<html> & </html>", "é ü 中文 😀", "\u2028\u2029", "\xff\xfe bad", "\xe2\x80", "a\xe2\x80\xa8b",
	strings.Repeat("lorem ipsum ", 40) + "\"" + strings.Repeat("x", 17),
}

func checkAppendString(t *testing.T, s string) {
	t.Helper()
	want := string(Marshal(s))
	if got := string(AppendString(nil, s)); got != want {
		t.Errorf("AppendString(%q) = %s, Marshal gives %s", s, got, want)
	}
}

func TestAppendStringIsMarshal(t *testing.T) {
	for _, s := range appendStringSeeds {
		checkAppendString(t, s)
	}
	for c := range 256 { // every byte, alone and inside a word
		checkAppendString(t, string([]byte{byte(c)}))
		checkAppendString(t, "abcdefgh"+string([]byte{byte(c)})+"ijklmnop")
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range appendStringSeeds {
		f.Add(s)
	}
	f.Fuzz(checkAppendString)
}
