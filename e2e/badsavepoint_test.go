package e2e

import (
	le "encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/scorecard"
)

// restoreSpec is the job the savepoints are taken of: a keyed count whose
// state lives in cnt, written to files under OUT.
const restoreSpec = `
name: restorable
checkpointing: {interval: 100ms}
operators:
  - {uid: gen, type: datagen, rate: 2000}
  - {uid: key, type: keyBy, from: [gen], expr: "idx % 7"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: files, type: file, from: [cnt], path: OUT, bucket: none}
`

// savepointCase damages a copy of a good savepoint (or names a path that is
// not one) and says how `run -s` must refuse it.
type savepointCase struct {
	name string
	// damage prepares the case under dir (a copy of the good savepoint)
	// and returns the path to give to -s.
	damage func(t *testing.T, dir string) string
	// spec is the job to restore into (default: restoreSpec).
	spec string
	// want are substrings of the error, naming the file, field or cause.
	want []string
	// notFound: the path does not exist (exit 4, not 3).
	notFound bool
	// inspectOK: `savepoint inspect` accepts it (an incompatible job, not
	// a damaged savepoint).
	inspectOK bool
}

var crc32c = crc32.MakeTable(crc32.Castagnoli)

func flipByte(t *testing.T, path string, at func(n int) int) {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[at(len(data))] ^= 0xff
	require.NoError(t, os.WriteFile(path, data, 0o600))
}

// frameMetadata writes a _metadata frame by hand: magic, version u16 LE,
// body length u32 LE, body, crc32c u32 LE of everything before.
func frameMetadata(version uint16, body []byte) []byte {
	out := []byte("FGMETA\r\n")
	out = le.LittleEndian.AppendUint16(out, version)
	out = le.LittleEndian.AppendUint32(out, uint32(len(body)))
	out = append(out, body...)
	return le.LittleEndian.AppendUint32(out, crc32.Checksum(out, crc32c))
}

