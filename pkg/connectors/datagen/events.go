// The events record format, which format: events emits: keyed, valued,
// event-timed JSON records with a bounded out-of-orderness and optional
// deliberate lateness,
//
//	{"idx": 42, "user": "u17", "amount": 73, "ts": 1767225600412}
//
// Every field of record N is a pure function of the options and N: not of
// the split that emits it, the parallelism, restarts or the wall clock. A
// test can therefore compute the exact input of a job (and so its reference
// results) from Events.At without running anything, and `flinkgo dev
// produce --events` writes the same records to Kafka or NATS.

package datagen

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"time"

	"github.com/flinkgo/flinkgo/pkg/connectors/internal/splitmix"
)

// EventOptions configure format events; DefaultEventOptions gives the
// defaults. Field names in errors (Problem.Field) are the spec's option
// names, given with each field.
type EventOptions struct {
	// Keys is the number of distinct users (keys): the user field of a
	// record is KeyPrefix followed by a number in [0, Keys), drawn
	// uniformly. keys; default 100.
	Keys int64
	// KeyPrefix starts every user field. keyPrefix; default "u"; printable
	// ASCII without '"' or '\', at most 64 bytes.
	KeyPrefix string
	// AmountMin and AmountMax bound the amount field, both included, drawn
	// uniformly. amountMin, amountMax; default 1 and 100.
	AmountMin, AmountMax int64
	// StartTime is the event time of index 0, in RFC 3339. startTime;
	// default 2026-01-01T00:00:00Z (a fixed date: runs are reproducible).
	StartTime string
	// Step is the event time advance per index: record N's in-order time
	// is StartTime + N×Step, rounded down to the millisecond. step;
	// default 10ms; 0 or more.
	Step time.Duration
	// OutOfOrderness: each record's ts is its in-order time minus a
	// pseudo-random delay in [0, OutOfOrderness] (whole milliseconds).
	// outOfOrderness; default 0 (in order).
	OutOfOrderness time.Duration
	// LateEvery, when positive, makes every record whose index is a
	// multiple of it late: its ts is its in-order time minus LateBy (no
	// random delay). lateEvery, lateBy; default 0 (none). LateBy must be a
	// positive whole number of milliseconds when LateEvery is set, and is
	// refused without it.
	LateEvery int64
	LateBy    time.Duration
	// Seed picks the pseudo-random user, amount and delay sequences.
	// seed; default 0.
	Seed int64
}

// defaultStartTime is the default EventOptions.StartTime.
const defaultStartTime = "2026-01-01T00:00:00Z"

// maxKeyPrefix bounds EventOptions.KeyPrefix, so a record's length is
// bounded (MaxLen).
const maxKeyPrefix = 64

// DefaultEventOptions returns the defaults of format events.
func DefaultEventOptions() EventOptions {
	return EventOptions{Keys: 100, KeyPrefix: "u", AmountMin: 1, AmountMax: 100,
		StartTime: defaultStartTime, Step: 10 * time.Millisecond}
}

// Problem is one invalid field of EventOptions: Field is its option name
// in a job spec (keys, keyPrefix, …), Msg what is wrong and what to write.
type Problem struct {
	Field, Msg string
}

func (p Problem) Error() string { return p.Field + ": " + p.Msg }

// Events generates the records of format events. It is immutable and safe
// for concurrent use.
type Events struct {
	keys             uint64
	prefix           string
	amountMin        int64
	amountSpan       uint64 // amountMax-amountMin+1; 0: all of int64
	startMs          int64
	stepNs           int64
	delaySpan        uint64 // OutOfOrderness in ms + 1
	lateEvery        int64
	lateByMs         int64
	seedKey, seedAmt uint64 // per field seeds of the splitmix64 sequences
	seedDelay        uint64
}

// Event is record N of format events, in fields.
type Event struct {
	Idx int64
	// Key is the user's number, in [0, Keys): the user field is
	// KeyPrefix + Key in decimal (Events.User).
	Key    int64
	Amount int64
	// TS is the event time in milliseconds since the epoch; it is also the
	// record's timestamp.
	TS int64
	// Late: a deliberately late record (LateEvery), not in the JSON.
	Late bool
}

// Problems lists every invalid field of o (none: o is valid).
func (o EventOptions) Problems() []Problem {
	var ps []Problem
	add := func(field, format string, args ...any) {
		ps = append(ps, Problem{field, fmt.Sprintf(format, args...)})
	}
	if o.Keys < 1 {
		add("keys", "must be at least 1, got %d", o.Keys)
	}
	if !jsonSafe(o.KeyPrefix) {
		add("keyPrefix", `must be at most %d bytes of printable ASCII without '"' or '\', got %q`, maxKeyPrefix, o.KeyPrefix)
	}
	if o.AmountMax < o.AmountMin {
		add("amountMax", "must not be less than amountMin (%d), got %d", o.AmountMin, o.AmountMax)
	}
	if _, err := time.Parse(time.RFC3339Nano, o.StartTime); err != nil {
		add("startTime", "must be an RFC 3339 time such as %q, got %q", defaultStartTime, o.StartTime)
	}
	if o.Step < 0 {
		add("step", "must be 0 or more, got %s", o.Step)
	}
	if msg := wholeMillis(o.OutOfOrderness); msg != "" {
		add("outOfOrderness", "%s", msg)
	}
	switch {
	case o.LateEvery < 0:
		add("lateEvery", "must be 0 (no late records) or more, got %d", o.LateEvery)
	case o.LateEvery > 0 && o.LateBy == 0:
		add("lateBy", "must be set with lateEvery: how far back a late record is shifted (e.g. 1m)")
	case o.LateEvery == 0 && o.LateBy != 0:
		add("lateBy", "needs lateEvery: which records are late (every lateEvery-th index)")
	}
	if msg := wholeMillis(o.LateBy); msg != "" {
		add("lateBy", "%s", msg)
	}
	return ps
}

