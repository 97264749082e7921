// Package update reads a release feed in the GitHub releases API's shape,
// picks its newest release and compares it with the running version
// (docs/BEHAVIOUR.md#update-check). It never downloads or runs anything,
// and imports nothing of ours.
package update

import (
	"regexp"
	"strings"

	"golang.org/x/mod/semver"
)

// describeTail is what `git describe --tags` adds after the tag of a
// build made past it: "-<commits>-g<hash>".
var describeTail = regexp.MustCompile(`-[0-9]+-g[0-9a-f]+$`)

// Running is the running version as semver, and whether it is one. A
// `git describe` string compares as the tag it starts from ("v1.2.3-4-gabc"
// and "v1.2.3-dirty" as v1.2.3: a build past a release is no older than
// it); "dev", a bare commit hash and anything else that is not semver give
// false, and such a build never reports an update.
func Running(version string) (string, bool) {
	v := strings.TrimSuffix(strings.TrimSpace(version), "-dirty")
	v = describeTail.ReplaceAllString(v, "")
	return canonical(v)
}

// canonical is a tag as semver ("1.2" and "v1.2" both as v1.2.0), and
// whether it is one.
func canonical(tag string) (string, bool) {
	tag = strings.TrimSpace(tag)
	if tag != "" && tag[0] != 'v' {
		tag = "v" + tag
	}
	if !semver.IsValid(tag) {
		return "", false
	}
	return semver.Canonical(tag), true
}

// Newer reports whether latest is a later version than current, both as
// Running or Newest give them.
func Newer(latest, current string) bool {
	return semver.Compare(latest, current) > 0
}
