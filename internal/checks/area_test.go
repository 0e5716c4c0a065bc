package checks

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
)

// TestEveryCheckHasAnArea: each check's area is a package directory under
// internal/checks.
func TestEveryCheckHasAnArea(t *testing.T) {
	for _, c := range All() {
		a := Area(c)
		if a == "" {
			t.Errorf("%s: no area", c.ID)
			continue
		}
		if fi, err := os.Stat(filepath.Join(".", a)); err != nil || !fi.IsDir() {
			t.Errorf("%s: area %q is not a package under internal/checks", c.ID, a)
		}
	}
	if got := AreaOf("version-skew"); got != "versions" {
		t.Errorf("AreaOf(version-skew) = %q", got)
	}
	if got := AreaOf("no-such-check"); got != "" {
		t.Errorf("AreaOf(no-such-check) = %q, want empty", got)
	}
}

// TestNoCheckInRegistryRoot keeps this package the registry only (issue
// 26): every registered check's Run is defined in an area package
// (internal/checks/<area>), and no non-test file here builds a check.Check
// or declares a type alias, as the founding checks and their aliases once
// did here.
func TestNoCheckInRegistryRoot(t *testing.T) {
	for _, c := range All() {
		if pkg, ok := inAreaPackage(c); !ok {
			t.Errorf("%s: Run is defined in %s, not in an area package %s/<area>", c.ID, pkg, registryRoot)
		}
	}
	// A Run declared here, in the root, is caught.
	if pkg, ok := inAreaPackage(check.Check{ID: "probe", Run: runDeclaredInRoot}); ok || pkg != registryRoot {
		t.Errorf("a Run declared in the root reads as package %q, in an area %v", pkg, ok)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CompositeLit:
				// check.Check{} alone is Lookup's and Find's "none".
				if sel, ok := x.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Check" && len(x.Elts) > 0 {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "check" {
						t.Errorf("%s: a check.Check is built in the registry's root: move the check to its area package", fset.Position(x.Pos()))
					}
				}
			case *ast.TypeSpec:
				if x.Assign.IsValid() {
					t.Errorf("%s: type alias %s in the registry's root: use package check's name", fset.Position(x.Pos()), x.Name.Name)
				}
			}
			return true
		})
	}
}

// registryRoot is this package's import path.
const registryRoot = "github.com/kubegap/kubegap/internal/checks"

// inAreaPackage returns the package c.Run is defined in, and whether that
// is an area package directly under the registry. The function's name
// ("github.com/kubegap/kubegap/internal/checks/storage.attachLimit.func1")
// holds the package path up to the first dot after the last slash.
func inAreaPackage(c check.Check) (pkg string, ok bool) {
	fn := runtime.FuncForPC(reflect.ValueOf(c.Run).Pointer())
	if fn == nil {
		return "", false
	}
	name := fn.Name()
	slash := strings.LastIndex(name, "/")
	pkg = name
	if dot := strings.Index(name[slash+1:], "."); dot >= 0 {
		pkg = name[:slash+1+dot]
	}
	area, ok := strings.CutPrefix(pkg, registryRoot+"/")
	return pkg, ok && area != "" && !strings.Contains(area, "/")
}

// runDeclaredInRoot stands for a check's Run written in this package.
func runDeclaredInRoot(*check.Context) ([]finding.Finding, error) { return nil, nil }
