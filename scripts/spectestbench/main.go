// Command spectestbench measures `flinkgo test` over the tests shipped
// with the example jobs (configs/jobs/*_test.yaml and nexmark/): the wall
// time of one run of the binary per file, the best of -runs, against the
// same binary's `flinkgo validate` of the file's spec in the same run
// (starting the process and compiling the spec, which every test run
// also does): the ratio is what running the tests costs on top.
//
//	make build && go run ./scripts/spectestbench
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/flinkgo", "the flinkgo binary")
	runs := flag.Int("runs", 5, "runs per file (the best counts)")
	flag.Parse()
	files, _ := filepath.Glob("configs/jobs/*_test.yaml")
	more, _ := filepath.Glob("configs/jobs/nexmark/*_test.yaml")
	files = append(files, more...)
	if len(files) == 0 {
		fmt.Fprintln(os.Stderr, "no tests files: run from the repository root")
		os.Exit(1)
	}
	fmt.Printf("flinkgo test per file, best of %d runs of %s (baseline: flinkgo validate of its spec)\n", *runs, *bin)
	fmt.Printf("%-48s %6s %10s %10s %8s\n", "tests file", "tests", "test", "validate", "ratio")
	var total, worst time.Duration
	for _, f := range files {
		spec := strings.TrimSuffix(f, "_test.yaml") + ".yaml"
		test, out, err := best(*runs, *bin, "test", "-o", "json", f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n%s", f, err, out)
			os.Exit(1)
		}
		validate, _, err := best(*runs, *bin, "validate", spec)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", spec, err)
			os.Exit(1)
		}
		var report struct{ Passed int }
		if err := json.Unmarshal([]byte(out), &report); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n%s", f, err, out)
			os.Exit(1)
		}
		fmt.Printf("%-48s %6d %8.1fms %8.1fms %8.2f\n", f, report.Passed, ms(test), ms(validate), float64(test)/float64(validate))
		total += test
		worst = max(worst, test)
	}
	fmt.Printf("%d files: %.0fms in all, %.1fms the slowest (target: well under 1000ms each)\n", len(files), ms(total), ms(worst))
}

// best runs bin args n times and returns the shortest wall time and the
// last standard output.
func best(n int, bin string, args ...string) (time.Duration, string, error) {
	var b time.Duration
	var out []byte
	for i := 0; i < n; i++ {
		start := time.Now()
		var err error
		out, err = exec.Command(bin, args...).Output()
		d := time.Since(start)
		if err != nil {
			return 0, string(out), err
		}
		if i == 0 || d < b {
			b = d
		}
	}
	return b, string(out), nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
