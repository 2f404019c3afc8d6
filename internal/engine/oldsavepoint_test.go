package engine_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// testdata/oldsavepoint holds a stop-with-savepoint written by flinkgo
// 259c5dd (before the public API split and the state encoder), with the file
// sink's committed output: testdata/oldsavepoint/job.yaml, parallelism 2,
// datagen -> keyBy -> count, keyBy -> reduce, -> file. Its datagen splits
// are unversioned, its file sink items of format 1, its keyed state in key
// groups of 128. This version must restore it: the job below (the same
// uids, datagen bounded at 10,000) finishes with the results of an
// uninterrupted run over idx 1..10,000.
func TestRestoresSavepointOfOlderVersion(t *testing.T) {
	dir := t.TempDir()
	runtimetest.CopyTree(t, "testdata/oldsavepoint/savepoint", filepath.Join(dir, "savepoint"))
	runtimetest.CopyTree(t, "testdata/oldsavepoint/out", filepath.Join(dir, "out"))
	name := runtimetest.UniqueName(t)
	spec := fmt.Sprintf(`
name: old-savepoint-keyed
parallelism: 3
checkpointing: {interval: 100ms}
operators:
  - {uid: numbers, type: datagen, count: 10000, format: json}
  - {uid: byMod, type: keyBy, from: [numbers], expr: 'string(idx %% 7)'}
  - {uid: counts, type: count, from: [byMod]}
  - {uid: byMod2, type: keyBy, from: [numbers], expr: 'string(idx %% 5)'}
  - {uid: sums, type: reduce, from: [byMod2], init: '{"sum": 0}', expr: '{"sum": acc.sum + idx, "mod": idx %% 5}'}
  - {uid: files, type: file, from: [numbers], path: %s, rolling: {onCheckpoint: true}}
  - {uid: countsOut, type: test-collect, from: [counts], name: %s-counts, parallelism: 1}
  - {uid: sumsOut, type: test-collect, from: [sums], name: %s-sums, parallelism: 1}
`, filepath.Join(dir, "out"), name, name)
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(),
		Restore: filepath.Join(dir, "savepoint")})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)

	r, err := verify.Run(verify.Options{Path: filepath.Join(dir, "out"), Field: "idx"})
	require.NoError(t, err)
	require.Equal(t, int64(1), r.First)
	require.Equal(t, int64(10000), r.Last)
	require.Zero(t, r.GapCount, "gaps %v", r.Gaps)
	require.Zero(t, r.Duplicates, "duplicates")

	wantCounts, wantSums := map[string]int{}, map[string]int{}
	for i := 1; i <= 10000; i++ {
		wantCounts[strconv.Itoa(i%7)]++
		wantSums[strconv.Itoa(i%5)] += i
	}
	require.Equal(t, wantCounts, runtimetest.MaxCounts(t, runtimetest.Values(name+"-counts")))
	sums := map[string]int{}
	for _, v := range runtimetest.Values(name + "-sums") {
		var rec struct{ Sum, Mod int }
		require.NoError(t, json.Unmarshal([]byte(v), &rec), v)
		sums[strconv.Itoa(rec.Mod)] = max(sums[strconv.Itoa(rec.Mod)], rec.Sum)
	}
	require.Equal(t, wantSums, sums)
}
