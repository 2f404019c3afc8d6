package datagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/transform"
)

func mustEvents(t testing.TB, o EventOptions) *Events {
	t.Helper()
	g, err := NewEvents(o)
	require.NoError(t, err)
	return g
}

// shuffled are options with every event feature on.
func shuffled() EventOptions {
	o := DefaultEventOptions()
	o.Keys, o.OutOfOrderness, o.LateEvery, o.LateBy, o.Seed = 13, 2*time.Second, 97, time.Minute, 42
	return o
}

// eventJSON is a record of format events as a consumer decodes it.
type eventJSON struct {
	Idx    int64  `json:"idx"`
	User   string `json:"user"`
	Amount int64  `json:"amount"`
	TS     int64  `json:"ts"`
}

func decodeEvent(t testing.TB, v []byte) eventJSON {
	t.Helper()
	var e eventJSON
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("%s: %v", v, err)
	}
	return e
}

// The generator's values are pinned: a change would make a savepoint
// taken before it restore into a different stream, and tests elsewhere
// rely on them being reproducible.
func TestEventsPinned(t *testing.T) {
	g := mustEvents(t, DefaultEventOptions())
	for n, want := range map[int64]string{
		0:    `{"idx": 0, "user": "u28", "amount": 81, "ts": 1767225600000}`,
		1:    `{"idx": 1, "user": "u65", "amount": 28, "ts": 1767225600010}`,
		1000: `{"idx": 1000, "user": "u56", "amount": 96, "ts": 1767225610000}`,
		-5:   `{"idx": -5, "user": "u0", "amount": 48, "ts": 1767225599950}`,
	} {
		require.Equal(t, want, string(g.Append(nil, g.At(n))), "idx %d", n)
	}
	o := DefaultEventOptions()
	o.OutOfOrderness, o.LateEvery, o.LateBy, o.Seed = 5*time.Second, 3, time.Minute, 42
	g = mustEvents(t, o)
	require.Equal(t, Event{Idx: 2, Key: 95, Amount: 31, TS: 1767225596051}, g.At(2))
	require.Equal(t, Event{Idx: 3, Key: 48, Amount: 51, TS: 1767225600030 - 60_000, Late: true}, g.At(3))
}

// A record is the JSON of its Event: the fields a consumer decodes are
// At's, the user field is the prefix and key number, and the value stays
// within MaxLen even at the extremes.
func TestEventsRecord(t *testing.T) {
	o := shuffled()
	o.KeyPrefix, o.AmountMin, o.AmountMax = "customer-", -3, 3
	g := mustEvents(t, o)
	for n := int64(-50); n < 500; n++ {
		e := g.At(n)
		j := decodeEvent(t, g.Append(nil, e))
		require.Equal(t, eventJSON{Idx: n, User: g.User(e), Amount: e.Amount, TS: e.TS}, j)
		require.Equal(t, fmt.Sprintf("customer-%d", e.Key), j.User)
		require.True(t, e.Key >= 0 && e.Key < 13 && e.Amount >= -3 && e.Amount <= 3, "%+v", e)
	}
	o.KeyPrefix = strings.Repeat("p", maxKeyPrefix)
	o.AmountMin, o.AmountMax = math.MinInt64, math.MaxInt64
	g = mustEvents(t, o)
	for _, n := range []int64{math.MinInt64, -1, 0, math.MaxInt64} {
		require.LessOrEqual(t, len(g.Append(nil, g.At(n))), g.MaxLen())
	}
}

// Users, amounts and delays cover their ranges about uniformly.
func TestEventsDistribution(t *testing.T) {
	o := DefaultEventOptions()
	o.Keys, o.AmountMin, o.AmountMax, o.OutOfOrderness = 7, 10, 12, 5*time.Millisecond
	g := mustEvents(t, o)
	const n = 70_000
	keys, amounts, delays := map[int64]int{}, map[int64]int{}, map[int64]int{}
	for i := int64(0); i < n; i++ {
		e := g.At(i)
		keys[e.Key]++
		amounts[e.Amount]++
		delays[g.InOrderTime(i)-e.TS]++
	}
	for _, c := range []struct {
		counts map[int64]int
		lo, hi int64
	}{{keys, 0, 6}, {amounts, 10, 12}, {delays, 0, 5}} {
		require.Len(t, c.counts, int(c.hi-c.lo+1), "%v", c.counts)
		for v := c.lo; v <= c.hi; v++ {
			require.InEpsilon(t, float64(n)/float64(len(c.counts)), float64(c.counts[v]), 0.05, "value %d of %v", v, c.counts)
		}
	}
	o.Seed = 1
	other := mustEvents(t, o)
	differ := 0
	for i := int64(0); i < 100; i++ {
		if other.At(i) != g.At(i) {
			differ++
		}
	}
	require.Greater(t, differ, 90, "another seed, another stream")
}

