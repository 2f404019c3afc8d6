package file_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
	"github.com/flinkgo/flinkgo/pkg/connectors/discard"
	"github.com/flinkgo/flinkgo/pkg/connectors/file"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

func planSpec(path, prefix string) string {
	return fmt.Sprintf(`
name: plan
checkpointing: {interval: 1h}
operators:
  - {uid: gen, type: datagen, rate: 1000}
  - {uid: files, type: file, from: [gen], path: %s, partPrefix: %s, bucket: none}
`, path, prefix)
}

// A restore plan checks the options the file sink's state depends on: a
// changed path or part prefix is refused (the restored pending files are
// under the old path, named with the old prefix), and the plan says what
// the restore does in the output directory.
func TestRestorePlanChecksFileSinkPath(t *testing.T) {
	mem := vfs.NewMem()
	j := runtimetest.Start(t, planSpec("/out", "part"), runtimetest.Options{Types: testTypes, FS: mem, CheckpointsDir: "/chk"})
	time.Sleep(100 * time.Millisecond)
	sp, _, err := j.Savepoint("/sp")
	require.NoError(t, err)
	require.NoError(t, j.Cancel())
	r, err := engine.LoadRestore(mem, sp)
	require.NoError(t, err)
	plan := func(path, prefix string) (*engine.Graph, error) {
		return engine.Compile(testRegistry, "x.yaml", []byte(planSpec(path, prefix)), engine.Defaults{})
	}

	g, err := plan("/out", "part")
	require.NoError(t, err)
	p := engine.PlanRestore(g, r, engine.RestoreOptions{})
	require.NoError(t, p.Err())
	files := p.Matched[1]
	require.Equal(t, "files", files.UID)
	require.Len(t, files.Outputs, 1)
	require.Equal(t, "/out", files.Outputs[0].Path)
	require.Contains(t, files.Outputs[0].Effect, "commits what it left pending")
	require.Contains(t, files.Outputs[0].Effect, "inProgressFiles 1")

	for _, c := range []struct{ path, prefix, want string }{
		{"/elsewhere", "part", `operator "files" has path "/out" in the snapshot and "/elsewhere" now`},
		{"/out", "other", `operator "files" has partPrefix "part" in the snapshot and "other" now`},
	} {
		g, err := plan(c.path, c.prefix)
		require.NoError(t, err)
		p := engine.PlanRestore(g, r, engine.RestoreOptions{})
		require.ErrorContains(t, p.Err(), c.want)
		require.NotEmpty(t, p.Matched[1].Problem)
		require.Empty(t, p.Matched[1].Outputs, "a refused operator's outputs are not described as restored")
	}
}

// A job whose file sink finds its directory owned by another job (a job of
// another daemon) fails at once, without restarts and without touching the
// owner's files: the newcomer is refused, never the owner.
func TestSinkRefusesAnotherJobsDirectory(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, runtime.ClaimOutput(mem, "/out", runtime.OutputClaim{Job: "owner", Operator: "files"}))
	require.NoError(t, vfs.WriteFileAtomic(mem, "/out/.part-0-0.inprogress.abc", []byte("{\"idx\": 1}\n")))
	require.NoError(t, vfs.WriteFileAtomic(mem, "/out/part-0-0", []byte("{\"idx\": 1}\n")))
	j := runtimetest.Start(t, `
name: newcomer
checkpointing: {interval: 50ms}
restartStrategy: {type: fixed-delay, attempts: 5, delay: 10ms}
operators:
  - {uid: gen, type: datagen, rate: 1000}
  - {uid: files, type: file, from: [gen], path: /out, bucket: none}
`, runtimetest.Options{Types: testTypes, FS: mem, CheckpointsDir: "/chk"})
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, 10*time.Second))
	require.Zero(t, j.Info().Restarts, "no restart can cure it")
	require.Contains(t, j.Info().Error, "/out belongs to job owner")
	entries, err := mem.ReadDir("/out")
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{runtime.OwnerFile, ".part-0-0.inprogress.abc", "part-0-0"}, names, "the owner's files are untouched")
}

// testTypes are the operator types this file's specs use.
var testTypes = slices.Concat(file.Definitions(), datagen.Definitions(), discard.Definitions())

// testRegistry holds testTypes and the test operators of runtimetest.
var testRegistry = runtime.MustRegistry(slices.Concat(runtimetest.Definitions(), testTypes)...)
