package main

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

func TestDebVersion(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"tag", "v1.2.3", "1.2.3"},
		{"tag without v", "1.2.3", "1.2.3"},
		{"pre-release tag", "v1.2.3-rc.1", "1.2.3~rc.1"},
		{"commits after a tag", "v1.2.3-4-gdfe2d89", "1.2.3+4.gdfe2d89"},
		{"commits after a tag, dirty", "v1.2.3-4-gdfe2d89-dirty", "1.2.3+4.gdfe2d89.dirty"},
		{"commits after a pre-release", "v1.2.3-rc.1-4-gdfe2d89", "1.2.3~rc.1+4.gdfe2d89"},
		{"dirty tag", "v1.2.3-dirty", "1.2.3+dirty"},
		{"no tag", "dfe2d89", "0.0.0~gdfe2d89"},
		{"no tag, all digits", "1234567", "0.0.0~g1234567"},
		{"no tag, dirty", "dfe2d89-dirty", "0.0.0~gdfe2d89.dirty"},
		{"no git", "dev", "0.0.0~dev"},
		{"surrounding space", " v0.1.0\n", "0.1.0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := debVersion(tc.in)
			if err != nil || got != tc.want {
				t.Errorf("debVersion(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestDebVersionRefuses(t *testing.T) {
	for _, in := range []string{"", "my_branch", "v1.2.3:4", "1.2.3 beta"} {
		if got, err := debVersion(in); err == nil {
			t.Errorf("debVersion(%q) = %q; want an error", in, got)
		}
	}
}

// The order dpkg gives the mapped versions must be the order they were
// made in; dpkg itself is the judge where it is installed.
func TestDebVersionOrder(t *testing.T) {
	dpkg, err := exec.LookPath("dpkg")
	if err != nil {
		t.Fatalf("dpkg not found (%v): this test compares versions with dpkg --compare-versions", err)
	}
	inOrder := []string{"dev", "dfe2d89", "v0.9.0", "v1.0.0-rc.1", "v1.0.0-rc.1-3-gabcdef0", "v1.0.0", "v1.0.0-2-gabcdef0", "v1.0.0-10-gabcdef0", "v1.0.1"}
	mapped := make([]string, len(inOrder))
	for i, in := range inOrder {
		if mapped[i], err = debVersion(in); err != nil {
			t.Fatal(err)
		}
	}
	sorted := append([]string(nil), mapped...)
	var cmpErr error
	sort.SliceStable(sorted, func(i, j int) bool {
		err := exec.Command(dpkg, "--compare-versions", sorted[i], "lt", sorted[j]).Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			cmpErr = err
		}
		return err == nil
	})
	if cmpErr != nil {
		t.Fatal(cmpErr)
	}
	if strings.Join(sorted, " ") != strings.Join(mapped, " ") {
		t.Errorf("dpkg orders them\n  %s\nwant\n  %s", strings.Join(sorted, " "), strings.Join(mapped, " "))
	}
}
