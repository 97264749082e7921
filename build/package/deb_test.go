package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// testSpec packages /bin/true (a dynamically linked ELF, like the desktop
// build) with a blank 512 icon into a temporary dir.
func testSpec(t *testing.T) debSpec {
	t.Helper()
	dir := t.TempDir()
	icon := filepath.Join(dir, "appicon.png")
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, 512, 512))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(icon, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return debSpec{
		Binary:     "/bin/true",
		Icon:       icon,
		Version:    "v1.2.3-4-gdfe2d89-dirty",
		Date:       time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Maintainer: "Test <test@example.invalid>",
		OutDir:     filepath.Join(dir, "dist"),
	}
}

func dpkgDeb(t *testing.T, args ...string) []byte {
	t.Helper()
	out, err := exec.Command("dpkg-deb", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("dpkg-deb %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("dpkg-deb %s: %v (this test reads the package with dpkg-deb)", strings.Join(args, " "), err)
	}
	return out
}

func TestBuildDeb(t *testing.T) {
	s := testSpec(t)
	// An older package in the output dir goes; another arch's stays.
	if err := os.MkdirAll(s.OutDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ccmesh_1.0.0_amd64.deb", "ccmesh_1.0.0_arm64.deb"} {
		if err := os.WriteFile(filepath.Join(s.OutDir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path, err := buildDeb(s)
	if err != nil {
		t.Fatal(err)
	}
	arch, _, err := inspectBinary("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	if want := "ccmesh_1.2.3+4.gdfe2d89.dirty_" + arch + ".deb"; filepath.Base(path) != want {
		t.Errorf("wrote %s, want %s", filepath.Base(path), want)
	}
	left, _ := filepath.Glob(filepath.Join(s.OutDir, "*"))
	for i := range left {
		left[i] = filepath.Base(left[i])
	}
	wantLeft := []string{"ccmesh_1.0.0_arm64.deb", filepath.Base(path)}
	if arch == "arm64" {
		wantLeft = []string{filepath.Base(path)}
	}
	slices.Sort(wantLeft)
	if !slices.Equal(left, wantLeft) {
		t.Errorf("output dir holds %v, want %v", left, wantLeft)
	}

	t.Run("control", func(t *testing.T) {
		fields := map[string]string{
			"Package": "ccmesh", "Version": "1.2.3+4.gdfe2d89.dirty", "Architecture": arch,
			"Maintainer": "Test <test@example.invalid>", "Section": "net",
		}
		for k, want := range fields {
			if got := strings.TrimSpace(string(dpkgDeb(t, "--field", path, k))); got != want {
				t.Errorf("%s: %q, want %q", k, got, want)
			}
		}
		depends := strings.Split(strings.TrimSpace(string(dpkgDeb(t, "--field", path, "Depends"))), ", ")
		if !strings.HasPrefix(depends[0], "libc6 (>= 2.") {
			t.Errorf("Depends starts with %q, want libc6 (>= 2.…)", depends[0])
		}
		for _, want := range []string{"libgtk-3-0", "libwebkit2gtk-4.1-0", "libayatana-appindicator3-1"} {
			if !slices.Contains(depends, want) {
				t.Errorf("Depends %v lacks %s", depends, want)
			}
		}
		for _, d := range depends {
			if strings.Contains(d, "-dev") {
				t.Errorf("Depends names a development package: %s", d)
			}
		}
	})

	t.Run("files", func(t *testing.T) {
		want := map[string]int64{
			"/usr/bin/ccmesh":                        0o755,
			"/usr/share/applications/ccmesh.desktop": 0o644,
			"/usr/lib/systemd/user/ccmesh.service":   0o644,
		}
		for _, n := range []string{"16", "24", "32", "48", "64", "128", "256", "512"} {
			want["/usr/share/icons/hicolor/"+n+"x"+n+"/apps/ccmesh.png"] = 0o644
		}
		got := map[string]int64{}
		body := map[string][]byte{}
		tr := tar.NewReader(bytes.NewReader(dpkgDeb(t, "--fsys-tarfile", path)))
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Uname != "root" || h.Gname != "root" {
				t.Errorf("%s is owned by %s:%s, want root:root", h.Name, h.Uname, h.Gname)
			}
			if !h.ModTime.Equal(s.Date) {
				t.Errorf("%s: mtime %v, want the commit date %v", h.Name, h.ModTime, s.Date)
			}
			if h.Typeflag != tar.TypeReg {
				continue
			}
			name := strings.TrimPrefix(h.Name, ".")
			got[name] = h.Mode & 0o7777
			if body[name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != len(want) {
			t.Errorf("the package holds %d files, want %d: %v", len(got), len(want), got)
		}
		for name, mode := range want {
			if m, ok := got[name]; !ok || m != mode {
				t.Errorf("%s: present %v, mode %o; want mode %o", name, ok, m, mode)
			}
		}
		if self, _ := os.ReadFile("/bin/true"); !bytes.Equal(body["/usr/bin/ccmesh"], self) {
			t.Error("/usr/bin/ccmesh is not the given binary")
		}
		unit := string(body["/usr/lib/systemd/user/ccmesh.service"])
		for _, line := range []string{"ExecStart=/usr/bin/ccmesh --headless", "Restart=on-failure", "WantedBy=default.target"} {
			if !slices.Contains(strings.Split(unit, "\n"), line) {
				t.Errorf("the unit lacks the line %q:\n%s", line, unit)
			}
		}
		entry := string(body["/usr/share/applications/ccmesh.desktop"])
		for _, line := range []string{"Exec=ccmesh", "Icon=ccmesh", "StartupWMClass=ccmesh"} {
			if !slices.Contains(strings.Split(entry, "\n"), line) {
				t.Errorf("the desktop entry lacks the line %q:\n%s", line, entry)
			}
		}
	})

	t.Run("reproducible", func(t *testing.T) {
		first, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		again, err := buildDeb(s)
		if err != nil {
			t.Fatal(err)
		}
		second, err := os.ReadFile(again)
		if err != nil {
			t.Fatal(err)
		}
		if again != path || !bytes.Equal(first, second) {
			t.Errorf("the same inputs gave another package (%s, %d bytes; then %s, %d bytes)", path, len(first), again, len(second))
		}
	})
}

func TestBuildDebRefuses(t *testing.T) {
	notELF := filepath.Join(t.TempDir(), "ccmesh")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(*debSpec)
	}{
		{"no binary", func(s *debSpec) { s.Binary = filepath.Join(s.OutDir, "missing") }},
		{"not an ELF binary", func(s *debSpec) { s.Binary = notELF }},
		{"no icon", func(s *debSpec) { s.Icon = filepath.Join(s.OutDir, "missing.png") }},
		{"bad version", func(s *debSpec) { s.Version = "my_branch" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testSpec(t)
			tc.edit(&s)
			if path, err := buildDeb(s); err == nil {
				t.Errorf("built %s; want an error", path)
			}
			if debs, _ := filepath.Glob(filepath.Join(s.OutDir, "*.deb")); len(debs) > 0 {
				t.Errorf("left %v behind", debs)
			}
		})
	}
}