// rewriteMetadata decodes dir's _metadata, lets edit change it and writes
// it back as a valid frame: the damage is in the content, not the frame.
func rewriteMetadata(t *testing.T, dir string, edit func(m *checkpoint.Metadata)) {
	path := filepath.Join(dir, "_metadata")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	m, err := checkpoint.DecodeMetadata(data)
	require.NoError(t, err)
	edit(m)
	data, err = checkpoint.EncodeMetadata(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
}

func savepointCases(spec func(string) string) []savepointCase {
	state := func(dir string) string { return filepath.Join(dir, "cnt-0.state") }
	return []savepointCase{
		{name: "truncated _metadata", damage: func(t *testing.T, dir string) string {
			data, err := os.ReadFile(filepath.Join(dir, "_metadata"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "_metadata"), data[:len(data)/2], 0o600))
			return dir
		}, want: []string{"_metadata", "truncated"}},
		{name: "_metadata cut inside its header", damage: func(t *testing.T, dir string) string {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "_metadata"), []byte("FGMETA\r\n\x01"), 0o600))
			return dir
		}, want: []string{"_metadata", "truncated"}},
		{name: "flipped byte in _metadata", damage: func(t *testing.T, dir string) string {
			flipByte(t, filepath.Join(dir, "_metadata"), func(n int) int { return n / 2 })
			return dir
		}, want: []string{"_metadata", "checksum mismatch"}},
		{name: "flipped byte in the _metadata checksum", damage: func(t *testing.T, dir string) string {
			flipByte(t, filepath.Join(dir, "_metadata"), func(n int) int { return n - 1 })
			return filepath.Join(dir, "_metadata")
		}, want: []string{"_metadata", "checksum mismatch"}},
		{name: "_metadata of a future format version", damage: func(t *testing.T, dir string) string {
			data, err := os.ReadFile(filepath.Join(dir, "_metadata"))
			require.NoError(t, err)
			body := data[14 : len(data)-4]
			require.NoError(t, os.WriteFile(filepath.Join(dir, "_metadata"), frameMetadata(checkpoint.MetadataVersion+1, body), 0o600))
			return dir
		}, want: []string{"_metadata", "format version 2 is not supported", "reads version 1", "different flinkgo release"}},
		{name: "_metadata that is not JSON inside a valid frame", damage: func(t *testing.T, dir string) string {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "_metadata"), frameMetadata(checkpoint.MetadataVersion, []byte("{not json")), 0o600))
			return dir
		}, want: []string{"_metadata", "malformed"}},
		{name: "_metadata that is not flinkgo's", damage: func(t *testing.T, dir string) string {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "_metadata"), []byte("\x00\x00\x00\x01 Flink savepoint"), 0o600))
			return dir
		}, want: []string{"_metadata", "not a flinkgo _metadata file"}},
		{name: "flipped byte in a state file", damage: func(t *testing.T, dir string) string {
			flipByte(t, state(dir), func(n int) int { return n / 2 })
			return dir
		}, want: []string{"cnt-0.state", "checksum mismatch"}},
		{name: "missing state file", damage: func(t *testing.T, dir string) string {
			require.NoError(t, os.Remove(state(dir)))
			return dir
		}, want: []string{"cnt-0.state", "missing", "incomplete"}},
		{name: "state file of the wrong size", damage: func(t *testing.T, dir string) string {
			f, err := os.OpenFile(state(dir), os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.Write([]byte("tail"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			return dir
		}, want: []string{"cnt-0.state", "bytes, _metadata says"}},
		{name: "truncated state file", damage: func(t *testing.T, dir string) string {
			require.NoError(t, os.Truncate(state(dir), 5))
			return dir
		}, want: []string{"cnt-0.state", "has 5 bytes"}},
		{name: "state file name with a path in _metadata", damage: func(t *testing.T, dir string) string {
			rewriteMetadata(t, dir, func(m *checkpoint.Metadata) { m.Operator("cnt").Subtasks[0].File = "../cnt-0.state" })
			return dir
		}, want: []string{"../cnt-0.state", "not a plain file name"}},
		{name: "operator parallelism 0 in _metadata", damage: func(t *testing.T, dir string) string {
			rewriteMetadata(t, dir, func(m *checkpoint.Metadata) { m.Operator("cnt").Parallelism = 0 })
			return dir
		}, want: []string{"_metadata", "malformed", `"cnt"`, "parallelism 0"}},
		{name: "directory without _metadata", damage: func(t *testing.T, dir string) string {
			require.NoError(t, os.Remove(filepath.Join(dir, "_metadata")))
			return dir
		}, want: []string{"has no _metadata", "not a savepoint"}},
		{name: "empty directory", damage: func(t *testing.T, dir string) string {
			empty := dir + "-empty"
			require.NoError(t, os.Mkdir(empty, 0o700))
			return empty
		}, want: []string{"has no _metadata"}},
		{name: "a file that is not a savepoint", damage: func(t *testing.T, dir string) string {
			return filepath.Join(dir, "cnt-0.state")
		}, want: []string{"cnt-0.state", "is a file, not a snapshot directory"}},
		{name: "a path that does not exist", notFound: true, damage: func(t *testing.T, dir string) string {
			return dir + "-nowhere"
		}, want: []string{"-nowhere", "does not exist"}},
		{name: "state for an operator the job lacks (no -n)", spec: spec(`
name: restorable
checkpointing: {interval: 100ms}
operators:
  - {uid: gen, type: datagen, rate: 2000}
  - {uid: files, type: file, from: [gen], path: OUT, bucket: none}
`), damage: func(_ *testing.T, dir string) string { return dir },
			want: []string{"cnt (type count", "--allow-non-restored-state"}, inspectOK: true},
		{name: "keyed operator with a changed maxParallelism", spec: spec(`
name: restorable
maxParallelism: 256
checkpointing: {interval: 100ms}
operators:
  - {uid: gen, type: datagen, rate: 2000}
  - {uid: key, type: keyBy, from: [gen], expr: "idx % 7"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: files, type: file, from: [cnt], path: OUT, bucket: none}
`), damage: func(_ *testing.T, dir string) string { return dir },
			want: []string{`"cnt"`, "maxParallelism 128", "maxParallelism 256"}, inspectOK: true},
		{name: "uid whose operator changed type", spec: spec(`
name: restorable
checkpointing: {interval: 100ms}
operators:
  - {uid: gen, type: datagen, rate: 2000}
  - {uid: cnt, type: filter, from: [gen], expr: "idx % 2 == 0"}
  - {uid: files, type: file, from: [cnt], path: OUT, bucket: none}
`), damage: func(_ *testing.T, dir string) string { return dir },
			want: []string{`"cnt"`, "type count", "is filter now", "new uid"}, inspectOK: true},
		// The file sink's pending part files are under its old path: a
		// restore into another path would fail to re-commit them.
		{name: "file sink whose path changed", spec: spec(strings.Replace(restoreSpec, "path: OUT", "path: OUT-moved", 1)),
			damage: func(_ *testing.T, dir string) string { return dir },
			want:   []string{`"files"`, "has path", "in the snapshot", "-moved\" now"}, inspectOK: true},
	}
}

// Corrupt and incompatible savepoints given to `run -s`: every one is
// refused with exit 3 and a message naming the file and the cause; nothing
// starts, nothing is written, nothing panics and the daemon lives on.
func TestRefusesCorruptAndIncompatibleSavepoints(t *testing.T) {
	parallel(t)
	start := time.Now()
	e := newEnv(t)
	e.startDaemon()
	// The restores write where the savepoint's job wrote: the file sink's
	// state is only valid in its own directory (another path is refused).
	firstOut := filepath.Join(e.home, "out-first")
	spec := func(s string) string { return strings.ReplaceAll(s, "OUT", firstOut) }
	id := e.mustRun("run", e.writeSpec("first.yaml", spec(restoreSpec)))
	e.waitCheckpoint(id) // keyed state to damage
	good := e.mustRun("stop", id, "--savepoint-path", filepath.Join(e.home, "sp"))
	// The good savepoint restores (the dry run proves the cases below fail
	// for their damage alone).
	goodSpec := e.writeSpec("restore.yaml", spec(restoreSpec))
	require.Contains(t, e.mustRun("run", "--dry-run", "-s", good, goodSpec), "the restore can go ahead")

	cases := savepointCases(spec)
	refused := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent := e.t
			e.t = t
			defer func() { e.t = parent }()
			dir := filepath.Join(e.home, "cases", strings.ReplaceAll(c.name, " ", "_"))
			require.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o700))
			require.NoError(t, os.CopyFS(dir, os.DirFS(good)))
			path := c.damage(t, dir)
			jobSpec := goodSpec
			if c.spec != "" {
				jobSpec = e.writeSpec("case.yaml", c.spec)
			}
			before := e.mustRun("list", "-a", "-o", "json")
			watched := []string{e.home + "/cases", filepath.Join(e.home, "sp"), firstOut, filepath.Join(e.home, "checkpoints"), filepath.Join(e.home, "jobs")}
			// The stopped job's events.json and history.gob.gz (and so its
			// directory) are written once more by the daemon's sampler
			// within a second of its end, whenever that falls: not a
			// case's doing.
			snapshot := func(w string) map[string]string {
				tree := treeSnapshot(t, w)
				delete(tree, filepath.Join(e.home, "jobs", id))
				delete(tree, filepath.Join(e.home, "jobs", id, "events.json"))
				delete(tree, filepath.Join(e.home, "jobs", id, "history.gob.gz"))
				return tree
			}
			trees := map[string]map[string]string{}
			for _, w := range watched {
				trees[w] = snapshot(w)
			}
			logLen := len(e.stderr.String())

			for _, args := range [][]string{{"run", "-s", path, jobSpec}, {"run", "--dry-run", "-s", path, jobSpec}} {
				r := e.run(args...)
				want := 3 // invalid
				if c.notFound {
					want = 4
				}
				require.Equal(t, want, r.code, "%v: %s%s", args, r.stdout, r.stderr)
				for _, w := range c.want {
					require.Contains(t, r.stderr, w, "%v", args)
				}
				requireNoPanic(t, "CLI output", r.stdout+r.stderr)
			}
			r := e.run("savepoint", "inspect", path)
			requireNoPanic(t, "inspect output", r.stdout+r.stderr)
			if c.inspectOK {
				require.Equal(t, 0, r.code, r.stderr)
			} else {
				require.NotEqual(t, 0, r.code, "inspect accepted a damaged savepoint: %s", r.stdout)
				require.Contains(t, r.stdout+r.stderr, c.want[len(c.want)-1])
			}

			require.Equal(t, before, e.mustRun("list", "-a", "-o", "json"), "a job was created")
			for _, w := range watched {
				require.Equal(t, trees[w], snapshot(w), "%s changed", w)
			}
			require.NoDirExists(t, firstOut+"-moved")
			requireNoPanic(t, "daemon log", e.stderr.String()[logLen:])
			refused++
		})
	}
	_, err := e.jobInfo(id)
	require.NoError(t, err, "the daemon stopped answering")
	scorecard.Record(t, start, scorecard.Entry{Suite: "corrupt/incompatible savepoints, real binary",
		Faults:  "damaged _metadata and state files, wrong paths, incompatible jobs",
		Planned: len(cases), Fired: refused, Cases: len(cases)})
	require.Equal(t, len(cases), refused)
}

