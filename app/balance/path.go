package balance

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// lookup finds path in doc: keys separated by dots, array elements by
// [i] or a numeric key (data.limits[0].percentage, balance_infos.0.currency).
func lookup(doc any, path string) (any, bool) {
	cur := doc
	for _, part := range splitPath(path) {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[part]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// splitPath turns a.b[0].c into a, b, 0, c.
func splitPath(path string) []string {
	path = strings.NewReplacer("[", ".", "]", "").Replace(path)
	var parts []string
	for p := range strings.SplitSeq(path, ".") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return parts
}

// number is the number at path: a JSON number, or a string holding one
// (DeepSeek's and SiliconFlow's balances are strings).
func number(doc any, path string) (float64, error) {
	v, ok := lookup(doc, path)
	if !ok || v == nil {
		return 0, fmt.Errorf("%s: missing in the answer", path)
	}
	f, ok := toFloat(v)
	if !ok {
		return 0, fmt.Errorf("%s: %s is not a number", path, describe(v))
	}
	return f, nil
}

func toFloat(v any) (float64, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case float64:
		return x, true
	case string:
		s = strings.TrimSpace(x)
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "a value"
	}
	return clip(string(b))
}

// timeOf reads a reset time: Unix seconds or milliseconds (a number, or a
// string of one), or an RFC 3339 time. 0 is none.
func timeOf(v any) (time.Time, error) {
	if f, ok := toFloat(v); ok {
		switch {
		case f <= 0:
			return time.Time{}, nil
		case f > 1e12: // milliseconds: 1e12 s is the year 33658
			return time.UnixMilli(int64(f)).UTC(), nil
		}
		return time.Unix(int64(f), 0).UTC(), nil
	}
	if s, ok := v.(string); ok {
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
		if err != nil {
			return time.Time{}, fmt.Errorf("%q is not a time (Unix seconds or milliseconds, or RFC 3339)", clip(s))
		}
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%s is not a time", describe(v))
}

// boolAt is the boolean at path, and whether there is one.
func boolAt(doc any, path string) (val, ok bool) {
	v, found := lookup(doc, path)
	b, isBool := v.(bool)
	return b, found && isBool
}

// stringAt is the string at path, "" when there is none.
func stringAt(doc any, path string) string {
	v, _ := lookup(doc, path)
	s, _ := v.(string)
	return s
}
