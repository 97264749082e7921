package main

import (
	"debug/pe"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/tc-hib/winres"
	"github.com/tc-hib/winres/version"
)

// exeInfo is what checkExe reads from a Windows executable.
type exeInfo struct {
	Machine        uint16 // pe.IMAGE_FILE_MACHINE_*
	Subsystem      uint16 // pe.IMAGE_SUBSYSTEM_*
	HasRsrc        bool   // a .rsrc section
	IconImages     int    // images in the icon group wailsIconID
	HasManifest    bool
	FileVersion    [4]uint16 // the fixed part of the version resource
	ProductVersion string    // its ProductVersion string (en-US)
	ProductName    string
}

// readExe reads the headers with debug/pe and the resources with winres.
func readExe(path string) (exeInfo, error) {
	var info exeInfo
	f, err := pe.Open(path)
	if err != nil {
		return info, fmt.Errorf("read the PE headers of %s: %w", path, err)
	}
	defer f.Close()
	info.Machine = f.Machine
	switch h := f.OptionalHeader.(type) {
	case *pe.OptionalHeader64:
		info.Subsystem = h.Subsystem
	case *pe.OptionalHeader32:
		info.Subsystem = h.Subsystem
	default:
		return info, fmt.Errorf("%s has no optional header", path)
	}
	info.HasRsrc = f.Section(".rsrc") != nil
	if !info.HasRsrc {
		return info, nil
	}

	r, err := os.Open(path)
	if err != nil {
		return info, fmt.Errorf("open %s: %w", path, err)
	}
	defer r.Close()
	rs, err := winres.LoadFromEXE(r)
	if err != nil {
		return info, fmt.Errorf("read the resources of %s: %w", path, err)
	}
	if _, err := rs.GetIcon(wailsIconID); err == nil {
		// One group in the exe, so its images are all the RT_ICON entries.
		rs.WalkType(winres.RT_ICON, func(winres.Identifier, uint16, []byte) bool { info.IconImages++; return true })
	}
	rs.WalkType(winres.RT_MANIFEST, func(winres.Identifier, uint16, []byte) bool { info.HasManifest = true; return false })
	var raw []byte
	rs.WalkType(winres.RT_VERSION, func(_ winres.Identifier, _ uint16, data []byte) bool { raw = data; return false })
	if raw != nil {
		vi, err := version.FromBytes(raw)
		if err != nil {
			return info, fmt.Errorf("read the version resource of %s: %w", path, err)
		}
		info.FileVersion = vi.FileVersion
		// The string tables are reachable only through the JSON form.
		js, err := vi.MarshalJSON()
		if err != nil {
			return info, fmt.Errorf("read the version strings of %s: %w", path, err)
		}
		var v struct {
			Info map[string]map[string]string `json:"info"`
		}
		if err := json.Unmarshal(js, &v); err != nil {
			return info, fmt.Errorf("read the version strings of %s: %w", path, err)
		}
		t := v.Info[fmt.Sprintf("%04x", version.LangDefault)]
		info.ProductVersion, info.ProductName = t[version.ProductVersion], t[version.ProductName]
	}
	return info, nil
}

// checkExe says what a Windows desktop build of ccmesh lacks: amd64, the
// GUI subsystem (no console window opens beside it), and a resource
// section with the icon, a manifest and the version of VERSION.
func checkExe(path, describe string) error {
	info, err := readExe(path)
	if err != nil {
		return err
	}
	quad, err := winVersion(describe)
	if err != nil {
		return err
	}
	text, err := debVersion(describe)
	if err != nil {
		return err
	}
	var errs []error
	if info.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
		errs = append(errs, fmt.Errorf("machine %#x, want amd64 (%#x)", info.Machine, pe.IMAGE_FILE_MACHINE_AMD64))
	}
	if info.Subsystem != pe.IMAGE_SUBSYSTEM_WINDOWS_GUI {
		errs = append(errs, fmt.Errorf("subsystem %d, want the GUI subsystem (%d): build with -ldflags -H=windowsgui", info.Subsystem, pe.IMAGE_SUBSYSTEM_WINDOWS_GUI))
	}
	if !info.HasRsrc {
		errs = append(errs, errors.New("no .rsrc section: the .syso was not linked"))
	}
	if info.IconImages != len(winIconSizes) {
		errs = append(errs, fmt.Errorf("icon group %d has %d images, want %d", wailsIconID, info.IconImages, len(winIconSizes)))
	}
	if !info.HasManifest {
		errs = append(errs, errors.New("no manifest resource"))
	}
	if info.FileVersion != quad {
		errs = append(errs, fmt.Errorf("file version %s, want %s", quadString(info.FileVersion), quadString(quad)))
	}
	if info.ProductVersion != text || info.ProductName != "ccmesh" {
		errs = append(errs, fmt.Errorf("version strings: product %q version %q, want \"ccmesh\" %q", info.ProductName, info.ProductVersion, text))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