// A state file taken from another snapshot of the same job has the right
// name, size and an intact footer, but is not the file _metadata lists: a
// restore must refuse it. Today _metadata's per-file "checksum" is the
// CRC-32C of the whole file including the file's own CRC footer, which is
// the same constant (0x48674bc7, the CRC-32C residue) for every intact
// state file, so a swapped file passes verification and `savepoint inspect`
// calls the savepoint complete.
func TestRefusesSavepointWithSubstitutedStateFile(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	id := e.mustRun("run", e.writeSpec("first.yaml", strings.ReplaceAll(restoreSpec, "OUT", filepath.Join(e.home, "out"))))
	time.Sleep(time.Second)
	older := e.mustRun("savepoint", id, filepath.Join(e.home, "sp"))
	time.Sleep(time.Second)
	newer := e.mustRun("savepoint", id, filepath.Join(e.home, "sp"))
	e.mustRun("cancel", id)
	oldState, err := os.ReadFile(filepath.Join(older, "cnt-0.state"))
	require.NoError(t, err)
	newState, err := os.ReadFile(filepath.Join(newer, "cnt-0.state"))
	require.NoError(t, err)
	require.Len(t, oldState, len(newState), "the swap needs files of one size")
	require.NotEqual(t, oldState, newState)
	require.NoError(t, os.WriteFile(filepath.Join(newer, "cnt-0.state"), oldState, 0o600))

	r := e.run("savepoint", "inspect", newer)
	require.NotContains(t, r.stdout, "complete:        yes", "inspect calls a savepoint with a foreign state file complete")
	r = e.run("run", "--dry-run", "-s", newer, e.writeSpec("restore.yaml", strings.ReplaceAll(restoreSpec, "OUT", filepath.Join(e.home, "out2"))))
	require.Equal(t, 3, r.code, "a savepoint with another snapshot's state file is accepted: %s", r.stdout)
	require.Contains(t, r.stderr, "cnt-0.state")
}