// In-order time is StartTime + n×Step rounded down, also for steps below
// a millisecond and for negative indices; it never decreases.
func TestEventsInOrderTime(t *testing.T) {
	o := DefaultEventOptions()
	o.StartTime, o.Step = "2026-01-01T01:00:00.5+01:00", 250*time.Microsecond
	g := mustEvents(t, o)
	start := int64(1767225600500)
	for n, want := range map[int64]int64{0: start, 3: start, 4: start + 1, 7: start + 1, -1: start - 1, -4: start - 1, -5: start - 2} {
		require.Equal(t, want, g.InOrderTime(n), "n %d", n)
	}
	for n := int64(-1000); n < 1000; n++ {
		require.LessOrEqual(t, g.InOrderTime(n), g.InOrderTime(n+1))
	}
	require.Equal(t, int64(math.MaxInt64), floorMulDiv(math.MaxInt64, math.MaxInt64, 1e6))
	require.Equal(t, int64(math.MinInt64), floorMulDiv(math.MinInt64, math.MaxInt64, 1e6))
	require.Equal(t, int64(math.MinInt64)/1_000_000-1, floorMulDiv(math.MinInt64, 1, 1_000_000))
}

// The out-of-orderness bound holds in every split: no record is further
// behind the largest timestamp before it than outOfOrderness, except the
// deliberately late ones, which are exactly lateBy behind their in-order
// time (and so behind any watermark of that bound). The bound is reached,
// so the test is not vacuous.
func TestEventsOutOfOrdernessBound(t *testing.T) {
	for _, ooo := range []time.Duration{0, time.Millisecond, 250 * time.Millisecond, 5 * time.Second} {
		o := DefaultEventOptions()
		o.OutOfOrderness, o.LateEvery, o.LateBy, o.Seed = ooo, 50, 30*time.Second, 9
		g := mustEvents(t, o)
		for _, par := range []int{1, 3} {
			for _, s := range openSources(t, source{start: 1, count: 6000, format: formatEvents, events: g}, par, nil) {
				maxSeen, worst := int64(math.MinInt64), int64(0)
				for _, r := range drainRecords(t, s, math.MaxInt) {
					e := decodeEvent(t, r.Value)
					if e.TS != r.Timestamp {
						t.Fatalf("idx %d: timestamp %d, ts %d: the record's timestamp is its ts", e.Idx, r.Timestamp, e.TS)
					}
					if e.Idx%50 == 0 {
						if e.TS != g.InOrderTime(e.Idx)-30_000 {
							t.Fatalf("late idx %d: ts %d, want in-order time %d - 30s", e.Idx, e.TS, g.InOrderTime(e.Idx))
						}
						if maxSeen != math.MinInt64 && e.TS >= maxSeen-ooo.Milliseconds() {
							t.Fatalf("late idx %d: ts %d is not behind the watermark of max %d", e.Idx, e.TS, maxSeen)
						}
						continue
					}
					maxSeen = max(maxSeen, e.TS)
					worst = max(worst, maxSeen-e.TS)
				}
				require.LessOrEqual(t, worst, ooo.Milliseconds(), "outOfOrderness %s, parallelism %d", ooo, par)
				if ooo >= 100*time.Millisecond { // well above the step: records overtake each other
					require.Greater(t, worst, ooo.Milliseconds()/2, "the bound is used")
				}
			}
		}
	}
}

// reference is the exact input of a datagen events source over
// start..start+count-1, computed from the contract (Events.At).
func reference(g *Events, start, count int64) map[int64]runtime.Record {
	out := map[int64]runtime.Record{}
	for n := start; n < start+count; n++ {
		e := g.At(n)
		out[n] = runtime.Record{Value: g.Append(nil, e), Timestamp: e.TS}
	}
	return out
}

