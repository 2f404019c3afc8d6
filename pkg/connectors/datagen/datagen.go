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
	"github.com/flinkgo/flinkgo/pkg/connectors/internal/splits"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// options of the datagen source.
type options struct {
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

// maxRate bounds rate: the schedule counts records due since the start in
// an int64, and no machine generates more.
const maxRate = 1e9

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
	var o options
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
	if o.Rate < 0 || o.Rate > maxRate {
		c.Errorf("rate", "must be between 0 (unlimited) and %g records/s, got %g", float64(maxRate), o.Rate)
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
		return &source{start: start, count: count, pacer: splits.Pacer{Rate: o.Rate}, format: f, events: events}
	}}
}

// The sequence is cut into splits (pkg/connectors/internal/splits): split
// s of S holds start+s, start+s+S, … .

// Operator state lists. Snapshots hold positionsList: one versioned item
// per split. Snapshots of flinkgo before the state encoder hold
// legacySplitsList instead (three varints, no version byte); both are read.
const (
	positionsList    = "positions"
	legacySplitsList = "splits"
)

func decodeSplit(b []byte) (splits.Split, error) { return splits.Decode("datagen split", b) }

// decodeLegacySplit reads an item of legacySplitsList.
func decodeLegacySplit(b []byte) (splits.Split, error) {
	return splits.Check(state.NewDecoder("datagen split (legacy format)", append([]byte{splits.Version}, b...), splits.Version))
}

// restoredSplits decodes the splits of a restored state (nil: none).
func restoredSplits(o *state.OperatorState) ([]splits.Split, error) {
	items, decode := o.Get(positionsList), decodeSplit
	if items == nil {
		items, decode = o.Get(legacySplitsList), decodeLegacySplit
	}
	var out []splits.Split
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
	format       format
	events       *Events // format events
	splits       *splits.Set
	pacer        splits.Pacer
	arena        runtime.Arena
}

func (s *source) Open(ctx *runtime.Context) error {
	s.ctx = ctx
	restored, err := restoredSplits(ctx.OperatorState())
	if err != nil {
		return err
	}
	end := int64(splits.Unbounded) // configure refuses a count past the int64 range
	if s.count >= 0 {
		end = s.start + s.count
	}
	s.splits = splits.Open(ctx, restored, s.start, end)
	s.pacer.Start()
	return nil
}

// Splits lists the splits not exhausted yet (event time: one watermark per
// split).
func (s *source) Splits(dst []uint32) []uint32 { return s.splits.Active(dst) }

func (s *source) Poll(b *runtime.Batch) error {
	room := s.pacer.Room(s.ctx, cap(b.Records)-len(b.Records))
	now := time.Now().UnixMilli()
	for ; room > 0; room-- {
		v, id, ok := s.splits.Next()
		if !ok {
			return runtime.ErrEndOfInput
		}
		if s.events != nil {
			r := s.event(v)
			r.Split = id
			b.Records = append(b.Records, r)
		} else {
			b.Records = append(b.Records, runtime.Record{Value: s.value(int64(id), v), Timestamp: now, Split: id})
		}
		s.pacer.Emitted(1)
	}
	return nil
}

// value formats value v of split id.
func (s *source) value(id, v int64) []byte {
	switch s.format {
	case formatRaw:
		return s.arena.Append(20, func(d []byte) []byte { return strconv.AppendInt(d, v, 10) })
	case formatChecked:
		return s.arena.Append(maxCheckedLen, func(d []byte) []byte { return AppendChecked(d, int(id), v) })
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
	// Finished splits are kept too (as exhausted), so a restore at another
	// parallelism does not restart them.
	s.splits.Snapshot(s.ctx, positionsList)
	return nil
}

// DescribeState shows the next index of each split (savepoint inspect).
func (s *source) DescribeState() map[string]any {
	return map[string]any{"nextIndexBySplit": s.splits.Describe()}
}

func (s *source) Close() error { return nil }
