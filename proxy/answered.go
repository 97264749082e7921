package proxy

import (
	"regexp"
	"strings"
)

// An answer names the model that wrote it; relays sometimes serve another
// one than the one asked for (docs/BEHAVIOUR.md#the-answers-model). Names
// that differ only in how a provider spells the same model are the same
// model: a date or version suffix (claude-sonnet-4-5-20250929,
// gpt-4o-2024-08-06, -latest, @20250929), a provider prefix
// (anthropic/claude-sonnet-4-5), case, and dots for dashes in version
// numbers (claude-sonnet-4.5).

var modelSuffix = regexp.MustCompile(`(?:[-@_](?:\d{8}|\d{4}-\d{2}-\d{2}|\d{4}|latest|v\d+(?:[.:]\d+)*|preview))+$`)

// canonicalModel is name as sameModel compares it.
func canonicalModel(name string) string {
	m := strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	m = strings.ReplaceAll(m, ".", "-")
	m = strings.ReplaceAll(m, "_", "-")
	if s := modelSuffix.ReplaceAllString(m, ""); s != "" {
		m = s
	}
	return m
}

// sameModel reports whether an answer that names answered came from the
// model forwarded; an answer that names none is taken as the model asked.
func sameModel(forwarded, answered string) bool {
	if answered == "" || forwarded == "" || forwarded == answered {
		return true
	}
	return canonicalModel(forwarded) == canonicalModel(answered)
}
