package app

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The app's concerns that live in packages of their own
// (docs/ARCHITECTURE.md): each declares the small ports it needs from the
// app and never imports it, under any build tag.
var concernPackages = []string{
	"apierr",
	"backup",
	"balance",
	"capture",
	"clients",
	"config",
	"desktop",
	"events",
	"health",
	"metrics",
	"pause",
	"persist",
	"platform",
	"pricing",
	"probe",
	"stats",
	"strictjson",
	"update",
}

func TestConcernPackagesDoNotImportApp(t *testing.T) {
	const app = "github.com/ccmesh/ccmesh/app"
	for _, dir := range concernPackages {
		t.Run(dir, func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join(dir, "*.go"))
			if err != nil {
				t.Fatal(err)
			}
			production := 0
			fset := token.NewFileSet()
			for _, name := range files {
				if !strings.HasSuffix(name, "_test.go") {
					production++
				}
				f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
				if err != nil {
					t.Fatal(err)
				}
				for _, im := range f.Imports {
					if path, _ := strconv.Unquote(im.Path.Value); path == app {
						t.Errorf("%s imports %s; got an import of the app, want none", name, path)
					}
				}
			}
			if production == 0 {
				_, err := os.Stat(dir)
				t.Errorf("app/%s: got 0 production files (%v), want the package's code there", dir, err)
			}
		})
	}
}
