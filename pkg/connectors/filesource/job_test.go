package filesource

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// A bounded job reading a directory of CSV files finishes, and event
// time comes from a column: per-user counts in one-minute windows, with
// values holding the delimiter, quotes and newlines on the way.
func TestBoundedCSVDirectoryWithEventTimeFinishes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const minute = 60_000
	base := int64(1767225600000)
	var a, b strings.Builder
	a.WriteString("user,ts,note\n")
	b.WriteString("user,ts,note\r\n")
	want := map[string]int{}
	for i := range 120 {
		user := fmt.Sprintf("u%d", i%3)
		ts := base + int64(i)*1000 // two minutes
		w := &a
		if i%2 == 1 {
			w = &b
		}
		fmt.Fprintf(w, "%s,%d,\"says \"\"hi, there\"\"\nsecond line\"\n", user, ts)
		want[fmt.Sprintf("%s@%d", user, (ts-base)/minute*minute+base)]++
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.csv"), []byte(a.String()), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "2026"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "2026", "b.csv"), []byte(b.String()), 0o644))
	name := runtimetest.UniqueName(t)
	notes := name + "-notes"
	defer runtimetest.Reset(notes)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: csv-window
parallelism: 2
operators:
  - uid: in
    type: file
    path: %q
    format: csv
    eventTime: {timestamp: ts, maxOutOfOrderness: 1m}
  - {uid: notes, type: test-collect, from: [in], name: %s, parallelism: 1}
  - {uid: byUser, type: keyBy, from: [in], expr: user}
  - uid: perMinute
    type: window
    from: [byUser]
    window: {type: tumbling, size: 1m}
    time: event
    aggregate: {n: count()}
  - {uid: out, type: test-collect, from: [perMinute], name: %s, parallelism: 1}
`, dir, notes, name), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	got := map[string]int{}
	for _, v := range runtimetest.Values(name) {
		var key string
		var start, end, n int64
		_, err := fmt.Sscanf(v, `{"key":%q,"windowStart":%d,"windowEnd":%d,"n":%d}`, &key, &start, &end, &n)
		require.NoError(t, err, v)
		got[fmt.Sprintf("%s@%d", key, start)] += int(n)
	}
	require.Equal(t, want, got)
	vals := runtimetest.Values(notes)
	require.Len(t, vals, 120)
	require.Contains(t, vals[0], `"note":"says \"hi, there\"\nsecond line"`)
}

// jsonLines writes files × lines JSON records under dir and returns them.
func jsonLines(t *testing.T, dir string, files, lines int) []string {
	t.Helper()
	var all []string
	for f := range files {
		var b strings.Builder
		for i := range lines {
			v := fmt.Sprintf(`{"f":%d,"i":%d}`, f, i)
			all = append(all, v)
			b.WriteString(v + "\n")
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("in-%03d.jsonl", f)), []byte(b.String()), 0o644))
	}
	return all
}

// requireSameLines checks got holds want's lines, each once.
func requireSameLines(t *testing.T, want, got []string) {
	t.Helper()
	want = append([]string(nil), want...)
	sort.Strings(want)
	sort.Strings(got)
	require.Equal(t, len(want), len(got), "records written")
	require.Equal(t, want, got)
}

// pollFaults fails the calls of one fault point: every every-th one,
// times times in all.
type pollFaults struct {
	point                     string
	every, times, seen, fired int64
	mu                        sync.Mutex
}

func (h *pollFaults) Fire(point string, attrs ...any) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if point != h.point {
		return nil
	}
	if h.seen++; h.seen%h.every == 0 && h.fired < h.times {
		h.fired++
		return fmt.Errorf("injected fault %d at %s %v", h.fired, point, attrs)
	}
	return nil
}

// The job fails five times while it reads, twice in the source's poll
// ("file.read") and three times downstream, restored each time from
// its latest checkpoint (with files finished, half read and not started),
// and the exactly-once file sink holds every record once.
func TestExactlyOnceAcrossFailures(t *testing.T) {
	t.Parallel()
	in, out := t.TempDir(), t.TempDir()
	want := jsonLines(t, in, 12, 2500)
	name := runtimetest.UniqueName(t)
	faults := &pollFaults{point: "file.read", every: 40, times: 2}
	j := runtimetest.Start(t, fmt.Sprintf(`
name: file-eo
parallelism: 3
checkpointing: {interval: 20ms}
restartStrategy: {type: fixed-delay, attempts: 10, delay: 10ms}
operators:
  - {uid: in, type: file, path: %q, format: json}
  - {uid: slow, type: test-collect, from: [in], name: %s-slow, delay: 1ms}
  - {uid: fail, type: test-fail, from: [in], name: %s, every: 7000, times: 3}
  - {uid: out, type: file, from: [fail], path: %q, rolling: {maxPartSize: 64KiB}}
`, in, name, name, out), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Faults: faults})
	defer runtimetest.Reset(name + "-slow")
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
	require.Equal(t, int64(3), runtimetest.Fired(name))
	require.Equal(t, int64(2), faults.fired)
	t.Logf("restarts %d, checkpoints %d", j.Info().Restarts, j.LatestCheckpoint().ID)
	requireSameLines(t, want, runtimetest.FinishedLines(t, out))
}

// A directory that gains files while the job runs (renamed into place,
// or written in two steps less than the monitor interval apart) is read
// to its last record, each once, across failures.
func TestMonitorReadsNewFilesOnce(t *testing.T) {
	t.Parallel()
	in, out := t.TempDir(), t.TempDir()
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: file-monitor
parallelism: 2
checkpointing: {interval: 20ms}
restartStrategy: {type: fixed-delay, attempts: 10, delay: 10ms}
operators:
  - {uid: in, type: file, path: %q, format: json, monitor: 100ms}
  - {uid: fail, type: test-fail, from: [in], name: %s, every: 500, times: 2}
  - {uid: out, type: file, from: [fail], path: %q, rolling: {maxPartSize: 16KiB, onCheckpoint: true}}
`, in, name, out), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	defer runtimetest.Cancel(t, 10*time.Second, j)
	var want []string
	for f := range 8 {
		var b strings.Builder
		for i := range 300 {
			v := fmt.Sprintf(`{"f":%d,"i":%d}`, f, i)
			want = append(want, v)
			b.WriteString(v + "\n")
		}
		data := b.String()
		final := filepath.Join(in, fmt.Sprintf("batch-%02d.jsonl", f))
		if f%2 == 0 {
			// Written under a hidden name, then renamed into place.
			tmp := filepath.Join(in, "."+filepath.Base(final)+".tmp")
			require.NoError(t, os.WriteFile(tmp, []byte(data), 0o644))
			require.NoError(t, os.Rename(tmp, final))
		} else {
			// Written in place in two steps: not read half-written.
			fh, err := os.Create(final)
			require.NoError(t, err)
			_, err = fh.WriteString(data[:len(data)/2])
			require.NoError(t, err)
			time.Sleep(20 * time.Millisecond)
			_, err = fh.WriteString(data[len(data)/2:])
			require.NoError(t, err)
			require.NoError(t, fh.Close())
		}
		time.Sleep(30 * time.Millisecond)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(runtimetest.FinishedLines(t, out)) < len(want) {
		if time.Now().After(deadline) {
			got := map[string]bool{}
			for _, l := range runtimetest.FinishedLines(t, out) {
				got[l] = true
			}
			missing := map[int][]int{}
			for f := range 8 {
				for i := range 300 {
					if !got[fmt.Sprintf(`{"f":%d,"i":%d}`, f, i)] {
						missing[f] = append(missing[f], i)
					}
				}
			}
			for f, m := range missing {
				t.Logf("file %d: %d missing, first %d last %d", f, len(m), m[0], m[len(m)-1])
			}
			t.Fatalf("%d of %d records committed; job %s %s; restarts %d", len(runtimetest.FinishedLines(t, out)), len(want), j.State(), j.Info().Error, j.Info().Restarts)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // a duplicate would show up by now
	require.Equal(t, api.StateRunning, j.State(), j.Info().Error)
	require.GreaterOrEqual(t, runtimetest.Fired(name), int64(1), "failures injected")
	requireSameLines(t, want, runtimetest.FinishedLines(t, out))
}

// A job as users write it (no chaining) has its readers hand the source's
// blocks back while it runs, and the source reads the next files into
// them: every line arrives intact, in order, through a filter to a slow
// sink that lags behind the source. The files are small, so each fits a
// block of its own, and a block comes back within a few batches.
func TestHandedBackBlocksKeepEveryRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var want []string
	for f := range 200 {
		var sb strings.Builder
		for i := range 100 {
			line := fmt.Sprintf(`{"f":%d,"i":%d,"pad":"%s"}`, f, i, strings.Repeat("x", (f+i)%5))
			sb.WriteString(line + "\n")
			want = append(want, line)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.jsonl", f)), []byte(sb.String()), 0o644))
	}
	name := runtimetest.UniqueName(t)
	defer runtimetest.Reset(name)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: handback
operators:
  - {uid: in, type: file, path: %q, format: lines}
  - {uid: all, type: filter, from: [in], expr: "true"}
  - {uid: out, type: test-collect, from: [all], name: %s, delay: 100us}
`, dir, name), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, time.Minute), j.Info().Error)
	require.Equal(t, want, runtimetest.Values(name))
}
