package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tc-hib/winres"
)

func TestWinVersion(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"tag", "v1.2.3", "1.2.3.0"},
		{"tag without v", "1.2.3", "1.2.3.0"},
		{"pre-release tag", "v1.2.3-rc.1", "1.2.3.0"},
		{"commits after a tag", "v1.2.3-4-gdfe2d89", "1.2.3.4"},
		{"commits after a tag, dirty", "v1.2.3-4-gdfe2d89-dirty", "1.2.3.4"},
		{"commits after a pre-release", "v1.2.3-rc.1-17-gdfe2d89", "1.2.3.17"},
		{"dirty tag", "v1.2.3-dirty", "1.2.3.0"},
		{"no tag", "dfe2d89", "0.0.0.0"},
		{"no tag, dirty", "dfe2d89-dirty", "0.0.0.0"},
		{"no git", "dev", "0.0.0.0"},
		{"two-part tag", "v1.2", "0.0.0.0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, err := winVersion(tc.in)
			if got := quadString(q); err != nil || got != tc.want {
				t.Errorf("winVersion(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestWinVersionRefuses(t *testing.T) {
	// A part above 65535 does not fit; a bad version is refused as the
	// .deb's is.
	for _, in := range []string{"", "v70000.0.0", "v1.2.3-70000-gabcdef0", "my_branch"} {
		if q, err := winVersion(in); err == nil {
			t.Errorf("winVersion(%q) = %s; want an error", in, quadString(q))
		}
	}
}

// buildWindowsExe cross-builds a tiny Windows program in dir, with the
// resources of spec linked in when withSyso, and returns its path.
func buildWindowsExe(t *testing.T, spec winSpec, withSyso bool, ldflags string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":  "module example.invalid/winexe\n\ngo 1.26\n",
		"main.go": "package main\n\nfunc main() {}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if withSyso {
		if err := writeSyso(spec, filepath.Join(dir, "rsrc_windows_amd64.syso")); err != nil {
			t.Fatalf("writeSyso: %v", err)
		}
	}
	exe := filepath.Join(dir, "winexe.exe")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", exe, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build for windows/amd64: %v\n%s", err, out)
	}
	return exe
}

