package main

import (
	"fmt"
	"regexp"
	"strings"
)

// The Makefile's VERSION is `git describe --tags --always --dirty`; a .deb
// needs a Debian version (deb-version(7)): it starts with a digit, has no
// hyphen (ccmesh packages carry no Debian revision), and sorts the way the
// releases were made. debVersion maps one onto the other:
//
//	v1.2.3                 → 1.2.3
//	v1.2.3-rc.1            → 1.2.3~rc.1           (~ sorts before 1.2.3)
//	v1.2.3-4-gdfe2d89      → 1.2.3+4.gdfe2d89     (4 commits after the tag)
//	v1.2.3-4-gdfe2d89-dirty→ 1.2.3+4.gdfe2d89.dirty
//	dfe2d89                → 0.0.0~gdfe2d89       (no tag yet: before any release)
//	dfe2d89-dirty          → 0.0.0~gdfe2d89.dirty
//	dev                    → 0.0.0~dev            (no git at all)
//
// The release file names of `make release` use the same string, so a .deb
// and the binaries built from one tree carry one version.
func debVersion(describe string) (string, error) {
	v := strings.TrimSpace(describe)
	if v == "" {
		return "", fmt.Errorf("empty version: pass the Makefile's VERSION (git describe --tags --always --dirty)")
	}
	dirty := false
	if s, ok := strings.CutSuffix(v, "-dirty"); ok {
		v, dirty = s, true
	}
	var out string
	switch {
	case commitOnly.MatchString(v):
		out = "0.0.0~g" + v
	case tagged.MatchString(strings.TrimPrefix(v, "v")):
		v = strings.TrimPrefix(v, "v")
		after := ""
		if m := describeTail.FindStringSubmatch(v); m != nil {
			v = strings.TrimSuffix(v, m[0])
			after = "+" + m[1] + ".g" + m[2]
		}
		// A tag's own hyphen starts a pre-release (v1.2.3-rc.1).
		out = strings.Replace(v, "-", "~", 1) + after
	default:
		out = "0.0.0~" + v
	}
	if dirty {
		if strings.ContainsAny(out, "+~") {
			out += ".dirty"
		} else {
			out += "+dirty"
		}
	}
	out = strings.ReplaceAll(out, "-", ".")
	if !debianUpstream.MatchString(out) {
		return "", fmt.Errorf("version %q gives %q, which is not a Debian version: tag releases as v1.2.3", describe, out)
	}
	return out, nil
}

var (
	// What `git describe --always` prints when no tag is reachable: an
	// abbreviated hash. A version tag has a dot, so 7+ hex digits alone are
	// a hash even when they happen to be all digits.
	commitOnly = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
	// A tag that reads as a version: a digit first.
	tagged = regexp.MustCompile(`^[0-9]`)
	// What `git describe` adds after a tag: -<commits since>-g<hash>.
	describeTail = regexp.MustCompile(`-([0-9]+)-g([0-9a-f]{4,40})$`)
	// deb-version(7) upstream_version without a revision, and without the
	// characters a file name or a URL would have to escape.
	debianUpstream = regexp.MustCompile(`^[0-9][A-Za-z0-9.+~]*$`)
)
