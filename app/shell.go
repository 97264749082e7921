package app

import "strings"

// shellQuote makes s one word of a POSIX shell line that nothing in it can
// break out of: single quotes, inside which nothing is special, with each '
// in s written as '\'' (end the quote, an escaped quote, quote again). Every
// value the UI or the tray puts into a line meant for a shell goes through it.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
