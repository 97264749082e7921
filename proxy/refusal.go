package proxy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// How endpoints say they refuse a part of a request, in the words relays
// and gateways really use (docs/BEHAVIOUR.md#refused-fields). Each pattern's
// first group is the part's path or name as the endpoint wrote it.
var refusalPatterns = []*regexp.Regexp{
	// Anthropic and other pydantic-based servers.
	regexp.MustCompile(`([A-Za-z_][\w.\[\]]*)\s*:\s*Extra inputs are not permitted`),
	regexp.MustCompile(`(?i)([A-Za-z_][\w.\[\]]*)\s*:?\s*extra fields not permitted`),
	// OpenAI and the gateways that copy its words.
	regexp.MustCompile(`(?i)Unrecognized request arguments? supplied:\s*([\w.\[\]]+(?:\s*,\s*[\w.\[\]]+)*)`),
	// serde (Rust), encoding/json (Go) and friends.
	regexp.MustCompile("(?i)unknown field:?\\s*[`'\"]?([A-Za-z_][\\w.\\[\\]]*)"),
	regexp.MustCompile("(?i)unknown (?:parameter|argument|property):?\\s*[`'\"]?([A-Za-z_][\\w.\\[\\]]*)"),
	regexp.MustCompile("(?i)unsupported (?:parameter|argument|field|property):?\\s*[`'\"]?([A-Za-z_][\\w.\\[\\]]*)"),
	// JSON Schema validators.
	regexp.MustCompile("(?i)[`'\"]?([A-Za-z_][\\w.\\[\\]]*)[`'\"]?\\s*:\\s*property not allowed"),
	regexp.MustCompile("(?i)property [`'\"]?([A-Za-z_][\\w.\\[\\]]*)[`'\"]? is not allowed"),
	regexp.MustCompile(`(?i)additional properties are not allowed \('([\w.]+)' was unexpected\)`),
	regexp.MustCompile(`(?i)extraneous key \[([\w.]+)\] is not permitted`),
	// A pydantic error list printed by Python (vLLM and other FastAPI
	// servers): 'loc': ('body', 'tools', 0, 'defer_loading').
	regexp.MustCompile(`'loc':\s*\(\s*'body'\s*,\s*([^)]*?)\s*,?\s*\)\s*,\s*'msg':\s*'Extra inputs are not permitted'`),
	// The Chinese forms relays use.
	regexp.MustCompile("(?:不支持|未知|不允许|不被允许|无法识别|不识别|非法)的?(?:字段|参数|属性)\\s*[:：]?\\s*[`'\"“‘「]?([A-Za-z_][\\w.\\[\\]]*)"),
	regexp.MustCompile("(?:字段|参数|属性)\\s*[`'\"“‘「]?([A-Za-z_][\\w.\\[\\]]*)[`'\"”’」]?\\s*(?:不支持|不被支持|不允许|不被允许|无法识别|未知|不合法)"),
}

// betaRefusals find anthropic-beta values refused by name: the group is a
// list of values, each in backticks or quotes.
var betaRefusals = []*regexp.Regexp{
	regexp.MustCompile("(?i)unexpected value\\(s\\)\\s*((?:[`'\"][\\w.-]+[`'\"](?:\\s*,\\s*)?)+)\\s*for the [`'\"]?anthropic-beta[`'\"]? header"),
	regexp.MustCompile("(?i)(?:unsupported|unknown|invalid) (?:anthropic-)?beta(?: header| flag| value)?s?\\s*[:：]?\\s*((?:[`'\"]?[a-z][\\w.-]*-20\\d{2}-\\d{2}-\\d{2}[`'\"]?(?:\\s*,\\s*)?)+)"),
	regexp.MustCompile("(?:不支持|未知|不允许|无效)的?\\s*(?:anthropic-)?beta\\s*(?:值|头|标志)?\\s*[:：]?\\s*((?:[`'\"“]?[a-z][\\w.-]*-20\\d{2}-\\d{2}-\\d{2}[`'\"”]?(?:\\s*[,，]\\s*)?)+)"),
}

