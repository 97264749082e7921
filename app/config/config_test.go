package config

import (
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/ccmesh/ccmesh/app/apierr"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// covers holds when every request the second rule's conditions take the
// first's take too, and only then (docs/BEHAVIOUR.md#routing-rules).
func TestCovers(t *testing.T) {
	yes, no := new(true), new(false)
	tests := []struct {
		name string
		a, b proxy.RuleWhen
		want bool
	}{
		{"no condition covers all", proxy.RuleWhen{}, proxy.RuleWhen{Models: []string{"x"}}, true},
		{"a condition does not cover none", proxy.RuleWhen{Models: []string{"x"}}, proxy.RuleWhen{}, false},
		{"a wider pattern", proxy.RuleWhen{Models: []string{"claude-*"}}, proxy.RuleWhen{Models: []string{"claude-haiku-*"}}, true},
		{"a narrower pattern", proxy.RuleWhen{Models: []string{"claude-haiku-*"}}, proxy.RuleWhen{Models: []string{"claude-*"}}, false},
		{"one pattern of two", proxy.RuleWhen{Models: []string{"a*"}}, proxy.RuleWhen{Models: []string{"a1", "b1"}}, false},
		{"the same thinking", proxy.RuleWhen{Thinking: yes}, proxy.RuleWhen{Thinking: yes}, true},
		{"another thinking", proxy.RuleWhen{Thinking: yes}, proxy.RuleWhen{Thinking: no}, false},
		{"thinking left open", proxy.RuleWhen{Thinking: yes}, proxy.RuleWhen{}, false},
		{"a lower token bound", proxy.RuleWhen{InputTokensOver: 100}, proxy.RuleWhen{InputTokensOver: 200}, true},
		{"a higher token bound", proxy.RuleWhen{InputTokensOver: 200}, proxy.RuleWhen{InputTokensOver: 100}, false},
		{"a header in another case", proxy.RuleWhen{Header: &proxy.RuleHeader{Name: "X-Team", Pattern: "*"}},
			proxy.RuleWhen{Header: &proxy.RuleHeader{Name: "x-team", Pattern: "a"}}, true},
		{"another header", proxy.RuleWhen{Header: &proxy.RuleHeader{Name: "x-team", Pattern: "*"}},
			proxy.RuleWhen{Header: &proxy.RuleHeader{Name: "x-user", Pattern: "a"}}, false},
		{"another protocol", proxy.RuleWhen{Protocol: proxy.Protocols[0]}, proxy.RuleWhen{Protocol: proxy.Protocols[1]}, false},
	}
	for _, tt := range tests {
		if got := covers(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: covers(%+v, %+v) = %v, want %v", tt.name, tt.a, tt.b, got, tt.want)
		}
	}
}

// A rule's targets are the stored endpoints' names and tags, with an
// import's laid over them.
func TestImportTargets(t *testing.T) {
	stored := []store.Endpoint{{Name: "a", Tags: []string{"fast"}}}
	tags := []string{"cheap"}
	got := ImportTargets(stored, []store.EndpointPatch{{Name: new("b"), Tags: &tags}})
	want := Targets{Names: map[string]bool{"a": true, "b": true}, Tags: map[string]bool{"fast": true, "cheap": true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// A rule's numbers are checked against their range tags, as a 400 like
// the rule's other faults, at the rule's field.
func TestRuleRange(t *testing.T) {
	_, err := ValidateRules([]proxy.Rule{{Name: "big", When: proxy.RuleWhen{InputTokensOver: -1},
		Then: proxy.RuleThen{Endpoints: []string{"a"}}}}, Targets{Names: map[string]bool{"a": true}})
	ae, ok := errors.AsType[*apierr.Error](err)
	if !ok {
		t.Fatalf("got %v, want an apierr.Error", err)
	}
	if ae.Status != http.StatusBadRequest || ae.Code != CodeInvalidRule || ae.Field != "rules[0].when.input_tokens_over" {
		t.Errorf("got %+v, want 400 %s at rules[0].when.input_tokens_over", ae, CodeInvalidRule)
	}
}
