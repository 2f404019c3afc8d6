package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

func TestSourceWatermarksPerSplit(t *testing.T) {
	g := engine.NewSourceWatermarks(5, 0, false)
	g.SetSplits([]uint32{0, 1}, 0)
	wm, idle := g.Watermark(0)
	require.Equal(t, runtime.MinWatermark, wm, "no record yet")
	require.False(t, idle)
	g.Observe(0, 100, 1)
	wm, _ = g.Watermark(1)
	require.Equal(t, runtime.MinWatermark, wm, "split 1 has not produced: it holds the watermark back")
	g.Observe(1, 50, 2)
	wm, _ = g.Watermark(2)
	require.Equal(t, int64(44), wm, "min over splits of max - bound - 1")
	g.Observe(1, 40, 3) // out of order within the bound: no regression
	wm, _ = g.Watermark(3)
	require.Equal(t, int64(44), wm)
	g.Observe(1, 200, 4)
	wm, _ = g.Watermark(4)
	require.Equal(t, int64(94), wm)
	g.SetSplits([]uint32{1}, 5) // split 0 ended
	wm, _ = g.Watermark(5)
	require.Equal(t, int64(194), wm)
	g.SetSplits(nil, 6) // every split ended
	wm, _ = g.Watermark(6)
	require.Equal(t, runtime.MaxWatermark, wm)
}

func TestSourceWatermarksIdleness(t *testing.T) {
	g := engine.NewSourceWatermarks(0, 30, false)
	g.SetSplits([]uint32{0, 1, 2, 3}, 0)
	g.Observe(0, 1000, 10)
	g.Observe(1, 900, 10)
	g.Observe(2, 800, 10)
	wm, idle := g.Watermark(20)
	require.Equal(t, runtime.MinWatermark, wm, "split 3 has produced nothing and is not idle yet")
	require.False(t, idle)
	wm, _ = g.Watermark(30)
	require.Equal(t, int64(799), wm, "split 3 idle after 30 ms of silence")
	require.Equal(t, 1, g.IdleSplits(30))
	// Every split idle: the subtask is idle and its watermark holds.
	wm, idle = g.Watermark(100)
	require.True(t, idle)
	require.Equal(t, int64(799), wm)
	// A record makes its split active again.
	g.Observe(3, 2000, 101)
	wm, idle = g.Watermark(101)
	require.False(t, idle)
	require.Equal(t, int64(1999), wm)
}

func TestSourceWatermarksAdvanceWhenIdle(t *testing.T) {
	g := engine.NewSourceWatermarks(10, 30, true)
	g.SetSplits([]uint32{0}, 0)
	g.Observe(0, 1000, 5)
	wm, _ := g.Watermark(5)
	require.Equal(t, int64(989), wm)
	wm, idle := g.Watermark(5000)
	require.False(t, idle, "it follows the clock instead")
	require.Equal(t, int64(4989), wm)
	g.Observe(0, 1200, 5001) // a late record does not take the watermark back
	wm, _ = g.Watermark(5001)
	require.Equal(t, int64(4989), wm)
}

// A declared watermark raises the subtask's watermark at once, before any
// record and above what the records make it; it never lowers it.
func TestSourceWatermarksRaise(t *testing.T) {
	g := engine.NewSourceWatermarks(1000, 0, false)
	g.SetSplits([]uint32{0}, 0)
	g.Raise(500)
	wm, idle := g.Watermark(0)
	require.False(t, idle)
	require.Equal(t, int64(500), wm, "a split without records holds nothing back below a declared watermark")
	g.Observe(0, 5000, 0)
	wm, _ = g.Watermark(0)
	require.Equal(t, int64(3999), wm)
	g.Raise(100)
	wm, _ = g.Watermark(0)
	require.Equal(t, int64(3999), wm, "a watermark never goes back")
}
