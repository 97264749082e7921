package main

import (
	"debug/elf"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	"github.com/goreleaser/nfpm/v2/deb"
	"github.com/goreleaser/nfpm/v2/files"
)

var (
	//go:embed ccmesh.desktop
	desktopEntry []byte
	//go:embed ccmesh.service
	userUnit []byte
)

// runtimeDepends are the Debian 12 packages that hold the shared libraries
// the desktop build links (`objdump -p bin/ccmesh-desktop | grep NEEDED`,
// each library's package from `dpkg -S`); libc6 gets its lowest version
// from the binary (glibcDepends). build/package/test-package.sh checks this
// list against the binary it packages, so a new library cannot be missed.
var runtimeDepends = []string{
	"libglib2.0-0",               // libglib, libgobject, libgio
	"libgdk-pixbuf-2.0-0",        // libgdk_pixbuf
	"libgtk-3-0",                 // libgtk-3, libgdk-3
	"libwebkit2gtk-4.1-0",        // the window (Wails, tag webkit2_41)
	"libjavascriptcoregtk-4.1-0", // WebKitGTK's JavaScript engine
	"libsoup-3.0-0",              // WebKitGTK 4.1's HTTP library
	"libayatana-appindicator3-1", // the tray (getlantern/systray)
}

const description = `local proxy that spreads AI clients over several API endpoints
ccmesh sits between Claude Code, Codex or any OpenAI-style client and
several upstream API endpoints: it spreads requests over them, skips broken
ones with a circuit breaker per endpoint, fails over without the client
noticing and shows what happened in a window with a tray icon or in a
browser. Run "ccmesh --headless" (or the ccmesh user unit) to serve without
a window.`

// debSpec is what one .deb is made of.
type debSpec struct {
	Binary     string    // the desktop build: bin/ccmesh-desktop
	Icon       string    // the square app icon: build/appicon.png
	Version    string    // the Makefile's VERSION (git describe); see debVersion
	Date       time.Time // every file's mtime; the same tree gives the same .deb
	Maintainer string
	OutDir     string // gets ccmesh_<version>_<arch>.deb, and no other ccmesh .deb of that arch
}

// buildDeb writes the package and returns its path.
func buildDeb(s debSpec) (string, error) {
	version, err := debVersion(s.Version)
	if err != nil {
		return "", err
	}
	arch, libc, err := inspectBinary(s.Binary)
	if err != nil {
		return "", err
	}
	staging, err := os.MkdirTemp("", "ccmesh-deb-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(staging)
	contents, err := stage(staging, s)
	if err != nil {
		return "", err
	}
	info := nfpm.WithDefaults(&nfpm.Info{
		Name:          "ccmesh",
		Arch:          arch,
		Platform:      "linux",
		Version:       version,
		VersionSchema: "none", // debVersion already made it a Debian version
		Section:       "net",
		Priority:      "optional",
		Maintainer:    s.Maintainer,
		Description:   description,
		MTime:         s.Date,
		Overridables: nfpm.Overridables{
			Depends:  append([]string{libc}, runtimeDepends...),
			Contents: contents,
		},
	})
	if err := os.MkdirAll(s.OutDir, 0o755); err != nil {
		return "", err
	}
	// One package per arch in OutDir: `apt-get install ./dist/ccmesh_*.deb`
	// must not meet an older version beside the new one.
	stale, err := filepath.Glob(filepath.Join(s.OutDir, "ccmesh_*_"+arch+".deb"))
	if err != nil {
		return "", err
	}
	for _, f := range stale {
		if err := os.Remove(f); err != nil {
			return "", err
		}
	}
	out := filepath.Join(s.OutDir, deb.Default.ConventionalFileName(info))
	f, err := os.CreateTemp(s.OutDir, ".ccmesh-*.deb")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	if err := deb.Default.Package(info, f); err != nil {
		f.Close()
		return "", fmt.Errorf("write the .deb: %w", err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return out, os.Rename(f.Name(), out)
}

// stage writes the generated files (icons, desktop entry, unit) under dir
// and lists everything the package installs.
func stage(dir string, s debSpec) (files.Contents, error) {
	src, err := os.Open(s.Icon)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	pngs, err := icons(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Icon, err)
	}
	regular := func(from, to string, mode os.FileMode) *files.Content {
		return &files.Content{Source: from, Destination: to,
			FileInfo: &files.ContentFileInfo{Owner: "root", Group: "root", Mode: mode}}
	}
	write := func(name string, data []byte, to string) (*files.Content, error) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, err
		}
		return regular(p, to, 0o644), nil
	}
	contents := files.Contents{regular(s.Binary, "/usr/bin/ccmesh", 0o755)}
	type generated struct {
		name string
		data []byte
		to   string
	}
	gen := []generated{
		{"ccmesh.desktop", desktopEntry, "/usr/share/applications/ccmesh.desktop"},
		{"ccmesh.service", userUnit, "/usr/lib/systemd/user/ccmesh.service"},
	}
	for _, n := range iconSizes {
		size := strconv.Itoa(n) + "x" + strconv.Itoa(n)
		gen = append(gen, generated{"icon-" + size + ".png", pngs[n], "/usr/share/icons/hicolor/" + size + "/apps/ccmesh.png"})
	}
	for _, g := range gen {
		c, err := write(g.name, g.data, g.to)
		if err != nil {
			return nil, err
		}
		contents = append(contents, c)
	}
	return contents, nil
}

// inspectBinary returns the Debian architecture of an ELF binary and its
// libc6 dependency: at least the newest glibc symbol version it imports,
// so that dpkg refuses a system whose glibc is too old to start it.
func inspectBinary(path string) (arch, libc string, err error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w (build it with make desktop)", path, err)
	}
	defer f.Close()
	switch f.Machine {
	case elf.EM_X86_64:
		arch = "amd64"
	case elf.EM_AARCH64:
		arch = "arm64"
	default:
		return "", "", fmt.Errorf("%s: a %v binary; ccmesh packages amd64 and arm64", path, f.Machine)
	}
	syms, err := f.ImportedSymbols()
	if err != nil {
		return "", "", fmt.Errorf("%s: read its dynamic symbols: %w (the package is of the cgo desktop build)", path, err)
	}
	var newest []int
	var newestText string
	for _, s := range syms {
		v, ok := strings.CutPrefix(s.Version, "GLIBC_")
		if !ok {
			continue
		}
		if n := versionNumbers(v); n != nil && slices.Compare(newest, n) < 0 {
			newest, newestText = n, v
		}
	}
	if newest == nil {
		return "", "", fmt.Errorf("%s imports nothing from glibc: not the cgo desktop build", path)
	}
	return arch, "libc6 (>= " + newestText + ")", nil
}

// versionNumbers reads "2.34" as [2 34]; nil when it is not such a version.
func versionNumbers(v string) []int {
	var out []int
	for p := range strings.SplitSeq(v, ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}
