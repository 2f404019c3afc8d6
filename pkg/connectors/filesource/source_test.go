package filesource

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// writeFile writes data to path in fsys, creating its directory.
func writeFile(t testing.TB, fsys vfs.FS, path, data string) {
	t.Helper()
	require.NoError(t, fsys.MkdirAll(vfs.Dir(path), 0o755))
	f, err := fsys.Create(path)
	require.NoError(t, err)
	_, err = f.Write([]byte(data))
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// jsonFiles writes n files of JSON lines below dir (some in a
// subdirectory, some with CRLF, one without a final newline, blank
// lines between) and hidden files that must not be read; it returns
// every record.
func jsonFiles(t testing.TB, fsys vfs.FS, dir string, n int) []string {
	var all []string
	for f := range n {
		var b strings.Builder
		for i := range 20 + 13*f {
			v := fmt.Sprintf(`{"f":%d,"i":%d}`, f, i)
			all = append(all, v)
			b.WriteString(v)
			switch {
			case f%3 == 1:
				b.WriteString("\r\n")
			case i%7 == 3:
				b.WriteString("\n\n")
			default:
				b.WriteString("\n")
			}
		}
		data := b.String()
		if f == 2 {
			data = strings.TrimSuffix(data, "\n")
		}
		name := fmt.Sprintf("part-%02d.jsonl", f)
		if f%2 == 1 {
			name = "sub/" + name
		}
		writeFile(t, fsys, vfs.Join(dir, name), data)
	}
	writeFile(t, fsys, vfs.Join(dir, ".part-99.inprogress"), `{"hidden":1}`+"\n")
	writeFile(t, fsys, vfs.Join(dir, "_SUCCESS"), "not json\n")
	writeFile(t, fsys, vfs.Join(dir, "_tmp/x.jsonl"), `{"hidden":2}`+"\n")
	return all
}

// openSubtasks opens par subtasks of a file source of set, restored from
// old (nil: a fresh start).
func openSubtasks(t testing.TB, fsys vfs.FS, set *settings, par int, old []*state.Snapshot) []*source {
	t.Helper()
	out := make([]*source, par)
	for i := range out {
		o := runtime.ContextOptions{UID: "in", Subtask: i, Parallelism: par, State: state.NewOperatorState(), FS: fsys}
		if old != nil {
			o.Restored = true
			o.State = state.RestoreOperatorState(old, i, par)
		}
		out[i] = &source{set: set}
		require.NoError(t, out[i].Open(runtime.NewContext(o)))
		t.Cleanup(func() { _ = out[i].Close() })
	}
	return out
}

// poll reads up to max records from s in batches of batch (the values
// copied, as the engine's recycling allows the source to reuse them);
// ended says it reached its end of input.
func poll(t *testing.T, s *source, max, batch int) (vals []string, ended bool) {
	t.Helper()
	for len(vals) < max {
		b := &runtime.Batch{Records: make([]runtime.Record, 0, min(batch, max-len(vals)))}
		err := s.Poll(b)
		for _, r := range b.Records {
			vals = append(vals, string(r.Value))
		}
		s.RecycleValues()
		if errors.Is(err, runtime.ErrEndOfInput) {
			return vals, true
		}
		require.NoError(t, err)
	}
	return vals, false
}

// snapshot takes each source's state through its encoding, as a
// checkpoint does.
func snapshot(t *testing.T, srcs []*source) []*state.Snapshot {
	t.Helper()
	out := make([]*state.Snapshot, len(srcs))
	for i, s := range srcs {
		require.NoError(t, s.SnapshotState(1))
		data, _ := state.Encode(s.ctx.OperatorState(), nil)
		snap, err := state.Decode(data)
		require.NoError(t, err)
		out[i] = snap
	}
	return out
}

// requireEachOnce checks the values read hold each of want once.
func requireEachOnce(t *testing.T, want []string, got ...[]string) {
	t.Helper()
	count := map[string]int{}
	for _, vs := range got {
		for _, v := range vs {
			count[v]++
		}
	}
	for _, w := range want {
		require.Equal(t, 1, count[w], "record %s", w)
		delete(count, w)
	}
	require.Empty(t, count, "records that are not in the files")
}

func jsonSettings(root string) *settings {
	return &settings{root: root, format: &lineFormat{json: true, policy: decodePolicy{skipped: new(atomic.Int64)}}, skipped: new(atomic.Int64)}
}

// A snapshot taken part way through (files finished, files half read,
// files not started) and restored at any parallelism reads every record
// once: finished files are not read again, the current ones resume at the
// record after the last one emitted.
func TestRestoreAtAnyParallelismReadsEachRecordOnce(t *testing.T) {
	fsys := vfs.NewMem()
	want := jsonFiles(t, fsys, "/in", 9)
	for _, par := range []int{1, 2, 3, 5} {
		first := openSubtasks(t, fsys, jsonSettings("/in"), 3, nil)
		var before [][]string
		for i, s := range first {
			v, _ := poll(t, s, 37*(i+1), 11)
			before = append(before, v)
		}
		restored := openSubtasks(t, fsys, jsonSettings("/in"), par, snapshot(t, first))
		after := before
		for _, s := range restored {
			v, ended := poll(t, s, 1<<20, 64)
			require.True(t, ended, "a bounded source ends")
			after = append(after, v)
		}
		requireEachOnce(t, want, after...)
	}
}

// Restoring the snapshot of a source that read everything reads nothing.
func TestRestoreAfterEndOfInputReadsNothing(t *testing.T) {
	fsys := vfs.NewMem()
	want := jsonFiles(t, fsys, "/in", 4)
	first := openSubtasks(t, fsys, jsonSettings("/in"), 2, nil)
	var got [][]string
	for _, s := range first {
		v, ended := poll(t, s, 1<<20, 512)
		require.True(t, ended)
		got = append(got, v)
	}
	requireEachOnce(t, want, got...)
	for _, s := range openSubtasks(t, fsys, jsonSettings("/in"), 3, snapshot(t, first)) {
		v, ended := poll(t, s, 1<<20, 512)
		require.True(t, ended)
		require.Empty(t, v)
	}
}

// A single file as the path; a file that changed under a restored
// position is refused; a bad line fails naming the file and the record,
// or is skipped and counted.
func TestSingleFileAndDecodeErrors(t *testing.T) {
	fsys := vfs.NewMem()
	writeFile(t, fsys, "/f.jsonl", "{\"a\":1}\n{\"a\":2}\nnot json\n{\"a\":3}\n")
	s := openSubtasks(t, fsys, jsonSettings("/f.jsonl"), 1, nil)[0]
	v, _ := poll(t, s, 1, 1)
	require.Equal(t, []string{`{"a":1}`}, v)
	snap := snapshot(t, []*source{s})
	b := runtime.NewBatch()
	err := s.Poll(b)
	require.ErrorContains(t, err, `/f.jsonl: record 3 (byte 16): value is not valid JSON: "not json" (set onDecodeError: skip`)
	require.ErrorIs(t, err, runtime.ErrRestartsSuppressed)

	skip := jsonSettings("/f.jsonl")
	skip.format.(*lineFormat).policy.skip = true
	s = openSubtasks(t, fsys, skip, 1, snap)[0]
	v, ended := poll(t, s, 100, 100)
	require.True(t, ended)
	require.Equal(t, []string{`{"a":2}`, `{"a":3}`}, v)
	require.Equal(t, int64(1), skip.format.(*lineFormat).policy.skipped.Load())

	writeFile(t, fsys, "/f.jsonl", "{}\n")
	s = openSubtasks(t, fsys, jsonSettings("/f.jsonl"), 1, snap)[0]
	require.ErrorContains(t, s.Poll(runtime.NewBatch()), "truncated or replaced")

	s = openSubtasks(t, fsys, jsonSettings("/missing"), 1, nil)[0]
	require.ErrorContains(t, s.Poll(runtime.NewBatch()), "path /missing does not exist")
}

// Without recycling (the engine keeps the Values), the memory keeps only a
// few retired blocks; with it, blocks are reused.
func TestMemoryKeepsFewBlocks(t *testing.T) {
	var m Memory
	for range 100 {
		m.Retire(m.Block(4096))
	}
	require.Len(t, m.retired, maxFreeBlocks)
	m.recycle()
	require.Len(t, m.free, maxFreeBlocks)
	b := m.Block(4096)
	require.Len(t, m.free, maxFreeBlocks-1)
	require.Len(t, b, 4096)
}

// Off the chain the engine hands back the Values of the first Polls only
// (runtime.PollRecycler): a block retired during a later Poll may hold
// Values still read, and is not reused until that Poll is handed back.
func TestMemoryReusesBlocksOfHandedBackPolls(t *testing.T) {
	var m Memory
	m.poll = 1
	first := m.Block(4096)
	m.Retire(first)
	m.poll = 2
	second := m.Block(4096)
	m.Retire(second)
	m.recycleUpTo(1)
	require.Len(t, m.free, 1)
	require.Same(t, &first[0], &m.Block(4096)[0], "the block of Poll 1 is reused")
	require.Len(t, m.retired, 1, "the block of Poll 2 is not")
	m.recycleUpTo(2)
	require.Same(t, &second[0], &m.Block(4096)[0])
}