var betaValue = regexp.MustCompile(`[a-z][\w.-]*[\w]`)

// refusedDrops reads a refusal (a 400 or 422 body) for the parts it
// names that ccmesh may leave out, in the order named, each once. A part
// that is not droppable is not returned: such a 400 reaches the client.
func refusedDrops(body []byte) []Drop {
	text := refusalText(body)
	var out []Drop
	add := func(d Drop) {
		if _, ok := d.Why(); ok && !Drops(out).Has(d) {
			out = append(out, d)
		}
	}
	if strings.Contains(text, "adaptive") && strings.Contains(text, "thinking") {
		add("thinking.adaptive")
	}
	for _, re := range betaRefusals {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			for _, v := range betaValue.FindAllString(m[1], -1) {
				add(Drop(dropPrefixBeta + v))
			}
		}
	}
	for _, re := range refusalPatterns {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			if strings.Contains(m[1], "'") { // a Python tuple of one location
				if d, ok := dropOfPath(pythonLoc(m[1])); ok {
					add(d)
				}
				continue
			}
			for p := range strings.SplitSeq(m[1], ",") {
				if d, ok := dropOfPath(strings.TrimSpace(p)); ok {
					add(d)
				}
			}
		}
	}
	return out
}

// refusalText is what the refusal patterns read: the body with its JSON
// strings unescaped, and a FastAPI-style validation error's locations
// written as paths ("context_management: Extra inputs are not permitted").
func refusalText(body []byte) string {
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return string(body)
	}
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v)
			b.WriteByte('\n')
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			if loc, ok := v["loc"].([]any); ok {
				if msg, _ := v["msg"].(string); msg != "" {
					fmt.Fprintf(&b, "%s: %s\n", locPath(loc), msg)
				}
			}
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	return b.String()
}

// locPath writes a validation error's location ["body","tools",0,"x"] as
// "tools.0.x".
func locPath(loc []any) string {
	var parts []string
	for i, p := range loc {
		switch p := p.(type) {
		case string:
			if i == 0 && p == "body" {
				continue
			}
			parts = append(parts, p)
		case float64:
			parts = append(parts, strconv.Itoa(int(p)))
		}
	}
	return strings.Join(parts, ".")
}

// pythonLoc writes "'tools', 0, 'defer_loading'" as "tools.0.defer_loading".
func pythonLoc(tuple string) string {
	var parts []string
	for p := range strings.SplitSeq(tuple, ",") {
		if p = strings.Trim(strings.TrimSpace(p), "'"); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

// dropOfPath maps a path as an endpoint writes it ("body.context_management",
// "tools.0.custom.defer_loading", "messages[2].content[0].cache_control.ttl",
// or a bare name) to the droppable part it names.
func dropOfPath(raw string) (Drop, bool) {
	raw = strings.TrimPrefix(strings.TrimPrefix(raw, "body."), "$.")
	var segs []string
	for s := range strings.SplitSeq(raw, ".") {
		if i := strings.IndexByte(s, '['); i >= 0 {
			s = s[:i]
		}
		if s == "" || strings.Trim(s, "0123456789") == "" {
			continue
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return "", false
	}
	first, last := segs[0], segs[len(segs)-1]
	var d Drop
	switch {
	case last == "ttl" && (len(segs) == 1 || segs[len(segs)-2] == "cache_control"):
		d = "cache_control.ttl"
	case first == "tools" && len(segs) > 1:
		d = Drop("tools[]." + last)
	case last == "defer_loading" || last == "eager_input_streaming":
		d = Drop("tools[]." + last)
	case last == "cache_control":
		d = "cache_control"
	case len(segs) == 1:
		d = Drop(first)
	default:
		return "", false
	}
	_, ok := d.Why()
	return d, ok
}
