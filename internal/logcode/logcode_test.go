package logcode

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// root is the module's top directory, from this package's.
const root = "../.."

var codeRE = regexp.MustCompile(`^[A-Z]{2,5}-[0-9]{3}$`)

// defined reads the codes this package declares, in source order.
func defined(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "logcode.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	byCode := map[string]string{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("%s is not a string literal", vs.Names[i])
				}
				code, _ := strconv.Unquote(lit.Value)
				if vs.Names[i].Name == "Field" {
					continue
				}
				if !codeRE.MatchString(code) {
					t.Errorf("%s = %q: not a code (LETTERS-123)", vs.Names[i], code)
				}
				if old, dup := byCode[code]; dup {
					t.Errorf("%s is defined twice: %s and %s", code, old, vs.Names[i])
				}
				byCode[code] = vs.Names[i].Name
			}
		}
	}
	return byCode
}

// TestCodes (item 3): every code is defined once, listed in
// docs/BEHAVIOUR.md#process-log-codes (which lists nothing else), every code
// the docs name anywhere is one of them, and no Go file but this package's
// spells one, so a code cannot be given twice by accident.
func TestCodes(t *testing.T) {
	byCode := defined(t)
	if len(byCode) == 0 {
		t.Fatal("no codes found in logcode.go")
	}
	docs, err := os.ReadFile(filepath.Join(root, "docs", "BEHAVIOUR.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(docs), "\n## Process log codes\n")
	if !ok {
		t.Fatal("docs/BEHAVIOUR.md has no section ## Process log codes")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z]{2,5}-[0-9]{3})` \\|").FindAllStringSubmatch(section, -1) {
		if listed[m[1]] {
			t.Errorf("docs/BEHAVIOUR.md#process-log-codes lists %s twice", m[1])
		}
		listed[m[1]] = true
	}
	for code, name := range byCode {
		if !listed[code] {
			t.Errorf("%s (%s) is not listed in docs/BEHAVIOUR.md#process-log-codes", code, name)
		}
	}
	for code := range listed {
		if byCode[code] == "" {
			t.Errorf("docs/BEHAVIOUR.md#process-log-codes lists %s, which logcode.go does not define", code)
		}
	}

	// Codes named elsewhere in the docs, in backquotes as they are written.
	named := regexp.MustCompile("`([A-Z]{2,5}-[0-9]{3})`")
	mds, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, md := range append(mds, filepath.Join(root, "README.md")) {
		b, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllStringSubmatch(string(b), -1) {
			if byCode[m[1]] == "" {
				t.Errorf("%s names %s, which logcode.go does not define", md, m[1])
			}
		}
	}

	// No code spelled as a string in the Go code outside this package.
	literal := regexp.MustCompile(`"[A-Z]{2,5}-[0-9]{3}"`)
	var spelled []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git", "logcode":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range literal.FindAllString(string(b), -1) {
			spelled = append(spelled, path+": "+m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(spelled)
	for _, s := range spelled {
		t.Errorf("%s: use the logcode constant instead", s)
	}
}
