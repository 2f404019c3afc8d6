package join

import (
	"sync/atomic"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// side indices: the first input is left, the second right.
const (
	left  = 0
	right = 1
)

// base is what both joins keep: the per-key state (keyState, in the keyed
// value "rows"), the size of each side, the late rows, and the emitter of
// results.
type base struct {
	cfg     config
	ctx     *runtime.Context
	timers  runtime.Timers
	keys    runtimeValue
	stats   [2]sideStats
	late    [2]*atomic.Int64
	gauges  [2]*atomic.Int64
	em      emitter
	scratch []byte
	cutRows []row // the rows cut takes out
}

var (
	lateOutputs = [2]string{lateLeftOutput, lateRightOutput}
	lateMetrics = [2]string{metricLateLeft, metricLateRight}
	rowMetrics  = [2]string{metricLeftRows, metricRightRows}
)

// open declares the key state (decoding restored rows) and the metrics.
func (b *base) open(ctx *runtime.Context) error {
	b.ctx, b.timers = ctx, ctx.Timers()
	b.em = newEmitter(&b.cfg)
	b.em.ctx = ctx
	v, err := runtime.NewValue[*keyState](ctx, "rows", stateCodec{stats: &b.stats})
	if err != nil {
		return err
	}
	b.keys = v
	for s := range b.late {
		b.late[s] = ctx.Metrics().Counter(lateMetrics[s])
		b.gauges[s] = ctx.Metrics().Gauge(rowMetrics[s])
	}
	b.publish()
	return nil
}

func (b *base) Close() error { return nil }

func (b *base) publish() {
	for s := range b.gauges {
		b.gauges[s].Store(b.stats[s].rows)
	}
}

// current returns the current key's state, new and stored when it has none.
func (b *base) current() *keyState {
	k, ok := b.keys.Get()
	if !ok {
		k = newKeyState()
		b.keys.Put(k)
	}
	return k
}

// dropLate counts a row too late to join and sends it to its side output.
func (b *base) dropLate(s int, r runtime.Record, out runtime.Output) {
	b.late[s].Add(1)
	if out != nil {
		out.EmitTo(lateOutputs[s], r)
	}
}

// newRow is a row of side s at slot for r, and the value to keep for it:
// of r's value, only the members the join's expressions read (in the
// base's scratch buffer, or r's own bytes: valid until the next newRow).
func (b *base) newRow(s int, slot int64, r runtime.Record) (row, []byte) {
	v, ok := b.cfg.exprs.Project(s, b.scratch[:0], r.Value)
	if !ok {
		v = r.Value
	} else {
		b.scratch = v
	}
	return row{slot: slot, ts: r.Timestamp, n: int32(len(v)), until: untilUnset}, v
}

// store inserts rw with value v (a copy is kept) into side s of k and
// returns its index.
func (b *base) store(k *keyState, s int, rw row, v []byte) int {
	b.stats[s].add(rw)
	b.gauges[s].Store(b.stats[s].rows)
	return k.insert(s, rw, v)
}

// cut removes side s's rows [from, to) of k.
func (b *base) cut(k *keyState, s, from, to int) {
	if from == to {
		return
	}
	rs := k.sides[s]
	b.cutRows = append(b.cutRows[:0], rs[from:to]...)
	b.cutDone(k, s, rs, append(rs[:from], rs[to:]...))
}

// cutIf removes the rows of side s of k that gone reports, keeping the
// others in order.
func (b *base) cutIf(k *keyState, s int, gone func(*row) bool) {
	rs := k.sides[s]
	b.cutRows = b.cutRows[:0]
	kept := rs[:0]
	for i := range rs {
		if gone(&rs[i]) {
			b.cutRows = append(b.cutRows, rs[i])
		} else {
			kept = append(kept, rs[i])
		}
	}
	b.cutDone(k, s, rs, kept)
}

// cutDone makes kept (in the backing array of rs, the side's rows before)
// side s's rows once b.cutRows were taken out of it.
func (b *base) cutDone(k *keyState, s int, rs, kept []row) {
	for _, r := range b.cutRows {
		b.stats[s].remove(r)
	}
	k.sides[s] = kept
	if len(kept) == 0 && cap(rs) > keepRows {
		k.sides[s] = nil
	}
	k.drop(s, b.cutRows)
	b.gauges[s].Store(b.stats[s].rows)
}

// schedule makes next the key's timer in slot (see setTimer); with
// nothing left the key's state goes.
func (b *base) schedule(k *keyState, slot int, next int64) {
	b.setTimer(k, slot, next)
	b.dropIfEmpty(k)
}

// setTimer makes next the key's timer in slot (MinWatermark: none),
// deleting the one it replaces unless the other slot holds it too (the
// timer service keeps one timer per key and time).
func (b *base) setTimer(k *keyState, slot int, next int64) {
	if cur := k.timers[slot]; cur != next {
		if cur != runtime.MinWatermark && cur != k.timers[1-slot] {
			b.timers.DeleteEventTime(cur)
		}
		if next != runtime.MinWatermark {
			b.timers.RegisterEventTime(next)
		}
		k.timers[slot] = next
	}
}

// dropIfEmpty deletes the current key's state once it holds nothing (its
// timers are gone by then).
func (b *base) dropIfEmpty(k *keyState) {
	if k.empty() && len(k.sessions) == 0 {
		b.keys.Delete()
	}
}

// DescribeState shows the size of each side's state (savepoint inspect).
func (b *base) DescribeState() map[string]any {
	return map[string]any{
		"leftRows": b.stats[left].rows, "leftBytes": b.stats[left].bytes,
		"rightRows": b.stats[right].rows, "rightBytes": b.stats[right].bytes,
	}
}
