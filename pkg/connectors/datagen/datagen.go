// Package datagen is a source of sequential numbers: {"idx": N} (json) or N
// (raw), for N = start, start+1, … . Its position is kept in checkpoints, so
// a restored job continues the sequence with no gap and no duplicate.
//
// Format checked emits the records of the exactly-once checker
// (internal/eocheck), {"split":S,"seq":N,"crc":"…"}: S is the split that
// holds N (see split) and the crc covers both, so a fault test can tell
// lost, duplicated, reordered and corrupted records apart.
//
// Format events emits keyed, event-timed records for event-time jobs and
// their tests,
//
//	{"idx": N, "user": "u17", "amount": 73, "ts": 1767225600412}
//
// with the record's timestamp set to ts (ms since the epoch). user is one
// of keys users (keyPrefix + a number), amount lies in [amountMin,
// amountMax], and ts is startTime + N×step minus a pseudo-random delay in
// [0, outOfOrderness], or minus lateBy for every lateEvery-th index (see
// EventOptions). Every field of record N is a pure function of (seed, N,
// options): the same at any parallelism, across restarts and restores at
// another parallelism, and whatever rate is set. rate paces emission by the
// wall clock; event time comes from the index alone. Tests build their
// reference input from NewEvents(…).At(N), which is this contract.
package datagen

