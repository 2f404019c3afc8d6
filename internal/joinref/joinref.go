// Package joinref computes the results of stream joins from their inputs
// without any of flinkgo's operators: the independent reference the join
// tests (pkg/runtime/join, e2e) compare a job's output with. The inputs
// are datagen event streams ({"idx", "user", "amount", "ts"}), every record
// a pure function of its options and index (datagen.Events.At).
package joinref

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
)

// Stream is a datagen events source: count records of opts.
type Stream struct {
	Count int64
	Opts  datagen.EventOptions
}

// Events are the stream's records (datagen starts at index 1).
func (s Stream) Events() []datagen.Event {
	g, err := datagen.NewEvents(s.Opts)
	if err != nil {
		panic(err)
	}
	out := make([]datagen.Event, s.Count)
	for i := range out {
		out[i] = g.At(int64(i) + 1) // datagen starts at 1
	}
	return out
}

// Spec is the stream as a datagen source of a job spec, its event time the
// records' own with the stream's shuffle as maxOutOfOrderness.
func (s Stream) Spec(uid string, par int, rate int) string {
	late := ""
	if s.Opts.LateEvery > 0 {
		late = fmt.Sprintf("lateEvery: %d, lateBy: %s, ", s.Opts.LateEvery, s.Opts.LateBy)
	}
	return fmt.Sprintf(`{uid: %s, type: datagen, format: events, count: %d, rate: %d, parallelism: %d, keys: %d, seed: %d, step: %s, outOfOrderness: %s, %seventTime: {maxOutOfOrderness: %s}}`,
		uid, s.Count, rate, par, s.Opts.Keys, s.Opts.Seed, s.Opts.Step, s.Opts.OutOfOrderness, late, s.Opts.OutOfOrderness)
}

// NewStream is count records over keys users, seed, step and shuffle.
func NewStream(count, keys, seed int64, step, shuffle time.Duration) Stream {
	o := datagen.DefaultEventOptions()
	o.Keys, o.Seed, o.Step, o.OutOfOrderness = keys, seed, step, shuffle
	return Stream{Count: count, Opts: o}
}

func user(e datagen.Event) string { return fmt.Sprintf("u%d", e.Key) }

// result renders one join result as the tests' select writes it:
// {"l": left idx, "r": right idx, "k": key[, "ws": start, "we": end]}.
func result(l, r *datagen.Event, key string, window *[2]int64) string {
	idx := func(e *datagen.Event) string {
		if e == nil {
			return "null"
		}
		return fmt.Sprint(e.Idx)
	}
	s := fmt.Sprintf(`{"l":%s,"r":%s,"k":%q`, idx(l), idx(r), key)
	if window != nil {
		s += fmt.Sprintf(`,"ws":%d,"we":%d`, window[0], window[1])
	}
	return s + "}"
}

// The select expressions the references render (see result).
const WindowSelect = `{l: left.idx, r: right.idx, k: key, ws: windowStart, we: windowEnd}`
const IntervalSelect = `{l: left.idx, r: right.idx, k: key}`

type keyedWindow struct {
	key        string
	start, end int64
}

// joinGroups emits the results of one group (a key's window): every pair,
// and the unmatched rows of the sides an outer join keeps.
func joinGroups(groups map[keyedWindow][2][]datagen.Event, how string) []string {
	var out []string
	for g, sides := range groups {
		w := [2]int64{g.start, g.end}
		ls, rs := sides[0], sides[1]
		for i := range ls {
			for j := range rs {
				out = append(out, result(&ls[i], &rs[j], g.key, &w))
			}
		}
		if len(rs) == 0 && (how == "left" || how == "full") {
			for i := range ls {
				out = append(out, result(&ls[i], nil, g.key, &w))
			}
		}
		if len(ls) == 0 && (how == "right" || how == "full") {
			for j := range rs {
				out = append(out, result(nil, &rs[j], g.key, &w))
			}
		}
	}
	sort.Strings(out)
	return out
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Window joins by key within tumbling (slide == size) or
// sliding windows aligned to the epoch.
func Window(ls, rs []datagen.Event, size, slide int64, how string) []string {
	groups := map[keyedWindow][2][]datagen.Event{}
	for side, evs := range [][]datagen.Event{ls, rs} {
		for _, e := range evs {
			for s := floorDiv(e.TS, slide) * slide; s > e.TS-size; s -= slide {
				g := keyedWindow{user(e), s, s + size}
				v := groups[g]
				v[side] = append(v[side], e)
				groups[g] = v
			}
		}
	}
	return joinGroups(groups, how)
}

// Session joins by key within sessions of gap computed over
// both sides' rows of the key together: rows no more than gap apart are in
// one session [first, last+gap).
func Session(ls, rs []datagen.Event, gap int64, how string) []string {
	type tagged struct {
		e    datagen.Event
		side int
	}
	byKey := map[string][]tagged{}
	for side, evs := range [][]datagen.Event{ls, rs} {
		for _, e := range evs {
			byKey[user(e)] = append(byKey[user(e)], tagged{e, side})
		}
	}
	groups := map[keyedWindow][2][]datagen.Event{}
	for key, es := range byKey {
		sort.Slice(es, func(i, j int) bool { return es[i].e.TS < es[j].e.TS })
		var cur []tagged
		flush := func() {
			if len(cur) == 0 {
				return
			}
			g := keyedWindow{key, cur[0].e.TS, cur[len(cur)-1].e.TS + gap}
			var v [2][]datagen.Event
			for _, t := range cur {
				v[t.side] = append(v[t.side], t.e)
			}
			groups[g] = v
			cur = nil
		}
		for _, t := range es {
			if len(cur) > 0 && t.e.TS > cur[len(cur)-1].e.TS+gap {
				flush()
			}
			cur = append(cur, t)
		}
		flush()
	}
	return joinGroups(groups, how)
}

// Interval joins l and r of one key when
// l.ts+lower <= r.ts <= l.ts+upper; a left outer join adds the left rows
// that matched nothing.
func Interval(ls, rs []datagen.Event, lower, upper int64, how string) []string {
	return IntervalUntil(ls, rs, lower, upper, nil, how)
}

// NoUntil is what an until function gives for a left row with no bound of
// its own; Unbounded is an upper that is none (until bounds every row).
const (
	NoUntil   = math.MaxInt64
	Unbounded = math.MaxInt64
)

// IntervalUntil is Interval where left row l matches right rows up to
// until(l) when that is before l.TS+upper (until nil: none does).
func IntervalUntil(ls, rs []datagen.Event, lower, upper int64, until func(*datagen.Event) int64, how string) []string {
	byKey := map[string][]datagen.Event{}
	for _, r := range rs {
		byKey[user(r)] = append(byKey[user(r)], r)
	}
	var out []string
	for i := range ls {
		l := &ls[i]
		end := int64(NoUntil)
		if upper != Unbounded {
			end = l.TS + upper
		}
		if until != nil {
			end = min(end, until(l))
		}
		found := false
		for j, r := range byKey[user(*l)] {
			if r.TS >= l.TS+lower && r.TS <= end {
				out = append(out, result(l, &byKey[user(*l)][j], user(*l), nil))
				found = true
			}
		}
		if !found && how == "left" {
			out = append(out, result(l, nil, user(*l), nil))
		}
	}
	sort.Strings(out)
	return out
}
