package config

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ccmesh/ccmesh/app/apierr"
	"github.com/ccmesh/ccmesh/app/stats"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// Routing rules in the settings (docs/BEHAVIOUR.md#routing-rules): checked
// here against the endpoints that exist, with a warning for a rule an
// earlier one always takes the requests of.

// Codes of a rule refused (400) and of a rule that can never match (a
// warning).
const (
	CodeInvalidRule     = "invalid_rule"
	CodeRuleUnreachable = "rule_unreachable"
)

const maxRuleName = 64

// Warning is a change the admin API made but has something to say about.
type Warning struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func badRule(field, format string, args ...any) *apierr.Error {
	return apierr.BadRequest(CodeInvalidRule, field, format, args...)
}

// Targets are what a rule's then.endpoints may name: endpoint names and
// tags.
type Targets struct{ Names, Tags map[string]bool }

// TargetsOf are the names and tags of eps.
func TargetsOf(eps []store.Endpoint) Targets {
	t := Targets{Names: map[string]bool{}, Tags: map[string]bool{}}
	for _, e := range eps {
		t.Names[e.Name] = true
		for _, tag := range e.Tags {
			t.Tags[tag] = true
		}
	}
	return t
}

// ImportTargets are the names and tags a rule may name after an import:
// the endpoints stored now, with the import's laid over them by name.
func ImportTargets(stored []store.Endpoint, patches []store.EndpointPatch) Targets {
	t := TargetsOf(stored)
	for _, p := range patches {
		if p.Name != nil {
			t.Names[*p.Name] = true
		}
		if p.Tags != nil {
			for _, tag := range *p.Tags {
				t.Tags[tag] = true
			}
		}
	}
	return t
}

// ValidateRules checks the rules against the endpoints' names and tags;
// the warnings name the rules that can never match.
func ValidateRules(rules []proxy.Rule, t Targets) ([]Warning, error) {
	names := make(map[string]int, len(rules))
	for i, r := range rules {
		at := fmt.Sprintf("rules[%d]", i)
		if err := validRuleName(at+".name", r.Name); err != nil {
			return nil, err
		}
		if j, dup := names[r.Name]; dup {
			return nil, badRule(at+".name", "rule %d: the name %q is already rule %d's; rule names are unique", i+1, r.Name, j+1)
		}
		names[r.Name] = i
		if err := validWhen(at+".when", r.When); err != nil {
			return nil, err
		}
		if err := validThen(at+".then", r.Then, t); err != nil {
			return nil, err
		}
	}
	warnings := []Warning{}
	for j := range rules {
		for i := range j {
			if covers(rules[i].When, rules[j].When) {
				warnings = append(warnings, Warning{Field: fmt.Sprintf("rules[%d]", j), Code: CodeRuleUnreachable,
					Message: fmt.Sprintf("rule %q can never match: rule %q before it matches every request it would", rules[j].Name, rules[i].Name)})
				break
			}
		}
	}
	return warnings, nil
}

func validRuleName(field, name string) *apierr.Error {
	switch {
	case strings.TrimSpace(name) == "":
		return badRule(field, "a rule needs a name: the log and the statistics show it")
	case !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl):
		return badRule(field, "rule name %q must be printable text", name)
	case utf8.RuneCountInString(name) > maxRuleName:
		return badRule(field, "rule name %q is longer than %d characters", name, maxRuleName)
	case strings.TrimSpace(name) != name:
		return badRule(field, "rule name %q has spaces around it", name)
	case name == stats.NoRule:
		return badRule(field, "%q is what the statistics call requests no rule decided; name the rule otherwise", name)
	}
	return nil
}