import (
	"math"
	"strconv"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// Options of the datagen source.
type Options struct {
	Count  *int64  `yaml:"count"`  // total records; omit for unbounded
	Rate   float64 `yaml:"rate"`   // records/s for the whole source; 0 = as fast as possible
	Start  *int64  `yaml:"start"`  // first index (default 1)
	Format string  `yaml:"format"` // json (default), raw, checked or events

	// Options of format events: see EventOptions for each; unset ones
	// take DefaultEventOptions.
	Keys           *int64        `yaml:"keys"`
	KeyPrefix      *string       `yaml:"keyPrefix"`
	AmountMin      *int64        `yaml:"amountMin"`
	AmountMax      *int64        `yaml:"amountMax"`
	StartTime      *string       `yaml:"startTime"`
	Step           *api.Duration `yaml:"step"`
	OutOfOrderness *api.Duration `yaml:"outOfOrderness"`
	LateEvery      *int64        `yaml:"lateEvery"`
	LateBy         *api.Duration `yaml:"lateBy"`
	Seed           *int64        `yaml:"seed"`
}

// MaxRate bounds rate: the schedule counts records due since the start in
// an int64, and no machine generates more.
const MaxRate = 1e9

// format is how a value is written.
type format int

const (
	formatJSON    format = iota // {"idx": N}
	formatRaw                   // N
	formatChecked               // {"split":S,"seq":N,"crc":"…"}
	formatEvents                // {"idx": N, "user": …, "amount": …, "ts": …}
)

// Definitions returns the operator types of this package, for a
// runtime.Registry.
func Definitions() []runtime.Definition {
	return []runtime.Definition{
		{Type: "datagen", Kind: api.KindSource,
			Doc: `sequence source: {"idx": N} (format json), N (raw), {"split":S,"seq":N,"crc":"…"} (checked, for fault tests) or ` +
				`{"idx": N, "user": …, "amount": …, "ts": …} timestamped with ts (events: keys, keyPrefix, amountMin, amountMax, ` +
				`startTime, step, outOfOrderness, lateEvery, lateBy, seed); count (omit: unbounded), rate, start`, Configure: configure},
	}
}

func configure(c *runtime.ConfigContext) *runtime.Plan {
	var o Options
	c.Decode(&o)
	var f format
	switch o.Format {
	case "", "json":
		f = formatJSON
	case "raw":
		f = formatRaw
	case "checked":
		f = formatChecked
	case "events":
		f = formatEvents
	default:
		c.Errorf("format", "must be json, raw, checked or events, got %q", o.Format)
	}
	events := configureEvents(c, &o, f == formatEvents)
	if o.Count != nil && *o.Count < 0 {
		c.Errorf("count", "must be 0 or more, got %d", *o.Count)
	}
	if o.Rate < 0 || o.Rate > MaxRate {
		c.Errorf("rate", "must be between 0 (unlimited) and %g records/s, got %g", float64(MaxRate), o.Rate)
	}
	start := int64(1)
	if o.Start != nil {
		start = *o.Start
	}
	if o.Count != nil && start > 0 && *o.Count > math.MaxInt64-start {
		c.Errorf("count", "start %d + count %d goes past the largest index %d: at most %d records from this start", start, *o.Count, int64(math.MaxInt64-1), int64(math.MaxInt64)-start)
	}
	count := int64(-1)
	if o.Count != nil {
		count = *o.Count
	}
	return &runtime.Plan{Bounded: count >= 0, NewSource: func() runtime.Source {
		return &source{start: start, count: count, rate: o.Rate, format: f, events: events}
	}}
}

// The sequence is cut into splits: split s of S holds start+s, start+s+S, …
// S is the parallelism of the first run and never changes, so a restore at
// another parallelism just deals the splits out again.
type split struct {
	id, of int64
	next   int64 // next value to emit
}

// Operator state lists. Snapshots hold positionsList: one versioned item
// per split. Snapshots of flinkgo before the state encoder hold
// legacySplitsList instead (three varints, no version byte); both are read.
const (
	positionsList    = "positions"
	legacySplitsList = "splits"
	splitVersion     = 1
)

func (s split) encode() []byte {
	e := state.NewEncoder(splitVersion)
	e.Varint(s.id)
	e.Varint(s.of)
	e.Varint(s.next)
	return e.Encoded()
}

func decodeSplit(b []byte) (split, error) {
	d := state.NewDecoder("datagen split", b, splitVersion)
	s := split{id: d.Varint(), of: d.Varint(), next: d.Varint()}
	return s, s.check(d)
}

// decodeLegacySplit reads an item of legacySplitsList.
func decodeLegacySplit(b []byte) (split, error) {
	d := state.NewDecoder("datagen split (legacy format)", append([]byte{1}, b...), 1)
	s := split{id: d.Varint(), of: d.Varint(), next: d.Varint()}
	return s, s.check(d)
}

func (s split) check(d *state.Decoder) error {
	if d.Err() == nil && (s.of < 1 || s.id < 0 || s.id >= s.of) {
		d.Fail("split %d of %d", s.id, s.of)
	}
	return d.Finish()
}

// restoredSplits decodes the splits of a restored state (nil: none).
func restoredSplits(o *state.OperatorState) ([]split, error) {
	items, decode := o.Get(positionsList), decodeSplit
	if items == nil {
		items, decode = o.Get(legacySplitsList), decodeLegacySplit
	}
	var out []split
	for _, it := range items {
		sp, err := decode(it)
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, nil
}

type source struct {
	ctx          *runtime.Context
	start, count int64
	rate         float64
	format       format
	events       *Events // format events
	splits       []split
	cur          int
	arena        runtime.Arena
	began        time.Time
	emitted      int64
}

func (s *source) Open(ctx *runtime.Context) error {
	s.ctx = ctx
	restored, err := restoredSplits(ctx.OperatorState())
	if err != nil {
		return err
	}
	if restored != nil {
		for _, sp := range restored {
			if int(sp.id)%ctx.Parallelism() == ctx.Subtask() {
				s.splits = append(s.splits, sp)
			}
		}
	} else if !ctx.Restored() || ctx.OperatorState().Empty() {
		n := int64(ctx.Parallelism())
		s.splits = []split{{id: int64(ctx.Subtask()), of: n, next: advance(s.start, int64(ctx.Subtask()), s.end())}}
	}
	s.began = time.Now()
	return nil
}

// Splits lists the splits not exhausted yet (event time: one watermark per
// split).
func (s *source) Splits(dst []uint32) []uint32 {
	for _, sp := range s.splits {
		if sp.next < s.end() {
			dst = append(dst, uint32(sp.id))
		}
	}
	return dst
}

// end is the exclusive end of the sequence: start + count (configure
// refuses a count past the int64 range), or math.MaxInt64 when unbounded.
func (s *source) end() int64 {
	if s.count < 0 {
		return math.MaxInt64
	}
	return s.start + s.count
}

// advance is v + step, or end once that reaches or passes it, without
// overflowing anywhere in the int64 range (end - v is computed unsigned:
// it may exceed math.MaxInt64).
func advance(v, step, end int64) int64 {
	if v >= end || uint64(step) >= uint64(end)-uint64(v) {
		return end
	}
	return v + step
}

func (s *source) Poll(b *runtime.Batch) error {
	room := cap(b.Records) - len(b.Records)
	if s.rate > 0 {
		perSubtask := s.rate / float64(s.ctx.Parallelism())
		due := int64(time.Since(s.began).Seconds()*perSubtask) + 1 - s.emitted
		if due <= 0 {
			wait := time.Duration(float64(time.Second) / perSubtask)
			select {
			case <-time.After(min(wait, 50*time.Millisecond)):
			case <-s.ctx.Wakeup():
			}
			return nil
		}
		room = int(min(int64(room), due))
	}
	end := s.end()
	now := time.Now().UnixMilli()
	for room > 0 {
		if len(s.splits) == 0 {
			return runtime.ErrEndOfInput
		}
		sp := &s.splits[s.cur]
		if sp.next >= end {
			s.splits = append(s.splits[:s.cur], s.splits[s.cur+1:]...)
			s.cur = 0
			continue
		}
		v := sp.next
		sp.next = advance(v, sp.of, end)
		if s.events != nil {
			r := s.event(v)
			r.Split = uint32(sp.id)
			b.Records = append(b.Records, r)
		} else {
			b.Records = append(b.Records, runtime.Record{Value: s.value(sp.id, v), Timestamp: now, Split: uint32(sp.id)})
		}
		s.emitted++
		room--
		if s.cur++; s.cur >= len(s.splits) {
			s.cur = 0
		}
	}
	return nil
}

// value formats value v of split id.
func (s *source) value(id, v int64) []byte {
	switch s.format {
	case formatRaw:
		return s.arena.Append(20, func(d []byte) []byte { return strconv.AppendInt(d, v, 10) })
	case formatChecked:
		return s.arena.Append(MaxCheckedLen, func(d []byte) []byte { return AppendChecked(d, int(id), v) })
	}
	return s.arena.Append(30, func(d []byte) []byte {
		d = append(d, `{"idx": `...)
		d = strconv.AppendInt(d, v, 10)
		return append(d, '}')
	})
}

// event is record v of format events, timestamped with its event time.
func (s *source) event(v int64) runtime.Record {
	e := s.events.At(v)
	val := s.arena.Append(s.events.MaxLen(), func(d []byte) []byte { return s.events.Append(d, e) })
	return runtime.Record{Value: val, Timestamp: e.TS}
}

func (s *source) SnapshotState(int64) error {
	items := make([][]byte, len(s.splits))
	for i, sp := range s.splits {
		items[i] = sp.encode()
	}
	// Finished splits are kept too (as exhausted), so a restore at another
	// parallelism does not restart them.
	s.ctx.OperatorState().Set(positionsList, state.Union, items)
	return nil
}

// DescribeState shows the next index of each split (savepoint inspect).
func (s *source) DescribeState() map[string]any {
	next := map[string]int64{}
	for _, sp := range s.splits {
		next[strconv.FormatInt(sp.id, 10)] = sp.next
	}
	return map[string]any{"nextIndexBySplit": next}
}

func (s *source) Close() error { return nil }
