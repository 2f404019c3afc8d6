package flinkgo_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/flinkgo/flinkgo/"

// The layering rules of docs/public-api.md, checked on the source tree:
//   - nothing under pkg/ imports the engine's internal/ (the top-level
//     one), except the entry point pkg/flinkgo and its subpackages, which
//     run the engine; pkg/'s own private helpers live in internal
//     directories under pkg/ (pkg/internal/itoa, pkg/connectors/internal/…);
//   - (the exported API of pkg/ naming no type of internal/ is
//     TestExportedAPINamesNoInternalType, on the compiler's types.)
//
// Test files are exempt (a test may use the engine's test helpers), but
// examples are not: they are what users copy.
func TestLayering(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		example := strings.HasSuffix(rel, "_test.go") && strings.HasPrefix(filepath.Base(rel), "example")
		if strings.HasSuffix(rel, "_test.go") && !example {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		entry := strings.HasPrefix(rel, "pkg/flinkgo/")
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, module+"internal/") && (!entry || example) {
				t.Errorf("%s imports %s: only the entry point pkg/flinkgo may use internal/ (move what it needs into pkg/, or into an internal directory under pkg/)", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked: is the tree where the test expects it?", checked)
	}
}
