package flinkgo_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// publicAPI is the exported API of every package under pkg/, as the
// compiler sees it: the export data `go list -export` leaves in the build
// cache (so the types are resolved exactly, aliases, generic instances and
// promoted methods included, and a cached build costs about a second).
type publicAPI struct {
	pkgs []*types.Package // the packages under pkg/, by path
}

var (
	surfaceOnce sync.Once
	surface     *publicAPI
	surfaceErr  error
)

func loadPublicAPI(t *testing.T) *publicAPI {
	t.Helper()
	surfaceOnce.Do(func() { surface, surfaceErr = readPublicAPI(filepath.Join("..", "..")) })
	if surfaceErr != nil {
		t.Fatal(surfaceErr)
	}
	return surface
}

func readPublicAPI(root string) (*publicAPI, error) {
	args := []string{"list", "-export", "-deps", "-json=ImportPath,Export,DepOnly,Error"}
	if raceEnabled { // reuse what `go test -race` compiled
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./pkg/...")...)
	cmd.Dir = root
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export ./pkg/...: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	var roots []string
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath, Export string
			DepOnly            bool
			Error              *struct{ Err string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		if p.Error != nil {
			return nil, fmt.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly {
			roots = append(roots, p.ImportPath)
		}
	}
	sort.Strings(roots)
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	a := &publicAPI{}
	for _, path := range roots {
		p, err := imp.Import(path)
		if err != nil {
			return nil, err
		}
		a.pkgs = append(a.pkgs, p)
	}
	return a, nil
}

// rel is a package's path inside the module ("pkg/state").
func rel(path string) string { return strings.TrimPrefix(path, module) }

// importableOutside reports whether a program outside this module may
// import the package: no path element is "internal" (Go's rule, which
// also closes the standard library's and other modules' internal
// packages).
func importableOutside(path string) bool {
	for _, el := range strings.Split(path, "/") {
		if el == "internal" {
			return false
		}
	}
	return true
}

// The exported API of pkg/ names no type a user cannot import: no
// exported function, method, field, variable, constant or type (alias,
// generic instance or promoted method included) of a public package under
// pkg/ has a type of internal/, of pkg/internal/ or of
// pkg/connectors/internal/. A user could hold such a value but not name
// it, document it or build one. (TestLayering checks the imports.)
func TestExportedAPINamesNoInternalType(t *testing.T) {
	a := loadPublicAPI(t)
	checked := 0
	for _, p := range a.pkgs {
		if !importableOutside(p.Path()) {
			continue
		}
		w := &apiWalker{seen: map[types.Type]bool{}}
		for _, name := range p.Scope().Names() {
			obj := p.Scope().Lookup(name)
			if !obj.Exported() {
				continue
			}
			checked++
			w.found = w.found[:0]
			w.object(obj, rel(p.Path())+"."+name)
			reported := map[string]bool{} // each internal type once per declaration
			for _, v := range w.found {
				if !reported[v.what] {
					reported[v.what] = true
					t.Errorf("%s: exported API names %s, which a user cannot import: wrap it in a type of pkg/, or move the type into pkg/", v.where, v.what)
				}
			}
		}
	}
	if checked < 300 {
		t.Fatalf("only %d exported identifiers under pkg/: did the loader find the packages?", checked)
	}
}

// apiWalker follows the types an exported declaration lets a user reach.
type apiWalker struct {
	seen  map[types.Type]bool
	found []struct{ where, what string }
}

func (w *apiWalker) object(obj types.Object, where string) {
	switch o := obj.(type) {
	case *types.TypeName:
		if o.IsAlias() {
			w.typ(o.Type(), where+" (alias)")
			return
		}
		w.named(o.Type(), where)
	case *types.Func:
		w.typ(o.Type(), where)
	default: // *types.Var, *types.Const
		w.typ(o.Type(), where)
	}
}

// named walks a defined type: its underlying type (exported fields only)
// and the exported methods of T and *T, promoted ones included.
func (w *apiWalker) named(t types.Type, where string) {
	if w.seen[t] {
		return
	}
	w.seen[t] = true
	n, ok := t.(*types.Named)
	if !ok {
		w.typ(t, where)
		return
	}
	if tp := n.TypeParams(); tp != nil {
		for i := range tp.Len() {
			w.typ(tp.At(i).Constraint(), where+"["+tp.At(i).Obj().Name()+"]")
		}
	}
	for i := range n.TypeArgs().Len() {
		w.typ(n.TypeArgs().At(i), where+"[type argument]")
	}
	w.underlying(n.Underlying(), where)
	if types.IsInterface(n) {
		return // its methods are the underlying interface's
	}
	for m := range types.NewMethodSet(types.NewPointer(n)).Methods() {
		if m.Obj().Exported() {
			w.typ(m.Type(), where+"."+m.Obj().Name())
		}
	}
}

func (w *apiWalker) underlying(u types.Type, where string) {
	switch u := u.(type) {
	case *types.Struct:
		for f := range u.Fields() {
			if f.Exported() || f.Embedded() {
				w.typ(f.Type(), where+"."+f.Name())
			}
		}
	case *types.Interface:
		for i := range u.NumEmbeddeds() {
			w.typ(u.EmbeddedType(i), where+" (embedded)")
		}
		for m := range u.Methods() {
			if m.Exported() {
				w.typ(m.Type(), where+"."+m.Name())
			}
		}
	default:
		w.typ(u, where)
	}
}

func (w *apiWalker) typ(t types.Type, where string) {
	switch t := t.(type) {
	case *types.Alias:
		w.typ(types.Unalias(t), where)
	case *types.Named:
		obj := t.Obj()
		if obj.Pkg() == nil { // error, comparable
			return
		}
		if !importableOutside(obj.Pkg().Path()) {
			w.found = append(w.found, struct{ where, what string }{where, obj.Pkg().Path() + "." + obj.Name()})
			return
		}
		for i := range t.TypeArgs().Len() {
			w.typ(t.TypeArgs().At(i), where+"[type argument]")
		}
		// A type of this module is followed: an unexported one (returned
		// by an exported function) still shows its exported methods and
		// fields. Other modules' types are theirs to check.
		if strings.HasPrefix(obj.Pkg().Path(), module) {
			w.named(t.Origin(), where)
		}
	case *types.Pointer:
		w.typ(t.Elem(), where)
	case *types.Slice:
		w.typ(t.Elem(), where)
	case *types.Array:
		w.typ(t.Elem(), where)
	case *types.Chan:
		w.typ(t.Elem(), where)
	case *types.Map:
		w.typ(t.Key(), where)
		w.typ(t.Elem(), where)
	case *types.Signature:
		if tp := t.TypeParams(); tp != nil {
			for i := range tp.Len() {
				w.typ(tp.At(i).Constraint(), where+"["+tp.At(i).Obj().Name()+"]")
			}
		}
		for v := range t.Params().Variables() {
			w.typ(v.Type(), where+" parameter")
		}
		for v := range t.Results().Variables() {
			w.typ(v.Type(), where+" result")
		}
	case *types.Struct, *types.Interface:
		w.underlying(t, where)
	case *types.Union:
		for i := range t.Len() {
			w.typ(t.Term(i).Type(), where)
		}
	case *types.TypeParam, *types.Basic, *types.Tuple, nil:
	default:
		panic(fmt.Sprintf("%s: unexpected type %T", where, t))
	}
}

// The exported top-level identifiers of each public package under pkg/
// stay within the ceiling docs/public-api.md gives it: every export is a
// promise to users, so a new one is a decision (raise the ceiling in the
// table, saying in the page why it is contract) rather than an accident.
// A package the table does not list fails too.
func TestExportedIdentifiersWithinDocumentedCeiling(t *testing.T) {
	a := loadPublicAPI(t)
	ceilings := documentedCeilings(t)
	total, documented := 0, 0
	for _, p := range a.pkgs {
		if !importableOutside(p.Path()) {
			continue
		}
		n := exportedCount(p)
		total += n
		name := rel(p.Path())
		ceiling, ok := ceilings[name]
		documented += ceiling
		switch {
		case !ok:
			t.Errorf("%s exports %d identifiers but has no row in docs/public-api.md's table: add one (what it is for, who uses it)", name, n)
		case n > ceiling:
			t.Errorf("%s exports %d identifiers, over the ceiling of %d in docs/public-api.md: unexport what users do not need, or raise the ceiling and say why it is contract", name, n, ceiling)
		case n < ceiling:
			t.Logf("%s exports %d identifiers, under its ceiling of %d: lower it in docs/public-api.md", name, n, ceiling)
		}
		delete(ceilings, name)
	}
	for name := range ceilings {
		t.Errorf("docs/public-api.md gives a ceiling for %s, which is not a public package under pkg/", name)
	}
	t.Logf("%d exported identifiers in the public packages under pkg/ (ceilings add up to %d)", total, documented)
}

func exportedCount(p *types.Package) int {
	n := 0
	for _, name := range p.Scope().Names() {
		if token.IsExported(name) {
			n++
		}
	}
	return n
}

// ceilingRow is a row of the table in docs/public-api.md:
// | `pkg/state` | 40 | …
var ceilingRow = regexp.MustCompile("^\\| `(pkg/[a-z0-9/]+)` \\| (\\d+) \\|")

func documentedCeilings(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "public-api.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := ceilingRow.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.Atoi(m[2])
			if _, dup := out[m[1]]; dup {
				t.Errorf("docs/public-api.md lists %s twice", m[1])
			}
			out[m[1]] = n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("docs/public-api.md has no table of ceilings (rows like | `pkg/state` | 40 | …)")
	}
	return out
}
