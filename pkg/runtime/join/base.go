package join

import (
	"sync/atomic"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// side indices: the first input is left, the second right.
const (
	left  = 0
	right = 1
)

// base is what both joins keep: per side, the rows of each key by time
// slot in keyed state ("left", "right"), their counts, the late rows, and
// the emitter of results.
type base struct {
	cfg    config
	ctx    *runtime.Context
	timers runtime.Timers
	sides  [2]*state.Map[int64, *rows]
	stats  [2]sideStats
	late   [2]*atomic.Int64
	gauges [2]*atomic.Int64
	em     emitter
}

var (
	lateOutputs = [2]string{LateLeftOutput, LateRightOutput}
	lateMetrics = [2]string{MetricLateLeft, MetricLateRight}
	rowMetrics  = [2]string{MetricLeftRows, MetricRightRows}
)

// open declares the side tables (decoding restored rows) and the metrics.
func (b *base) open(ctx *runtime.Context) error {
	b.ctx, b.timers = ctx, ctx.Timers()
	b.em = newEmitter(&b.cfg)
	b.em.ctx = ctx
	for s := range b.sides {
		m, err := runtime.NewMap[int64, *rows](ctx, rowNames[s], state.Int64Codec{}, rowsCodec{stats: &b.stats[s]})
		if err != nil {
			return err
		}
		b.sides[s] = m
		b.late[s] = ctx.Metrics().Counter(lateMetrics[s])
		b.gauges[s] = ctx.Metrics().Gauge(rowMetrics[s])
		b.gauges[s].Store(b.stats[s].rows)
	}
	return nil
}

func (b *base) Close() error { return nil }

// dropLate counts a row too late to join and sends it to its side output.
func (b *base) dropLate(s int, r runtime.Record, out runtime.Output) {
	b.late[s].Add(1)
	if out != nil {
		out.EmitTo(lateOutputs[s], r)
	}
}

// newRow is a row holding a copy of r.
func newRow(r runtime.Record) row {
	return row{ts: r.Timestamp, value: append([]byte(nil), r.Value...)}
}

// store keeps rw in side s of the current key at slot; it reports whether
// the slot was new.
func (b *base) store(s int, slot int64, rw row) (created bool) {
	rs, ok := b.sides[s].Get(slot)
	if !ok {
		rs = &rows{}
		b.sides[s].Put(slot, rs)
	}
	rs.list = append(rs.list, rw)
	b.stats[s].add(rw)
	b.gauges[s].Store(b.stats[s].rows)
	return !ok
}

// remove drops slot of side s of the current key.
func (b *base) remove(s int, slot int64) {
	rs, ok := b.sides[s].Get(slot)
	if !ok {
		return
	}
	for _, r := range rs.list {
		b.stats[s].remove(r)
	}
	b.sides[s].Remove(slot)
	b.gauges[s].Store(b.stats[s].rows)
}

// DescribeState shows the size of each side's state (savepoint inspect).
func (b *base) DescribeState() map[string]any {
	return map[string]any{
		"leftRows": b.stats[left].rows, "leftBytes": b.stats[left].bytes,
		"rightRows": b.stats[right].rows, "rightBytes": b.stats[right].bytes,
	}
}