// collect adds records to got by idx, failing on a duplicate.
func collect(t *testing.T, got map[int64]runtime.Record, recs []runtime.Record) {
	t.Helper()
	for _, r := range recs {
		idx := decodeEvent(t, r.Value).Idx
		_, dup := got[idx]
		require.False(t, dup, "duplicate idx %d", idx)
		got[idx] = runtime.Record{Value: slices.Clone(r.Value), Timestamp: r.Timestamp}
	}
}

// The same records, value and timestamp, at any parallelism and across a
// restore at another parallelism from a snapshot taken at uneven progress.
func TestEventsSameAtAnyParallelismAndRestore(t *testing.T) {
	g := mustEvents(t, shuffled())
	const start, count = 5, 3000
	want := reference(g, start, count)
	proto := source{start: start, count: count, format: formatEvents, events: g}
	for _, par := range []int{1, 2, 3} {
		got := map[int64]runtime.Record{}
		for _, s := range openSources(t, proto, par, nil) {
			collect(t, got, drainRecords(t, s, math.MaxInt))
		}
		require.Equal(t, want, got, "parallelism %d", par)
	}
	for _, par := range []int{1, 2, 5} {
		first := openSources(t, proto, 3, nil)
		got := map[int64]runtime.Record{}
		for i, s := range first {
			collect(t, got, drainRecords(t, s, 100*(i+1)))
		}
		for _, s := range openSources(t, proto, par, snapshot(t, first)) {
			collect(t, got, drainRecords(t, s, math.MaxInt))
		}
		require.Equal(t, want, got, "restored at parallelism %d", par)
	}
}

// Through a job: stop with a savepoint halfway, restore at another
// parallelism; the job saw exactly the reference input, each record with
// its event time as timestamp.
func TestEventsStopAndRestoreThroughJob(t *testing.T) {
	name := runtimetest.UniqueName(t)
	defer runtimetest.Reset(name)
	types := slices.Concat(testTypes, transform.Definitions())
	spec := func(par, rate int) string {
		return fmt.Sprintf(`
name: events
parallelism: %d
checkpointing: {interval: 20ms}
operators:
  - {uid: gen, type: datagen, count: 3000, rate: %d, format: events, keys: 13, outOfOrderness: 2s, lateEvery: 97, lateBy: 1m, seed: 42}
  - {uid: stamp, type: map, from: [gen], expr: 'value + " @" + string(timestamp)'}
  - {uid: out, type: test-collect, from: [stamp], name: %s, parallelism: 1}
`, par, rate, name)
	}
	sp := t.TempDir()
	j := runtimetest.Start(t, spec(2, 10000), runtimetest.Options{Types: types, CheckpointsDir: t.TempDir(), SavepointsDir: sp})
	runtimetest.WaitCollected(t, 20*time.Second, name, 300)
	path, _, err := j.Stop("", false)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 10*time.Second))
	require.Less(t, len(runtimetest.Values(name)), 3000, "stopped before the end")

	j = runtimetest.Start(t, spec(3, 0), runtimetest.Options{Types: types, CheckpointsDir: t.TempDir(), Restore: path})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	want := map[string]bool{}
	for _, r := range reference(mustEvents(t, shuffled()), 1, 3000) {
		want[fmt.Sprintf("%s @%d", r.Value, r.Timestamp)] = true
	}
	got := map[string]bool{}
	for _, v := range runtimetest.Values(name) {
		require.False(t, got[v], "duplicate %s", v)
		got[v] = true
	}
	require.Equal(t, want, got)
}

