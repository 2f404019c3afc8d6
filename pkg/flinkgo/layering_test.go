package flinkgo_test

import (
	"go/ast"
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
//   - the exported API of pkg/ names no type of internal/: every exported
//     declaration of the entry point is checked, since only it imports
//     internal/.
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
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		entry := strings.HasPrefix(rel, "pkg/flinkgo/")
		internalNames := map[string]string{}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, module+"internal/") {
				continue
			}
			if !entry || example {
				t.Errorf("%s imports %s: only the entry point pkg/flinkgo may use internal/ (move what it needs into pkg/, or into an internal directory under pkg/)", rel, p)
			}
			name := filepath.Base(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			internalNames[name] = p
		}
		if entry && len(internalNames) > 0 {
			for _, where := range exportedInternalTypes(f, internalNames) {
				t.Errorf("%s: %s names a type of internal/ in pkg/'s exported API: wrap it in a type of pkg/", rel, where)
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

// exportedInternalTypes lists the exported declarations of f whose types
// name a package of internal/ (by its import name in internal).
func exportedInternalTypes(f *ast.File, internal map[string]string) []string {
	var out []string
	names := func(n ast.Node) (found []string) {
		ast.Inspect(n, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] != "" {
					found = append(found, id.Name+"."+sel.Sel.Name)
				}
			}
			return true
		})
		return found
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Recv != nil && !exportedRecv(d.Recv) {
				continue
			}
			for _, n := range names(d.Type) {
				out = append(out, "func "+d.Name.Name+" ("+n+")")
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						for _, n := range exportedFields(s.Type, names) {
							out = append(out, "type "+s.Name.Name+" ("+n+")")
						}
					}
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.IsExported() && s.Type != nil {
							for _, n := range names(s.Type) {
								out = append(out, id.Name+" ("+n+")")
							}
						}
					}
				}
			}
		}
	}
	return out
}

// exportedFields is names over a type, skipping unexported struct fields
// (a wrapper may hold an internal value privately).
func exportedFields(typ ast.Expr, names func(ast.Node) []string) []string {
	st, ok := typ.(*ast.StructType)
	if !ok {
		return names(typ)
	}
	var out []string
	for _, f := range st.Fields.List {
		exported := len(f.Names) == 0 // embedded: its methods are promoted
		for _, n := range f.Names {
			exported = exported || n.IsExported()
		}
		if exported {
			out = append(out, names(f.Type)...)
		}
	}
	return out
}

func exportedRecv(fl *ast.FieldList) bool {
	typ := fl.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if idx, ok := typ.(*ast.IndexExpr); ok {
		typ = idx.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}
