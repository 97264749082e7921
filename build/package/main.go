// Command package builds ccmesh's Linux .deb with nfpm (as a library), and
// tells the Debian version that `make package` and `make release` name
// their files with. It is its own Go module so that nfpm and its
// dependencies stay out of the ccmesh binary's module graph.
//
//	go -C build/package run . deb -binary BIN -icon PNG -version VERSION [-date RFC3339] [-maintainer M] -out DIR
//	go -C build/package run . version VERSION
//	go -C build/package run . winversion VERSION
//	go -C build/package run . winres -icon PNG -version VERSION [-date RFC3339] [-arch amd64] -syso FILE [-ico FILE]
//	go -C build/package run . checkexe -version VERSION EXE
//
// `make package` and `make release` run it; paths are best absolute, since
// -C changes the directory.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/tc-hib/winres"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "package:", err)
		os.Exit(1)
	}
}

const usage = `usage:
  package deb -binary BIN -icon PNG -version VERSION [-date RFC3339] [-maintainer "Name <email>"] -out DIR
  package version VERSION
  package winversion VERSION
  package winres -icon PNG -version VERSION [-date RFC3339] [-arch amd64] -syso FILE [-ico FILE]
  package checkexe -version VERSION EXE`

func run(args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "version":
		if len(args) != 2 {
			return errors.New(usage)
		}
		v, err := debVersion(args[1])
		if err != nil {
			return err
		}
		fmt.Println(v)
		return nil
	case "deb":
		return runDeb(args[1:])
	case "winversion":
		if len(args) != 2 {
			return errors.New(usage)
		}
		q, err := winVersion(args[1])
		if err != nil {
			return err
		}
		fmt.Println(quadString(q))
		return nil
	case "winres":
		return runWinres(args[1:])
	case "checkexe":
		return runCheckExe(args[1:])
	default:
		return fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
}

func runDeb(args []string) error {
	var s debSpec
	var date string
	fs := flag.NewFlagSet("deb", flag.ContinueOnError)
	fs.StringVar(&s.Binary, "binary", "", "the desktop build (bin/ccmesh-desktop)")
	fs.StringVar(&s.Icon, "icon", "", "the square app icon, at least 512 pixels (build/appicon.png)")
	fs.StringVar(&s.Version, "version", "", "the Makefile's VERSION (git describe --tags --always --dirty)")
	fs.StringVar(&date, "date", "", "the commit's date (RFC 3339): the files' mtime, so one tree gives one .deb")
	fs.StringVar(&s.Maintainer, "maintainer", "ccmesh maintainers <maintainers@ccmesh.invalid>", "the Maintainer field")
	fs.StringVar(&s.OutDir, "out", "dist", "where the .deb goes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if s.Binary == "" || s.Icon == "" || s.Version == "" || fs.NArg() > 0 {
		return errors.New(usage)
	}
	if date != "" {
		t, err := time.Parse(time.RFC3339, date)
		if err != nil {
			return fmt.Errorf("-date: %w", err)
		}
		s.Date = t.UTC()
	}
	out, err := buildDeb(s)
	if err != nil {
		return err
	}
	fmt.Println(out)
	return nil
}

func runWinres(args []string) error {
	var s winSpec
	var date, arch, syso, ico string
	fs := flag.NewFlagSet("winres", flag.ContinueOnError)
	fs.StringVar(&s.Icon, "icon", "", "the square app icon, at least 512 pixels (build/appicon.png)")
	fs.StringVar(&s.Version, "version", "", "the Makefile's VERSION (git describe --tags --always --dirty)")
	fs.StringVar(&date, "date", "", "the commit's date (RFC 3339): the version resource's timestamp")
	fs.StringVar(&arch, "arch", "amd64", "the GOARCH the object is linked into (amd64 or arm64)")
	fs.StringVar(&syso, "syso", "", "the resource object to write (name it *_windows_<arch>.syso)")
	fs.StringVar(&ico, "ico", "", "also write the icon as an .ico file here (the installer's icon)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if s.Icon == "" || s.Version == "" || syso == "" || fs.NArg() > 0 {
		return errors.New(usage)
	}
	switch arch {
	case "amd64":
		s.Arch = winres.ArchAMD64
	case "arm64":
		s.Arch = winres.ArchARM64
	default:
		return fmt.Errorf("-arch %q: want amd64 or arm64", arch)
	}
	if date != "" {
		t, err := time.Parse(time.RFC3339, date)
		if err != nil {
			return fmt.Errorf("-date: %w", err)
		}
		s.Date = t.UTC()
	}
	if err := writeSyso(s, syso); err != nil {
		return err
	}
	if ico != "" {
		return writeICO(s.Icon, ico)
	}
	return nil
}

func runCheckExe(args []string) error {
	var describe string
	fs := flag.NewFlagSet("checkexe", flag.ContinueOnError)
	fs.StringVar(&describe, "version", "", "the Makefile's VERSION the exe was built with")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if describe == "" || fs.NArg() != 1 {
		return errors.New(usage)
	}
	if err := checkExe(fs.Arg(0), describe); err != nil {
		return err
	}
	fmt.Printf("%s: amd64, GUI subsystem, icon (%d images), manifest, version %s\n", fs.Arg(0), len(winIconSizes), describe)
	return nil
}
