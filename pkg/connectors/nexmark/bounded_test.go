package nexmark_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// The stateful queries hold bounded state: the watermark cleans up every
// window, join row and accumulator a query can no longer use, so what a
// query holds late in a long run is what it held early on, not more. Each
// query runs over many of its windows (q3 over several of its 10-minute
// person expiries), paced so that a checkpoint is taken every few windows;
// the upper quartile of every operator's keys and of its bytes over the
// checkpoints of the run's last third is compared with that of its second
// third (the first holds the run's start, when windows fill). State that
// grows with the input is about 1.5 times as large in the last third as in
// the second; bounded state is about the same.
func TestQueryStateIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("1.1 M events through six queries: not under -short (make check)")
	}
	// What is compared is the state of the run's second and last thirds
	// of event time, so what a run needs is a span of event time of many
	// windows (or expiries), not many events in each: a window of 10 s
	// holds 1,250 events at 125 events/s and 5,000 at 500, enough to fill
	// its keys. The spans are those of runs of 400,000 events each at four
	// times these rates, which took 2.4 times as long as all of TestQueries
	// under -race. State that grows must still grow past the slack: the
	// smallest state that grows with the input (q3's persons, q8's sellers
	// and new users) holds some 50 keys or more. q4 and q8 keep their
	// full runs: with a quarter (a half) of the events their upper
	// quartiles of some 50 keys varied by more than the bound allows
	// (q8's sellers 52 → 71 in a run with bounded state).
	cases := []struct {
		q         string
		eventRate int // event time: the run is events / eventRate seconds of it
		events    int
	}{
		{"q3", 50, 100_000},    // 2,000 s: 3.3 person expiries of 10 min
		{"q4", 2_000, 400_000}, // 200 s: auctions last some 1,700 events (InFlightAuctions), 240 lifetimes
		{"q5", 500, 100_000},   // 200 s: 100 slides of 2 s, windows of 10 s
		{"q7", 125, 100_000},   // 800 s: 80 windows of 10 s, a key each
		{"q8", 1_300, 400_000}, // 308 s: 30 windows of 10 s, 1.3 checkpoints each
		{"q11", 500, 100_000},  // 200 s: sessions end 10 s after a bidder's last bid
	}
	for _, c := range cases {
		t.Run(c.q, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			spec := boundedSpec(t, c.q, c.events, c.eventRate)
			j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: dir})
			metas := checkpointsWhileRunning(t, j, dir)
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 3*time.Minute), j.Info().Error)
			require.GreaterOrEqual(t, len(metas), 9, "too few checkpoints to compare thirds of the run")
			second, last := metas[len(metas)/3:2*len(metas)/3], metas[2*len(metas)/3:]
			for _, op := range metas[len(metas)-1].Operators {
				if op.Keys() == 0 && upper(second, op.UID, keysOf) == 0 {
					continue // stateless, or a source's position
				}
				for _, m := range []struct {
					what  string
					of    func(*checkpoint.OperatorState) int64
					slack float64 // what a query's few keys may differ by
				}{{"keys", keysOf, 4}, {"bytes", bytesOf, 1024}} {
					early, late := upper(second, op.UID, m.of), upper(last, op.UID, m.of)
					t.Logf("%s %s: %s upper quartile %d in the second third of %d checkpoints, %d in the last",
						c.q, op.UID, m.what, early, len(metas), late)
					require.LessOrEqualf(t, float64(late), 1.25*float64(early)+m.slack,
						"%s %s: %s grew from %d to %d between the second and the last third of the run",
						c.q, op.UID, m.what, early, late)
				}
			}
		})
	}
}

func keysOf(o *checkpoint.OperatorState) int64  { return o.Keys() }
func bytesOf(o *checkpoint.OperatorState) int64 { return o.Size() }

// upper is the upper quartile of of(uid's state) over metas: a window's
// state rises from nothing to all of it, so the median of checkpoints
// taken at the same place in each window (the windows go at a multiple
// of the checkpoint interval) says more about where they are taken than
// about the state; the largest says most about a checkpoint taken just
// before the watermark cleaned up a lot.
func upper(metas []*checkpoint.Metadata, uid string, of func(*checkpoint.OperatorState) int64) int64 {
	var vs []int64
	for _, m := range metas {
		var v int64
		if o := m.Operator(uid); o != nil {
			v = of(o)
		}
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs[len(vs)*3/4]
}

// boundedSpec is configs/jobs/nexmark/<q>.yaml with events and eventRate
// set, the source paced so that the run takes about 4 s, a checkpoint every
// 100 ms and every checkpoint kept.
func boundedSpec(t *testing.T, q string, events, eventRate int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "configs", "jobs", "nexmark", q+".yaml"))
	require.NoError(t, err)
	s := string(b)
	for old, repl := range map[string]string{
		"events: 10000000":    fmt.Sprintf("events: %d\n    rate: %d", events, events/4),
		"eventRate: 10000000": fmt.Sprintf("eventRate: %d", eventRate),
		"checkpointing: {interval: 10s, mode: exactly-once}": "checkpointing: {interval: 100ms, mode: exactly-once, retained: 1000}",
		// A checkpoint holds what the watermark has not yet cleaned up:
		// at the default 200 ms a checkpoint may come just before one
		// and hold 200 ms more of input than one just after.
		"parallelism: 1\n": "parallelism: 1\nwatermarkInterval: 5ms\n",
	} {
		require.Contains(t, s, old)
		s = strings.Replace(s, old, repl, 1)
	}
	return s
}

// checkpointsWhileRunning reads the metadata of every checkpoint job j
// completes, oldest first, until it ends (a finished job deletes its
// checkpoints).
func checkpointsWhileRunning(t *testing.T, j *engine.Job, base string) []*checkpoint.Metadata {
	t.Helper()
	seen := map[int64]bool{}
	var out []*checkpoint.Metadata
	for {
		select {
		case <-j.Done():
			sort.Slice(out, func(a, b int) bool { return out[a].CheckpointID < out[b].CheckpointID })
			return out
		case <-time.After(20 * time.Millisecond):
		}
		latest := j.LatestCheckpoint()
		if latest == nil {
			continue
		}
		list, err := checkpoint.List(vfs.Default, base, j.ID())
		require.NoError(t, err)
		for _, l := range list {
			if l.ID > latest.ID || seen[l.ID] {
				continue
			}
			if _, m, err := checkpoint.Load(vfs.Default, l.Dir); err == nil {
				seen[l.ID] = true
				out = append(out, m)
			}
		}
	}
}