func wholeMillis(d time.Duration) string {
	switch {
	case d < 0:
		return fmt.Sprintf("must be 0 or more, got %s", d)
	case d%time.Millisecond != 0:
		return fmt.Sprintf("must be a whole number of milliseconds (event times are in ms), got %s", d)
	}
	return ""
}

// jsonSafe: s goes into a JSON string as it is, and is not too long.
func jsonSafe(s string) bool {
	if len(s) > maxKeyPrefix {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// NewEvents returns the generator of o, or the first of o's Problems.
func NewEvents(o EventOptions) (*Events, error) {
	if ps := o.Problems(); len(ps) > 0 {
		return nil, ps[0]
	}
	start, _ := time.Parse(time.RFC3339Nano, o.StartTime)
	s := uint64(o.Seed)
	return &Events{
		keys: uint64(o.Keys), prefix: o.KeyPrefix,
		amountMin: o.AmountMin, amountSpan: uint64(o.AmountMax-o.AmountMin) + 1,
		startMs: start.UnixMilli(), stepNs: int64(o.Step),
		delaySpan: uint64(o.OutOfOrderness/time.Millisecond) + 1,
		lateEvery: o.LateEvery, lateByMs: int64(o.LateBy / time.Millisecond),
		seedKey: draw(s, 1), seedAmt: draw(s, 2), seedDelay: draw(s, 3),
	}, nil
}

// At returns record n. It is the contract of format events: the same
// options and n give the same Event, whatever emits it.
func (g *Events) At(n int64) Event {
	e := Event{Idx: n, Key: int64(below(draw(g.seedKey, n), g.keys))}
	if g.amountSpan == 0 {
		e.Amount = g.amountMin + int64(draw(g.seedAmt, n))
	} else {
		e.Amount = g.amountMin + int64(below(draw(g.seedAmt, n), g.amountSpan))
	}
	inOrder := g.InOrderTime(n)
	if g.lateEvery > 0 && n%g.lateEvery == 0 {
		e.TS, e.Late = inOrder-g.lateByMs, true
	} else {
		e.TS = inOrder - int64(below(draw(g.seedDelay, n), g.delaySpan))
	}
	return e
}

// InOrderTime is record n's event time before its delay: StartTime +
// n×Step in milliseconds, rounded down. It does not decrease with n.
func (g *Events) InOrderTime(n int64) int64 {
	return g.startMs + floorMulDiv(n, g.stepNs, int64(time.Millisecond))
}

// User returns e's user field.
func (g *Events) User(e Event) string { return g.prefix + strconv.FormatInt(e.Key, 10) }

// Field names and punctuation of a record, in order.
const (
	evIdx    = `{"idx": `
	evUser   = `, "user": "`
	evAmount = `", "amount": `
	evTS     = `, "ts": `
	evEnd    = `}`
)

// MaxLen bounds the length of a record of g.
func (g *Events) MaxLen() int {
	return len(evIdx) + len(evUser) + len(g.prefix) + len(evAmount) + len(evTS) + len(evEnd) + 4*20
}

// Append appends e as its JSON record (the value datagen emits), without a
// newline and without allocating.
func (g *Events) Append(dst []byte, e Event) []byte {
	dst = append(dst, evIdx...)
	dst = strconv.AppendInt(dst, e.Idx, 10)
	dst = append(dst, evUser...)
	dst = append(dst, g.prefix...)
	dst = strconv.AppendInt(dst, e.Key, 10)
	dst = append(dst, evAmount...)
	dst = strconv.AppendInt(dst, e.Amount, 10)
	dst = append(dst, evTS...)
	dst = strconv.AppendInt(dst, e.TS, 10)
	return append(dst, evEnd...)
}

// golden and mix64 are splitmix64's increment and finalizer.
const golden = splitmix.Golden

func mix64(x uint64) uint64 { return splitmix.Mix(x) }

// draw is element n of the splitmix64 sequence seeded with seed.
func draw(seed uint64, n int64) uint64 { return mix64(seed + uint64(n)*golden) }

// Hash is a pseudo-random non-negative int64 of n (splitmix64), the same
// mix format events uses; dev produce offers it to expressions as hash(n).
func Hash(n int64) int64 { return int64(draw(golden, n) >> 1) }

// below maps h uniformly onto [0, span).
func below(h, span uint64) uint64 { return splitmix.Below(h, span) }

// floorMulDiv is ⌊a×b/c⌋ for b ≥ 0, c > 0 without overflowing in a×b;
// results beyond int64 saturate.
func floorMulDiv(a, b, c int64) int64 {
	neg := a < 0
	ua := uint64(a)
	if neg {
		ua = -ua
	}
	hi, lo := bits.Mul64(ua, uint64(b))
	if hi >= uint64(c) {
		if neg {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, uint64(c))
	if neg {
		if r != 0 {
			q++ // ⌊-x⌋ = -⌈x⌉
		}
		if q >= 1<<63 {
			return math.MinInt64
		}
		return -int64(q)
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}
