package app

import "strings"

// shellQuote makes s one word of a POSIX shell line that nothing in it can
// break out of: s inside single quotes, where nothing is special, with each
// single quote of s written as quote, backslash, quote, quote (end the
// quoted part, an escaped quote, start another). Every value the UI or the
// tray puts into a line meant for a shell goes through it.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
