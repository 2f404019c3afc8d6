package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// The custom binary of examples/custom-operator runs its own keyed operator
// ("average") through savepoint -> cancel -> run -s at another parallelism,
// and the files hold what an uninterrupted run gives: for every key each
// running count exactly once, and the last one the key's true average.
func TestCustomOperatorBinarySurvivesSavepointAndRescale(t *testing.T) {
	parallel(t)
	bin := filepath.Join(t.TempDir(), "flinkgo-custom")
	build := exec.Command("go", append(buildArgs(), "-o", bin, "../examples/custom-operator")...)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build the example: %s", out)

	e := newEnv(t)
	e.bin = bin
	e.startDaemon()
	defer e.stopDaemon()
	const records = 20000
	outDir := filepath.Join(e.home, "out")
	spec := func(par int) string {
		return e.writeSpec(fmt.Sprintf("average-%d.yaml", par), fmt.Sprintf(`
name: average-per-key
parallelism: %d
checkpointing: {interval: 200ms}
operators:
  - {uid: numbers, type: datagen, count: %d, rate: 5000}
  - {uid: byDigit, type: keyBy, from: [numbers], expr: 'string(idx %% 10)'}
  - {uid: averages, type: average, from: [byDigit], field: idx}
  - {uid: files, type: file, from: [averages], path: %s, rolling: {onCheckpoint: true}}
`, par, records, outDir))
	}
	// The plain binary does not know the type; the custom one does.
	plain := e.runWith(binary, "validate", spec(2))
	require.Equal(t, 3, plain.code)
	require.Contains(t, plain.stderr, `unknown operator type "average"`)

	id := e.mustRun("run", spec(2))
	e.waitCheckpoint(id) // state to rescale
	sp := e.mustRun("savepoint", id, filepath.Join(e.home, "sp"))
	e.mustRun("cancel", id)
	restored := e.mustRun("run", "-s", sp, spec(3))
	e.waitState(restored, api.StateFinished, 60*time.Second)

	seen := map[string]map[int]int{} // key -> count -> times
	last := map[string]float64{}
	lines := 0
	require.NoError(t, filepath.WalkDir(outDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var rec struct {
				Key   string
				Count int
				Avg   float64
			}
			require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), sc.Text())
			if seen[rec.Key] == nil {
				seen[rec.Key] = map[int]int{}
			}
			seen[rec.Key][rec.Count]++
			if rec.Count == records/10 {
				last[rec.Key] = rec.Avg
			}
			lines++
		}
		return sc.Err()
	}))
	require.Equal(t, records, lines, "one output line per input record")
	require.Len(t, seen, 10)
	for d := 0; d < 10; d++ {
		key := strconv.Itoa(d)
		for c := 1; c <= records/10; c++ {
			require.Equal(t, 1, seen[key][c], "key %s count %d", key, c)
		}
		total := 0
		for idx := 1; idx <= records; idx++ {
			if idx%10 == d {
				total += idx
			}
		}
		require.InDelta(t, float64(total)/float64(records/10), last[key], 1e-6, "average of key %s", key)
	}
}

// runWith runs another binary in e's environment.
func (e *env) runWith(bin string, args ...string) result {
	saved := e.bin
	e.bin = bin
	defer func() { e.bin = saved }()
	return e.run(args...)
}
