package clients

import (
	"errors"
	"regexp"
	"strings"
)

// Gemini CLI reads its variables from a .env file with the dotenv
// package's parser. These functions read such a file the way that parser
// does, so that Connect changes only the assignments it means to and can
// check that every other variable still reads the same.

// dotenvLine is dotenv's own line pattern, with a group added around the
// separator: the key, the separator (= or ": "), and the value — quoted
// ('…', "…", `…`, which may span lines) or bare up to a # or the line's
// end. An "export " before the key is allowed.
var dotenvLine = regexp.MustCompile("(?m)^\\s*(?:export\\s+)?([\\w.-]+)(\\s*=\\s*?|:\\s+?)(\\s*'(?:\\\\'|[^'])*'|\\s*\"(?:\\\\\"|[^\"])*\"|\\s*`(?:\\\\`|[^`])*`|[^#\\r\\n]+)?\\s*(?:#.*)?$")

// dotenvAssign is one assignment in a .env text: the key, and where the
// assignment's key and value are (from the key to the value's end, or
// the separator's when there is no value).
type dotenvAssign struct {
	key        string
	start, end int
}

// dotenvAssignments finds the assignments in text. Offsets are in text
// itself: dotenv reads \r\n and \r as \n, so each \r is read as a \n,
// which keeps every offset and the same matches.
func dotenvAssignments(text string) []dotenvAssign {
	norm := strings.ReplaceAll(text, "\r", "\n")
	var out []dotenvAssign
	for _, m := range dotenvLine.FindAllStringSubmatchIndex(norm, -1) {
		a := dotenvAssign{key: norm[m[2]:m[3]], start: m[2], end: m[5]}
		if m[6] >= 0 {
			a.end = m[6] + len(strings.TrimRight(norm[m[6]:m[7]], " \t"))
		}
		out = append(out, a)
	}
	return out
}

// dotenvParse is dotenv's parse: each key's value, the last assignment
// winning; quotes stripped, and \n and \r expanded inside double quotes.
func dotenvParse(text string) map[string]string {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	out := map[string]string{}
	for _, m := range dotenvLine.FindAllStringSubmatch(text, -1) {
		v := strings.TrimSpace(m[3])
		quote := byte(0)
		if v != "" {
			quote = v[0]
		}
		if len(v) >= 2 && strings.IndexByte("'\"`", v[0]) >= 0 && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		if quote == '"' {
			v = strings.ReplaceAll(strings.ReplaceAll(v, `\n`, "\n"), `\r`, "\r")
		}
		out[m[1]] = v
	}
	return out
}

// dotenvQuote is v as a dotenv value that reads back as v: in single
// quotes (nothing inside is special), else in backquotes, else in double
// quotes (where \n and \r would be expanded, so no backslash may be in
// v), else bare (no #, no space at either end, no quote first). A value
// none of them can carry is an error.
func dotenvQuote(v string) (string, error) {
	if strings.ContainsAny(v, "\r\n") {
		return "", errors.New("a value with a line break")
	}
	for _, q := range []string{"'", "`"} {
		if !strings.Contains(v, q) {
			return q + v + q, nil
		}
	}
	if !strings.ContainsAny(v, `"\`) {
		return `"` + v + `"`, nil
	}
	if !strings.Contains(v, "#") && strings.TrimSpace(v) == v && v != "" && strings.IndexByte("'\"`", v[0]) < 0 {
		return v, nil
	}
	return "", errors.New("a value no dotenv quoting carries")
}

// editDotenv sets each of keys (in that order) to its value in text: every
// assignment of the key is rewritten in place as KEY='value' — an
// "export " before it, its indentation and a comment after it stay — and
// a key not assigned is added at the end. Every other byte is kept.
func editDotenv(text string, keys []string, values map[string]string) (string, error) {
	quoted := map[string]string{}
	for _, k := range keys {
		q, err := dotenvQuote(values[k])
		if err != nil {
			return "", err
		}
		quoted[k] = k + "=" + q
	}
	var b strings.Builder
	seen := map[string]bool{}
	at := 0
	for _, a := range dotenvAssignments(text) {
		line, ok := quoted[a.key]
		if !ok {
			continue
		}
		b.WriteString(text[at:a.start])
		b.WriteString(line)
		at, seen[a.key] = a.end, true
	}
	b.WriteString(text[at:])
	out := b.String()
	for _, k := range keys {
		if seen[k] {
			continue
		}
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += quoted[k] + "\n"
	}
	return out, nil
}

// checkDotenv checks that proposed reads as current does but for keys,
// which read as values: the edit changed nothing it did not mean to.
func checkDotenv(current, proposed string, values map[string]string) error {
	before, after := dotenvParse(current), dotenvParse(proposed)
	for k, v := range values {
		if after[k] != v {
			return errors.New(k + " would not read as the value ccmesh sets")
		}
		delete(after, k)
		delete(before, k)
	}
	if len(before) != len(after) {
		return errors.New("another variable would be added or lost")
	}
	for k, v := range before {
		if w, ok := after[k]; !ok || w != v {
			return errors.New(k + " would read differently")
		}
	}
	return nil
}