// Every option error names its field at its line, all at once; the event
// options are refused with another format.
func TestEventsOptionErrors(t *testing.T) {
	for _, c := range []struct{ opts, want string }{
		{`keys: 0`, `keys: must be at least 1, got 0`},
		{`keyPrefix: 'a"b'`, `keyPrefix: must be at most 64 bytes of printable ASCII without '"' or '\', got "a\"b"`},
		{`keyPrefix: ` + strings.Repeat("x", 65), `keyPrefix: must be at most 64 bytes`},
		{`amountMax: 0`, `amountMax: must not be less than amountMin (1), got 0`},
		{`startTime: yesterday`, `startTime: must be an RFC 3339 time such as "2026-01-01T00:00:00Z", got "yesterday"`},
		{`step: -1s`, `step: duration -1s is negative`},
		{`step: soon`, `step: "soon" is not a duration`},
		{`outOfOrderness: 1.5ms`, `outOfOrderness: must be a whole number of milliseconds (event times are in ms), got 1.5ms`},
		{`outOfOrderness: -2s`, `outOfOrderness: duration -2s is negative`},
		{`lateEvery: -1`, `lateEvery: must be 0 (no late records) or more, got -1`},
		{`lateEvery: 10`, `lateBy: must be set with lateEvery`},
		{`lateBy: 1m`, `lateBy: needs lateEvery`},
		{`seed: x`, `seed:`},
	} {
		spec := "name: bad\noperators:\n  - uid: gen\n    type: datagen\n    format: events\n    " + c.opts +
			"\n  - {uid: out, type: test-collect, from: [gen], name: x}\n"
		_, err := engine.Compile(testRegistry, "t.yaml", []byte(spec), engine.Defaults{})
		require.Error(t, err, c.opts)
		require.Regexp(t, `t\.yaml:[356]:\d+: operators\[0\]\.`+regexp.QuoteMeta(c.want), err.Error())
	}
	_, err := engine.Compile(testRegistry, "t.yaml", []byte(`
name: bad
operators:
  - {uid: gen, type: datagen, keys: 5, seed: 1}
  - {uid: gen2, type: datagen, format: events, keys: 0, step: -1s, startTime: now}
  - {uid: out, type: test-collect, from: [gen, gen2], name: x}
`), engine.Defaults{})
	require.ErrorContains(t, err, "operators[0].keys: is an option of format: events; set format: events or remove it")
	require.ErrorContains(t, err, "operators[0].seed: is an option of format: events")
	require.ErrorContains(t, err, "operators[1].keys: must be at least 1")
	require.ErrorContains(t, err, "operators[1].step: duration -1s is negative")
	require.ErrorContains(t, err, "operators[1].startTime: must be an RFC 3339 time")

	_, err = engine.Compile(testRegistry, "t.yaml", []byte(`
name: good
operators:
  - {uid: gen, type: datagen, format: events, keys: 1, keyPrefix: "", amountMin: 7, amountMax: 7, startTime: "2030-06-01T12:00:00.250Z",
     step: 0s, outOfOrderness: 0, lateEvery: 1, lateBy: 1ms, seed: -3}
  - {uid: out, type: test-collect, from: [gen], name: x}
`), engine.Defaults{})
	require.NoError(t, err)
}

// Problems lists every bad field, in the spec's names, and NewEvents
// refuses options with one.
func TestEventOptionsProblems(t *testing.T) {
	require.Empty(t, DefaultEventOptions().Problems())
	o := DefaultEventOptions()
	o.Keys, o.Step, o.LateBy = 0, -time.Second, time.Second
	var fields []string
	for _, p := range o.Problems() {
		fields = append(fields, p.Field)
	}
	require.Equal(t, []string{"keys", "step", "lateBy"}, fields)
	_, err := NewEvents(o)
	require.EqualError(t, err, "keys: must be at least 1, got 0")
}

// Formatting a record into the source's arena does not allocate per
// record: a poll of a full batch allocates at most the arena blocks it
// fills.
func TestEventsPollAllocations(t *testing.T) {
	g := mustEvents(t, shuffled())
	s := openSources(t, source{start: 1, count: -1, format: formatEvents, events: g}, 1, nil)[0]
	b := runtime.NewBatch()
	allocs := testing.AllocsPerRun(200, func() {
		b.Reset()
		require.NoError(t, s.Poll(b))
	})
	// A 32 KiB block holds at least 32768/MaxLen (here 268) records.
	require.LessOrEqual(t, allocs, 3.0, "allocations per poll of %d records", runtime.DefaultBatchSize)
	dst := make([]byte, 0, g.MaxLen())
	require.Zero(t, testing.AllocsPerRun(1000, func() { dst = g.Append(dst[:0], g.At(12345)) }))
}
