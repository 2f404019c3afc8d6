package daemon

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// fullHistory is a job sampled for longer than the span: three operators,
// the middle one on event time from its tenth sample, rates and shares of
// time that vary at random (the worst case for compression), and a
// checkpoint every other second.
func fullHistory() (*history, time.Time) {
	at := time.Unix(1_700_000_000, 0)
	info := &api.JobInfo{State: api.StateRunning, Operators: []api.OperatorInfo{{UID: "src"}, {UID: "win"}, {UID: "sink"}}}
	h := newHistory(info)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range historyPoints + 100 {
		at = at.Add(sampleEvery)
		rate := 1000 + rnd.Float64()*100
		for k := range info.Operators {
			op := &info.Operators[k]
			busy, bp := rnd.Int64N(500), rnd.Int64N(300)
			op.RecordsInPerSec, op.RecordsOutPerSec = rate, rate/float64(k+1)
			op.BusyTimeMsPerSecond, op.BackPressuredTimeMsPerSecond, op.IdleTimeMsPerSecond = busy, bp, 1000-busy-bp
		}
		if lag := 2000 + rnd.Int64N(300); i >= 10 {
			info.Operators[1].WatermarkLagMs = &lag
		}
		h.add(at, info)
		if i%2 == 0 {
			h.addCheckpoint(api.CheckpointPoint{ID: int64(i), Time: at.UnixMilli(), Kind: "checkpoint", Status: "COMPLETED", DurationMs: 20 + rnd.Int64N(50), Size: 40_000 + rnd.Int64N(5000)})
		}
	}
	return h, at
}

// What a restart reads back draws the same charts, and the file stays
// small: an ended job's directory holds a few tens of KB more at most.
func TestEndedHistoryFileIsSmall(t *testing.T) {
	h, _ := fullHistory()
	h.ops[1].lag[(h.head+5)%historyPoints] = float32(math.NaN()) // a sample before a watermark
	mem := vfs.NewMem()
	reg := &registry{fs: mem, dir: "/home/jobs"}
	require.NoError(t, reg.saveHistory("j1", h.save()))
	data, err := vfs.ReadFile(mem, "/home/jobs/j1/history.gob.gz")
	require.NoError(t, err)
	t.Logf("history.gob.gz of a full history, 3 operators: %d bytes", len(data))
	require.Less(t, len(data), 64<<10)

	back, err := reg.loadHistory("j1")
	require.NoError(t, err)
	require.Equal(t, h.since(0), back.since(0))
	require.Equal(t, h.sparkline(), back.sparkline())
	require.Equal(t, historyPoints, cap(back.times), "sized to its samples")

	none, err := reg.loadHistory("j2")
	require.NoError(t, err)
	require.Nil(t, none, "a job without a file has no history")
	require.NoError(t, mem.MkdirAll("/home/jobs/j2", 0o700))
	require.NoError(t, vfs.WriteFileAtomic(mem, "/home/jobs/j2/history.gob.gz", data[:len(data)/2]))
	_, err = reg.loadHistory("j2")
	require.ErrorContains(t, err, "/home/jobs/j2/history.gob.gz", "a torn file is named")
}

// A history read back from disk stays in memory while a page reads it
// and is dropped a minute after the last read; the next read loads it
// again. A job with no file is not looked for twice.
func TestLoadedHistoryIsDroppedWhenNobodyLooks(t *testing.T) {
	h, end := fullHistory()
	var l jobLive
	require.True(t, l.wantsHistory())
	l.loaded(h)
	now := end.Add(time.Hour)
	require.NotEmpty(t, l.historySince(0, now).Times)
	l.expire(now.Add(historyIdle / 2))
	require.NotNil(t, l.hist, "read half a minute ago")
	l.expire(now.Add(historyIdle + time.Second))
	require.Nil(t, l.hist, "nobody read it for a minute")
	require.True(t, l.wantsHistory(), "read back on the next look")

	var absent jobLive
	absent.loaded(nil)
	require.False(t, absent.wantsHistory())
	require.Empty(t, absent.historySince(0, now).Times)
}
