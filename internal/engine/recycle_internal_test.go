package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

type countingRecycler struct{ n int }

func (c *countingRecycler) RecycleValues() { c.n++ }

// An operator of a chain is told its Values are dead only while none of
// the records it emitted waits in its output's buffers; a source (no
// output of its own to hold them: its batch was flushed before) always is.
// Chained operators have no timers today, so nothing emits between the
// chain's flush and the recycling, but the rule must not depend on it.
func TestRecycleValuesWaitsForBufferedRecords(t *testing.T) {
	out := newOutput([]*edge{{part: Forward, targets: []target{{}}}}, nil, nil)
	src, op := &countingRecycler{}, &countingRecycler{}
	rs := []recycler{{r: src}, {r: op, out: out}}

	out.Emit(runtime.Record{Value: []byte(`{"idx":1}`)})
	require.True(t, out.buffered())
	recycleValues(rs)
	require.Equal(t, 1, src.n, "the source recycles")
	require.Zero(t, op.n, "an operator whose record waits in its buffer does not")

	releaseBatch(out.edges[0].bufs[0])
	out.edges[0].bufs[0] = nil
	require.False(t, out.buffered())
	recycleValues(rs)
	require.Equal(t, 2, src.n)
	require.Equal(t, 1, op.n, "once nothing waits, it does")
}