func validWhen(at string, w proxy.RuleWhen) *apierr.Error {
	if w.Protocol != "" && !w.Protocol.Valid() {
		return badRule(at+".protocol", "protocol %q is not one of %s", w.Protocol, Words(proxy.Protocols, ", "))
	}
	for i, m := range w.Models {
		if why := store.CheckModelPattern(m); why != "" {
			return badRule(fmt.Sprintf("%s.models[%d]", at, i), "model pattern %q %s", m, why)
		}
	}
	if w.Agent != "" && !w.Agent.Valid() {
		return badRule(at+".agent", "agent %q is not one of %s", w.Agent, Words(proxy.RuleAgents, ", "))
	}
	if w.Tools != "" && !w.Tools.Valid() {
		return badRule(at+".tools", "tools %q is not one of %s", w.Tools, Words(proxy.RuleToolKinds, ", "))
	}
	if err := CheckRanges(CodeInvalidRule, at+".", w); err != nil {
		err.Status = http.StatusBadRequest
		return err
	}
	if h := w.Header; h != nil {
		if h.Name == "" || strings.ContainsFunc(h.Name, func(r rune) bool { return !isTokenChar(r) }) {
			return badRule(at+".header.name", "header name %q must be a header's name, e.g. x-team", h.Name)
		}
		if why := store.CheckModelPattern(h.Pattern); why != "" {
			return badRule(at+".header.pattern", "header pattern %q %s", h.Pattern, why)
		}
	}
	return nil
}

// isTokenChar: a character of an HTTP field name (RFC 9110 §5.6.2).
func isTokenChar(r rune) bool {
	return r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("!#$%&'*+-.^_`|~", r))
}

func validThen(at string, th proxy.RuleThen, t Targets) *apierr.Error {
	if len(th.Endpoints) == 0 {
		return badRule(at+".endpoints", "a rule sends its requests to at least one endpoint (a name, or tag:<tag>)")
	}
	for i, name := range th.Endpoints {
		field := fmt.Sprintf("%s.endpoints[%d]", at, i)
		if tag, ok := strings.CutPrefix(name, proxy.TagPrefix); ok {
			if !t.Tags[tag] {
				return badRule(field, "no endpoint has the tag %q", tag)
			}
			continue
		}
		if !t.Names[name] {
			return badRule(field, "no endpoint is named %q (a tag is written tag:<tag>)", name)
		}
	}
	for from, to := range th.ModelMap {
		if why := store.CheckModelPattern(from); why != "" {
			return badRule(at+".model_map", "model_map key %q %s", from, why)
		}
		if strings.TrimSpace(to) == "" || !utf8.ValidString(to) {
			return badRule(at+".model_map", "model_map %q must map to a model name", from)
		}
	}
	if th.Strategy != "" && !th.Strategy.Valid() {
		return badRule(at+".strategy", "strategy %q is not one of %s (or leave it out for the setting's)", th.Strategy, Words(proxy.Strategies, ", "))
	}
	return nil
}

// covers reports whether a holds for every request b holds for: each
// condition a gives, b gives too, as strictly.
func covers(a, b proxy.RuleWhen) bool {
	// Each of b's patterns is matched, as text, by one of a's: a's then
	// match every model b's do ("claude-*" covers "claude-haiku-*").
	patternsCover := func(as, bs []string) bool {
		return len(bs) > 0 && !slices.ContainsFunc(bs, func(q string) bool {
			return !slices.ContainsFunc(as, func(p string) bool { return proxy.MatchPattern(p, q) })
		})
	}
	sameBool := func(a, b *bool) bool { return a == nil || b != nil && *a == *b }
	return (a.Protocol == "" || a.Protocol == b.Protocol) &&
		(len(a.Models) == 0 || patternsCover(a.Models, b.Models)) &&
		(a.Agent == "" || a.Agent == b.Agent) &&
		sameBool(a.Thinking, b.Thinking) && sameBool(a.Images, b.Images) &&
		(a.InputTokensOver == 0 || b.InputTokensOver >= a.InputTokensOver) &&
		(a.Tools == "" || a.Tools == b.Tools) &&
		(a.Header == nil || b.Header != nil && strings.EqualFold(a.Header.Name, b.Header.Name) && proxy.MatchPattern(a.Header.Pattern, b.Header.Pattern))
}
