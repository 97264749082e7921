package conv

import "unicode/utf8"

// canonical reports whether s is an object exactly as CanonicalArgs
// writes it, checked without decoding: no space outside strings, keys
// without escapes in strictly ascending order, strings of valid UTF-8
// whose escapes are ones the encoder writes the same way, numbers of
// JSON's grammar (CanonicalArgs keeps them as written). False only costs
// the full decode and encode.
func canonical(s string) bool {
	if len(s) < 2 || s[0] != '{' {
		return false
	}
	c := canonChecker{s: s}
	return c.object() && c.i == len(s)
}

type canonChecker struct {
	s     string
	i     int
	depth int
}

// maxCanonDepth bounds the check's recursion; deeper arguments take the
// slow path.
const maxCanonDepth = 100

func (c *canonChecker) next(b byte) bool {
	if c.i < len(c.s) && c.s[c.i] == b {
		c.i++
		return true
	}
	return false
}

func (c *canonChecker) object() bool {
	if c.depth++; c.depth > maxCanonDepth {
		return false
	}
	defer func() { c.depth-- }()
	c.i++ // '{'
	if c.next('}') {
		return true
	}
	prev, first := "", true
	for {
		start := c.i + 1
		if !c.next('"') || !c.str(true) {
			return false
		}
		key := c.s[start : c.i-1]
		if !first && key <= prev {
			return false
		}
		prev, first = key, false
		if !c.next(':') || !c.value() {
			return false
		}
		if c.next('}') {
			return true
		}
		if !c.next(',') {
			return false
		}
	}
}

func (c *canonChecker) array() bool {
	if c.depth++; c.depth > maxCanonDepth {
		return false
	}
	defer func() { c.depth-- }()
	c.i++ // '['
	if c.next(']') {
		return true
	}
	for {
		if !c.value() {
			return false
		}
		if c.next(']') {
			return true
		}
		if !c.next(',') {
			return false
		}
	}
}

func (c *canonChecker) value() bool {
	if c.i >= len(c.s) {
		return false
	}
	switch b := c.s[c.i]; {
	case b == '{':
		return c.object()
	case b == '[':
		return c.array()
	case b == '"':
		c.i++
		return c.str(false)
	case b == 't':
		return c.lit("true")
	case b == 'f':
		return c.lit("false")
	case b == 'n':
		return c.lit("null")
	case b == '-' || '0' <= b && b <= '9':
		return c.number()
	}
	return false
}

func (c *canonChecker) lit(l string) bool {
	if len(c.s)-c.i >= len(l) && c.s[c.i:c.i+len(l)] == l {
		c.i += len(l)
		return true
	}
	return false
}

// str checks a string's text after its opening quote, up to and past its
// closing one; a key (noEscapes) may not have escapes, since keys are
// ordered by their decoded text.
func (c *canonChecker) str(noEscapes bool) bool {
	for c.i < len(c.s) {
		b := c.s[c.i]
		switch {
		case b == '"':
			c.i++
			return true
		case b == '\\':
			if noEscapes || c.i+1 >= len(c.s) {
				return false
			}
			switch c.s[c.i+1] {
			case '"', '\\', 'n', 'r', 't':
				c.i += 2
			default:
				return false
			}
		case b < 0x20:
			return false
		case b < utf8.RuneSelf:
			c.i++
		default:
			r, size := utf8.DecodeRuneInString(c.s[c.i:])
			if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
				return false
			}
			c.i += size
		}
	}
	return false
}

func (c *canonChecker) number() bool {
	s, i := c.s, c.i
	digits := func() int {
		n := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	c.i = i
	return true
}