// The .syso that make package-windows links gives the exe what checkExe
// (and so make test-package-windows) wants, and checkExe notices each
// part that is missing.
func TestWindowsResources(t *testing.T) {
	const describe = "v1.4.2-7-gdfe2d89"
	spec := winSpec{Icon: "../appicon.png", Version: describe, Arch: winres.ArchAMD64,
		Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	cases := []struct {
		name     string
		syso     bool
		ldflags  string
		describe string
		wantErr  []string // each must be in the error; none: no error
	}{
		{"resources and GUI subsystem", true, "-s -w -H windowsgui", describe, nil},
		{"console subsystem", true, "-s -w", describe, []string{"subsystem 3, want the GUI subsystem (2)"}},
		{"no resources", false, "-H windowsgui", describe,
			[]string{"no .rsrc section", "icon group 3 has 0 images, want 7", "no manifest", "file version 0.0.0.0, want 1.4.2.7"}},
		{"another version", true, "-H windowsgui", "v1.4.3", []string{"file version 1.4.2.7, want 1.4.3.0", `version "1.4.2+7.gdfe2d89", want "ccmesh" "1.4.3"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exe := buildWindowsExe(t, spec, tc.syso, tc.ldflags)
			err := checkExe(exe, tc.describe)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("checkExe: %v; want no error", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("checkExe: no error; want %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("checkExe error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestWriteICO(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ccmesh.ico")
	if err := writeICO("../appicon.png", out); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	icon, err := winres.LoadICO(f)
	if err != nil {
		t.Fatalf("LoadICO: %v", err)
	}
	rs := &winres.ResourceSet{}
	if err := rs.SetIcon(winres.ID(1), icon); err != nil {
		t.Fatal(err)
	}
	got := 0
	rs.WalkType(winres.RT_ICON, func(winres.Identifier, uint16, []byte) bool { got++; return true })
	if got != len(winIconSizes) {
		t.Errorf("the .ico holds %d images, want %d", got, len(winIconSizes))
	}
}

// The installer script registers what the brief of a per-user install
// needs, and its Run key value is the one app/platform/autostart_windows.go reads.
func TestInstallerScript(t *testing.T) {
	nsi := readText(t, "../windows/ccmesh.nsi")
	goSrc := readText(t, "../../app/platform/autostart_windows.go")
	appConst := func(name string) string {
		m := regexp.MustCompile(`const ` + name + " = (?:`([^`]*)`|\"([^\"]*)\")").FindStringSubmatch(goSrc)
		if m == nil {
			t.Fatalf("app/platform/autostart_windows.go has no const %s", name)
		}
		return m[1] + m[2]
	}
	define := func(name string) string {
		m := regexp.MustCompile(`(?m)^!define ` + name + ` "([^"]*)"`).FindStringSubmatch(nsi)
		if m == nil {
			t.Fatalf("ccmesh.nsi has no !define %s", name)
		}
		return m[1]
	}
	if got, want := define("RUN_KEY"), appConst("runKey"); got != want {
		t.Errorf("RUN_KEY = %q, want app's runKey %q", got, want)
	}
	if got, want := define("RUN_VALUE"), appConst("runKeyName"); got != want {
		t.Errorf("RUN_VALUE = %q, want app's runKeyName %q", got, want)
	}
	if got, want := define("UNINST_KEY"), `Software\Microsoft\Windows\CurrentVersion\Uninstall\${APP}`; got != want {
		t.Errorf("UNINST_KEY = %q, want %q", got, want)
	}
	install, uninstall, ok := strings.Cut(nsi, `Section "Uninstall"`)
	if !ok {
		t.Fatal(`ccmesh.nsi has no Section "Uninstall"`)
	}
	checks := []struct{ name, in, pattern string }{
		{"per user, no elevation", install, `(?m)^RequestExecutionLevel user$`},
		{"installs under the user's programs", install, `(?m)^InstallDir "\$LOCALAPPDATA\\Programs\\\$\{APP\}"$`},
		{"writes the uninstaller", install, `WriteUninstaller "\$INSTDIR\\uninstall.exe"`},
		{"the uninstall entry under HKCU", install, `WriteRegStr HKCU "\$\{UNINST_KEY\}" "UninstallString" '"\$INSTDIR\\uninstall.exe"'`},
		{"the entry's name", install, `WriteRegStr HKCU "\$\{UNINST_KEY\}" "DisplayName"`},
		{"the entry's version", install, `WriteRegStr HKCU "\$\{UNINST_KEY\}" "DisplayVersion" "\$\{VERSION\}"`},
		{"a Start menu shortcut", install, `CreateShortcut "\$SMPROGRAMS\\\$\{APP\}.lnk" "\$INSTDIR\\ccmesh.exe"`},
		{"start at login is optional, off", install, `(?m)^Section /o "[^"]*login[^"]*" SecRun$`},
		{"the Run value starts the tray on the default data dir", install,
			`WriteRegStr HKCU "\$\{RUN_KEY\}" "\$\{RUN_VALUE\}" '"\$INSTDIR\\ccmesh.exe" --minimized --data "\$APPDATA\\ccmesh"'`},
		{"the version resource", install, `(?m)^VIProductVersion "\$\{VERSION_QUAD\}"$`},
		{"uninstall removes the exe", uninstall, `Delete "\$INSTDIR\\ccmesh.exe"`},
		{"uninstall removes the shortcut", uninstall, `Delete "\$SMPROGRAMS\\\$\{APP\}.lnk"`},
		{"uninstall removes the Run value", uninstall, `DeleteRegValue HKCU "\$\{RUN_KEY\}" "\$\{RUN_VALUE\}"`},
		{"uninstall removes its entry", uninstall, `DeleteRegKey HKCU "\$\{UNINST_KEY\}"`},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !regexp.MustCompile(c.pattern).MatchString(c.in) {
				t.Errorf("ccmesh.nsi lacks %s (pattern %s)", c.name, c.pattern)
			}
		})
	}
	if regexp.MustCompile(`(?i)\bHKLM\b[^\n]*Write|Write[^\n]*\bHKLM\b`).MatchString(nsi) {
		t.Error("ccmesh.nsi writes under HKLM: a per-user install writes only HKCU")
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
