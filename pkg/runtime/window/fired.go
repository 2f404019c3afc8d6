package window

import (
	"encoding/binary"
	"math"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// firedMark is one subtask's item of firedList: the watermark its windows
// fired up to. bound marks a lower bound from a conversion of the old
// layout (firedOfTimers: each subtask's is at most the snapshot's
// watermark and at least every window that fired for its own keys), until
// the input watermark passes it.
type firedMark struct {
	w     int64
	bound bool
}

// restoreFired is the watermark restored subtasks fired their windows up
// to (MinWatermark when none), bound when every item is. lastEnd is the
// greatest end of a window the old subtasks fired (restoreLastEnd).
//
// Of exact items it takes the least: in an exactly-once checkpoint every
// subtask of the window took its snapshot at the same input watermark, so
// the least is each one's; otherwise the least fires some windows again
// rather than lose a record as late. Of bounds it takes the greatest:
// every bound is a lower bound of the same watermark, and the greatest
// covers every window that fired for any key (the least, a subtask's
// without keys, would fire the others' again). With both, the greater of
// the two: the subtasks' input watermark passed the exact ones' bounds.
func restoreFired(items [][]byte, lastEnd int64) (firedMark, error) {
	least, greatest := int64(math.MaxInt64), runtime.MinWatermark
	exact, bounds := false, false
	for _, it := range items {
		m, err := decodeFired(it)
		if err != nil {
			return firedMark{}, err
		}
		if m.bound {
			greatest, bounds = max(greatest, m.w), true
		} else {
			least, exact = min(least, m.w), true
		}
	}
	switch {
	case !exact && !bounds:
		return firedMark{w: runtime.MinWatermark}, nil
	case !exact:
		return firedMark{w: greatest, bound: true}, nil
	case least == runtime.MaxWatermark:
		// Every input had ended (stop --drain, a bounded input): every
		// window fired and every pane went. The restored job (a drained
		// savepoint is only restored with --allow-drained) keeps the
		// windows that fired fired: a record of one is late, not the
		// start of a second firing with only the records after the drain.
		// Later windows fire as usual, instead of every new record being
		// judged late. Without a last end (nothing fired, or a snapshot
		// of a flinkgo before it) it starts anew, as Flink does (it does
		// not restore the watermark).
		if lastEnd == runtime.MinWatermark {
			return firedMark{w: runtime.MinWatermark}, nil
		}
		return firedMark{w: lastEnd - 1}, nil
	}
	return firedMark{w: max(least, greatest)}, nil
}

// firedVersion is the format version of a fired watermark item.
const firedVersion = 1

// encodeFired writes m: version 1, the watermark, whether it is a bound.
func encodeFired(m firedMark) []byte {
	e := state.NewEncoder(firedVersion)
	e.Varint(m.w)
	e.Bool(m.bound)
	return e.Encoded()
}

// decodeFired reads a fired watermark item: encodeFired's, or the bare
// varint (exact) written before it had a version. Either is told apart by
// its shape: an old item is exactly one varint, while a new one's version
// byte (below 0x80) is a varint of one byte followed by more.
func decodeFired(b []byte) (firedMark, error) {
	if w, n := binary.Varint(b); n > 0 && n == len(b) {
		return firedMark{w: w}, nil
	}
	d := state.NewDecoder("window fired watermark", b, firedVersion)
	m := firedMark{w: d.Varint(), bound: d.Bool()}
	return m, d.Finish()
}

// lastEndVersion is the format version of a lastEndList item.
const lastEndVersion = 1

// encodeLastEnd writes a subtask's greatest window end fired: version 1,
// the end (varint). The list is newer than the version byte: it has no
// older form.
func encodeLastEnd(e int64) []byte {
	enc := state.NewEncoder(lastEndVersion)
	enc.Varint(e)
	return enc.Encoded()
}

func decodeLastEnd(b []byte) (int64, error) {
	d := state.NewDecoder("window last fired end", b, lastEndVersion)
	e := d.Varint()
	return e, d.Finish()
}

// restoreLastEnd is the greatest end of a window the old subtasks fired
// (MinWatermark when none recorded one): every window up to it fired on
// the subtask of its keys.
func restoreLastEnd(items [][]byte) (int64, error) {
	last := runtime.MinWatermark
	for _, it := range items {
		e, err := decodeLastEnd(it)
		if err != nil {
			return 0, err
		}
		last = max(last, e)
	}
	return last, nil
}
