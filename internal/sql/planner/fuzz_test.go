package planner

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzCompile: any text plans or is refused with errors at positions
// inside the script; nothing panics.
func FuzzCompile(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.sql")
	more, _ := filepath.Glob("../../../configs/jobs/nexmark-sql/*.sql")
	for _, p := range append(files, more...) {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(string(b))
		}
	}
	f.Add(ddl + queries)
	f.Fuzz(func(t *testing.T, src string) {
		_, err := Compile("fuzz", src)
		if err == nil {
			return
		}
		errs, ok := err.(Errors)
		if !ok || len(errs) == 0 {
			t.Fatalf("error %T %v", err, err)
		}
		for _, e := range errs {
			if e.Pos.Line < 1 || e.Pos.Col < 1 || e.Msg == "" {
				t.Fatalf("error without a position or message: %+v", e)
			}
		}
	})
}
