package main

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/tc-hib/winres"
	"github.com/tc-hib/winres/version"
)

// winIconSizes are the images of the exe's icon (and the installer's
// .ico): an ICO entry holds at most 256 pixels, and Explorer, the taskbar
// and the Start menu pick from these.
var winIconSizes = []int{16, 24, 32, 48, 64, 128, 256}

// wailsIconID is the icon group's resource ID: Wails' Windows window loads
// its icon from group 3 of the exe (winc.AppIconID), so the window, the
// taskbar and Explorer show the same icon.
const wailsIconID = winres.ID(3)

// winSpec is what one Windows resource object (.syso) is made of.
type winSpec struct {
	Icon    string    // the square app icon: build/appicon.png
	Version string    // the Makefile's VERSION (git describe); see winVersion
	Date    time.Time // the version resource's timestamp, so one tree gives one .syso
	Arch    winres.Arch
}

// winVersion turns the Makefile's VERSION (git describe) into the four
// numbers a Windows version resource and NSIS's VIProductVersion hold:
//
//	v1.2.3                → 1.2.3.0
//	v1.2.3-rc.1           → 1.2.3.0
//	v1.2.3-4-gdfe2d89     → 1.2.3.4   (4 commits after the tag)
//	dfe2d89, dev          → 0.0.0.0   (no tag yet)
//
// The text version (the same string as the .deb's and the release file
// names, debVersion) goes next to it, so nothing is lost.
func winVersion(describe string) ([4]uint16, error) {
	var q [4]uint16
	if _, err := debVersion(describe); err != nil {
		return q, err
	}
	m := winTagged.FindStringSubmatch(describe)
	if m == nil {
		return q, nil
	}
	for i, s := range m[1:] {
		if s == "" {
			continue
		}
		n, err := strconv.ParseUint(s, 10, 16)
		if err != nil {
			return q, fmt.Errorf("version %q: part %q does not fit a Windows version (0…65535): %w", describe, s, err)
		}
		q[i] = uint16(n)
	}
	return q, nil
}

// winTagged reads major.minor.patch of a v-tag and the commits since it.
var winTagged = regexp.MustCompile(`^v?([0-9]+)\.([0-9]+)\.([0-9]+)(?:-[0-9A-Za-z.]+?)??(?:-([0-9]+)-g[0-9a-f]+)?(?:-dirty)?$`)

func quadString(q [4]uint16) string {
	return fmt.Sprintf("%d.%d.%d.%d", q[0], q[1], q[2], q[3])
}

// winIcon scales the app icon to winIconSizes (icons.go's scaling, so the
// .deb's and the exe's icons look alike).
func winIcon(path string) (*winres.Icon, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open the app icon: %w", err)
	}
	defer f.Close()
	pngs, err := icons(f)
	if err != nil {
		return nil, err
	}
	imgs := make([]image.Image, 0, len(winIconSizes))
	for _, n := range winIconSizes {
		img, err := png.Decode(bytes.NewReader(pngs[n]))
		if err != nil {
			return nil, fmt.Errorf("decode the %dx%d icon: %w", n, n, err)
		}
		imgs = append(imgs, img)
	}
	icon, err := winres.NewIconFromImages(imgs)
	if err != nil {
		return nil, fmt.Errorf("make the Windows icon: %w", err)
	}
	return icon, nil
}

// winResources is the exe's resource set: the icon, a manifest and the
// version information.
func winResources(s winSpec) (*winres.ResourceSet, error) {
	icon, err := winIcon(s.Icon)
	if err != nil {
		return nil, err
	}
	quad, err := winVersion(s.Version)
	if err != nil {
		return nil, err
	}
	text, err := debVersion(s.Version)
	if err != nil {
		return nil, err
	}
	rs := &winres.ResourceSet{}
	if err := rs.SetIcon(wailsIconID, icon); err != nil {
		return nil, fmt.Errorf("set the icon resource: %w", err)
	}
	rs.SetManifest(winres.AppManifest{
		Identity:      winres.AssemblyIdentity{Name: "io.github.ccmesh.ccmesh", Version: quad},
		Description:   "ccmesh",
		Compatibility: winres.Win10AndAbove,
		// Runs as the user who starts it: it installs per user and
		// writes only the user's data dir and Run key.
		ExecutionLevel: winres.AsInvoker,
		// The WebView2 window is sharp on every monitor's scale.
		DPIAwareness:        winres.DPIPerMonitorV2,
		UseCommonControlsV6: true,
		LongPathAware:       true,
	})
	vi := version.Info{FileVersion: quad, ProductVersion: quad, Timestamp: s.Date}
	vi.Flags.Prerelease = quad == [4]uint16{}
	for k, v := range map[string]string{
		version.ProductName:      "ccmesh",
		version.FileDescription:  "ccmesh — local proxy for AI clients",
		version.CompanyName:      "ccmesh",
		version.InternalName:     "ccmesh",
		version.OriginalFilename: "ccmesh.exe",
		version.LegalCopyright:   "ccmesh contributors",
		version.ProductVersion:   text,
		version.FileVersion:      text,
	} {
		if err := vi.Set(version.LangDefault, k, v); err != nil {
			return nil, fmt.Errorf("version resource %s: %w", k, err)
		}
	}
	rs.SetVersionInfo(vi)
	return rs, nil
}

// writeSyso writes the resource object that `go build` links into a
// windows/<arch> build of the package whose directory holds it.
func writeSyso(s winSpec, out string) error {
	rs, err := winResources(s)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := rs.WriteObject(&buf, s.Arch); err != nil {
		return fmt.Errorf("write the resource object: %w", err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}

// writeICO writes the icon as an .ico file (the installer's own icon).
func writeICO(iconPNG, out string) error {
	icon, err := winIcon(iconPNG)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := icon.SaveICO(&buf); err != nil {
		return fmt.Errorf("encode the .ico: %w", err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
