package join

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// A model test of intervalJoin, with and without until, driven directly
// (no engine): random keys, timestamps, untils (null, in the past, before
// l.ts+lower, far ahead), random lower/upper (negative ones, upper left
// out), random arrival order with watermarks advanced at random points
// (never past a record still to come), snapshot + restore at another
// parallelism at random points. The results must equal a brute-force
// reference, none may be stamped at or behind the watermark downstream
// had when it came, and every key's state and timers must be gone at the
// end.

type modelEv struct {
	left   bool
	id     int
	key    string
	ts     int64
	until  *int64 // left only; nil: null
	values []byte
}

type modelTimers struct{ t *state.Timers }

func (m modelTimers) RegisterEventTime(ts int64)    { m.t.Register(ts) }
func (m modelTimers) RegisterProcessingTime(int64)  { panic("no") }
func (m modelTimers) DeleteEventTime(ts int64)      { m.t.Delete(ts) }
func (m modelTimers) DeleteProcessingTime(ts int64) { panic("no") }

type emitted struct {
	v        string
	ts, wmIn int64 // wmIn: the watermark the downstream had seen when it came
}

type modelOut struct {
	got *[]emitted
	wm  *int64
}

func (o modelOut) Emit(r runtime.Record) {
	*o.got = append(*o.got, emitted{v: string(r.Value), ts: r.Timestamp, wmIn: *o.wm})
}
func (o modelOut) EmitTo(tag string, r runtime.Record) { panic("late row in the model: " + tag) }

type modelSubtask struct {
	kb     *state.KeyedBackend
	timers *state.Timers
	op     *intervalJoin
}

type model struct {
	t          testing.TB
	maxPar     int
	cfg        config
	lower, up  int64
	subs       []*modelSubtask
	wm         int64 // the operators' input watermark
	downWM     int64 // the watermark sent downstream (after timers fired)
	got        []emitted
	lateStamps int
}

func (m *model) open(par int, old []*state.Snapshot) {
	m.subs = nil
	for i := 0; i < par; i++ {
		kb := state.NewKeyedBackend(m.maxPar, state.RangeForSubtask(m.maxPar, par, i))
		if old != nil {
			kb.Restore(old)
		}
		tm, err := state.NewTimers(kb, "__timers.event")
		require.NoError(m.t, err)
		ctx := runtime.NewContext(runtime.ContextOptions{Keyed: kb, Timers: modelTimers{tm}, MaxParallelism: m.maxPar,
			Parallelism: par, Subtask: i, Restored: old != nil, Watermark: func() int64 { return m.wm }})
		op := newIntervalJoin(m.cfg.clone(), m.lower, m.up)
		require.NoError(m.t, op.Open(ctx))
		m.subs = append(m.subs, &modelSubtask{kb: kb, timers: tm, op: op})
	}
}

func (m *model) sub(key string) *modelSubtask {
	kg := state.KeyGroup([]byte(key), m.maxPar)
	return m.subs[state.SubtaskForKeyGroup(m.maxPar, len(m.subs), kg)]
}

func (m *model) out() modelOut { return modelOut{got: &m.got, wm: &m.downWM} }

func (m *model) process(e modelEv) {
	s := m.sub(e.key)
	key := []byte(e.key)
	s.kb.SetCurrentKey(key)
	r := runtime.Record{Key: key, Value: e.values, Timestamp: e.ts}
	var err error
	if e.left {
		err = s.op.ProcessElement1(r, m.out())
	} else {
		err = s.op.ProcessElement2(r, m.out())
	}
	require.NoError(m.t, err)
}

func (m *model) advance(w int64) {
	if w <= m.wm {
		return
	}
	m.wm = w
	for _, s := range m.subs {
		for {
			ts, ok := s.timers.PopCurrent(w)
			if !ok {
				break
			}
			require.NoError(m.t, s.op.OnTimer(ts, runtime.EventTime, m.out()))
		}
	}
	m.downWM = w
}

func (m *model) snapshotRestore(par int) {
	var snaps []*state.Snapshot
	for _, s := range m.subs {
		b, _ := state.Encode(state.NewOperatorState(), s.kb)
		sn, err := state.Decode(b)
		require.NoError(m.t, err)
		snaps = append(snaps, sn)
	}
	m.open(par, snaps)
}

func modelConfig(t testing.TB, how how, until bool) config {
	cfg := config{how: how, where: -1, tsExpr: -1, untilExpr: -1, selects: []string{"l", "r", "k"}}
	var exprs []*expr.RowExpr
	for _, src := range []string{"left.id", "right.id", "key"} {
		e, err := expr.CompileRowExprWith(nil, src, expr.Any, rowNames, "key")
		require.NoError(t, err)
		exprs = append(exprs, e)
	}
	cfg.exprs = expr.NewRowSet(rowNames, exprs...)
	if until {
		// reads a member nothing else reads: the projection must keep it
		e, err := expr.CompileRowExprWith(nil, "left.u", expr.Any, rowNames, "key")
		require.NoError(t, err)
		cfg.untilExpr, cfg.untilSrc = cfg.exprs.Len(), "left.u"
		cfg.exprs = cfg.exprs.With(e)
	}
	return cfg
}

func refEnd(l modelEv, upper int64) int64 {
	end := int64(math.MaxInt64)
	if upper != unbounded {
		end = l.ts + upper
	}
	if l.until != nil {
		end = min(end, *l.until)
	}
	return end
}

func modelRef(evs []modelEv, lower, upper int64, how how) []string {
	var out []string
	for _, l := range evs {
		if !l.left {
			continue
		}
		found := false
		for _, r := range evs {
			if r.left || r.key != l.key {
				continue
			}
			if r.ts >= l.ts+lower && r.ts <= refEnd(l, upper) {
				out = append(out, fmt.Sprintf(`{"l":%d,"r":%d,"k":%q}`, l.id, r.id, l.key))
				found = true
			}
		}
		if !found && how == leftOuter {
			out = append(out, fmt.Sprintf(`{"l":%d,"r":null,"k":%q}`, l.id, l.key))
		}
	}
	sort.Strings(out)
	return out
}

type modelCase struct {
	seed         int64
	lower, upper int64
	how          how
	until        bool
	restores     bool
}

func runModel(t *testing.T, c modelCase) (got []emitted, want []string, m *model) {
	rng := rand.New(rand.NewSource(c.seed))
	n := 40 + rng.Intn(160)
	keys := 1 + rng.Intn(5)
	var evs []modelEv
	for i := 0; i < n; i++ {
		e := modelEv{left: rng.Intn(2) == 0, id: i, key: fmt.Sprintf("k%d", rng.Intn(keys)), ts: int64(rng.Intn(1000))}
		if e.left {
			u := "null"
			if c.until && (c.upper == unbounded || rng.Intn(5) > 0) { // null needs an upper
				v := e.ts + int64(rng.Intn(400)-150) // in the past, before lower, ahead
				if rng.Intn(10) == 0 {
					v = int64(rng.Intn(1000)) - 500 // anywhere, maybe before the watermark
				}
				e.until = &v
				u = fmt.Sprint(v)
			}
			e.values = []byte(fmt.Sprintf(`{"id":%d,"u":%s,"pad":"x"}`, i, u))
		} else {
			e.values = []byte(fmt.Sprintf(`{"id":%d}`, i))
		}
		evs = append(evs, e)
	}
	order := rng.Perm(n)
	m = &model{t: t, maxPar: 16, cfg: modelConfig(t, c.how, c.until), lower: c.lower, up: c.upper,
		wm: runtime.MinWatermark, downWM: runtime.MinWatermark}
	m.open(1+rng.Intn(3), nil)
	for i, j := range order {
		// the watermark may go up to just below the earliest record to come
		if rng.Intn(4) == 0 {
			lowest := int64(math.MaxInt64)
			for _, k := range order[i:] {
				lowest = min(lowest, evs[k].ts)
			}
			from := max(m.wm, -1)
			if lowest-1 > from {
				m.advance(from + 1 + rng.Int63n(lowest-1-from))
			}
		}
		if c.restores && rng.Intn(20) == 0 {
			m.snapshotRestore(1 + rng.Intn(3))
		}
		m.process(evs[j])
	}
	m.advance(runtime.MaxWatermark)
	for _, s := range m.subs {
		require.Zero(t, s.op.stats[left].rows+s.op.stats[right].rows, "rows left in state")
		require.Zero(t, s.timers.Len(), "timers left")
		require.Zero(t, s.kb.NumKeys(), "keys left")
	}
	return m.got, modelRef(evs, c.lower, c.upper, c.how), m
}

func TestIntervalJoinModel(t *testing.T) {
	bounds := [][2]int64{{0, 100}, {-50, 50}, {-80, -20}, {20, 200}, {0, unbounded}, {-60, unbounded}, {30, unbounded}}
	for seed := int64(1); seed <= 300; seed++ {
		b := bounds[seed%int64(len(bounds))]
		for _, how := range []how{inner, leftOuter} {
			c := modelCase{seed: seed, lower: b[0], upper: b[1], how: how, until: b[1] == unbounded || seed%3 != 0, restores: seed%2 == 0}
			got, want, _ := runModel(t, c)
			var vs []string
			for _, e := range got {
				vs = append(vs, e.v)
				require.Greater(t, e.ts, e.wmIn, "case %+v: %s stamped at or behind the watermark downstream had", c, e.v)
			}
			sort.Strings(vs)
			if !slices.Equal(want, vs) {
				t.Fatalf("case %+v:\nwant %d: %s\ngot  %d: %s", c, len(want), strings.Join(want, " "), len(vs), strings.Join(vs, " "))
			}
		}
	}
}

// BenchmarkIntervalRightExpiryWithManyLeftRows is the cost per right row
// of a key holding n left rows that stay (until far ahead) while right
// rows come and expire one by one, each firing the right side's timer:
// the left rows are not walked for it, with until or without.
func BenchmarkIntervalRightExpiryWithManyLeftRows(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		for _, until := range []bool{false, true} {
			b.Run(fmt.Sprintf("left=%d/until=%v", n, until), func(b *testing.B) {
				m := &model{t: b, maxPar: 16, cfg: modelConfig(b, inner, until), lower: 0, up: 1e9,
					wm: runtime.MinWatermark, downWM: runtime.MinWatermark}
				m.open(1, nil)
				for i := 0; i < n; i++ {
					m.process(modelEv{left: true, id: i, key: "k", ts: 1e6 + int64(i), values: []byte(fmt.Sprintf(`{"id":%d,"u":%d}`, i, int64(1e9)))})
				}
				rv := []byte(`{"id":1}`)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					m.process(modelEv{key: "k", ts: int64(i) + 1, values: rv})
					m.advance(int64(i) + 1)
				}
			})
		}
	}
}

// A savepoint of a join with until restored into one without: the rows
// end at l.ts+upper, as the spec now says, in order (the until they kept
// is not read).
func TestIntervalUntilRemovedOnRestore(t *testing.T) {
	m := &model{t: t, maxPar: 16, cfg: modelConfig(t, leftOuter, true), lower: 0, up: 1000,
		wm: runtime.MinWatermark, downWM: runtime.MinWatermark}
	m.open(1, nil)
	m.process(modelEv{left: true, id: 1, key: "k", ts: 10, values: []byte(`{"id":1,"u":null}`)}) // end 1010
	m.process(modelEv{left: true, id: 2, key: "k", ts: 20, values: []byte(`{"id":2,"u":50}`)})   // end 50, now 1020
	m.advance(5)
	m.cfg = modelConfig(t, leftOuter, false)
	m.snapshotRestore(1)
	m.advance(100)
	require.Empty(t, m.got)
	m.process(modelEv{key: "k", ts: 500, values: []byte(`{"id":3}`)})
	m.advance(2000)
	require.Equal(t, []emitted{{v: `{"l":1,"r":3,"k":"k"}`, ts: 500, wmIn: 100}, {v: `{"l":2,"r":3,"k":"k"}`, ts: 500, wmIn: 100}}, m.got)
	require.Zero(t, m.subs[0].kb.NumKeys())
}

// A savepoint of a join without until (or of state format 2) restored
// into one with until: a restored left row's until is evaluated from its
// kept value when the join next meets its key (a record or a timer), so
// it matches no right row after it and ends there, not at l.ts+upper.
// (The old spec read u, as q4's where read expires, so the rows kept it;
// a row without it fails as TestIntervalUntilNullWithoutUpperFails.)
func TestIntervalUntilAddedOnRestore(t *testing.T) {
	old := modelConfig(t, leftOuter, true)
	old.untilExpr = -1 // read, not an until
	m := &model{t: t, maxPar: 16, cfg: old, lower: 0, up: 1000,
		wm: runtime.MinWatermark, downWM: runtime.MinWatermark}
	m.open(1, nil)
	m.process(modelEv{left: true, id: 1, key: "k", ts: 10, values: []byte(`{"id":1,"u":50}`)})
	m.process(modelEv{left: true, id: 2, key: "j", ts: 10, values: []byte(`{"id":2,"u":50}`)})
	m.advance(5)
	m.cfg = modelConfig(t, leftOuter, true)
	m.up = unbounded
	m.snapshotRestore(2)
	m.process(modelEv{key: "k", ts: 60, values: []byte(`{"id":3}`)}) // after row 1's until
	m.advance(100)
	require.Equal(t, []emitted{{v: `{"l":1,"r":null,"k":"k"}`, ts: 50, wmIn: 5}}, m.got, "row 1 ended at its until")
	m.advance(2000) // row 2's key was not met: its old timer (1010) ends it
	require.Len(t, m.got, 2)
	require.Equal(t, emitted{v: `{"l":2,"r":null,"k":"j"}`, ts: 1010, wmIn: 100}, m.got[1])
	for _, s := range m.subs {
		require.Zero(t, s.kb.NumKeys())
	}
}

// With no upper, an until that gives null would keep its row for ever:
// the join fails with the expression and the row, instead.
func TestIntervalUntilNullWithoutUpperFails(t *testing.T) {
	m := &model{t: t, maxPar: 16, cfg: modelConfig(t, inner, true), lower: 0, up: unbounded,
		wm: runtime.MinWatermark, downWM: runtime.MinWatermark}
	m.open(1, nil)
	s := m.sub("k")
	s.kb.SetCurrentKey([]byte("k"))
	err := s.op.ProcessElement1(runtime.Record{Key: []byte("k"), Value: []byte(`{"id":1,"u":null}`), Timestamp: 10}, m.out())
	require.EqualError(t, err, `until "left.u" gave null for left row {"id":1,"u":null}, and the join has no upper: `+
		`the row would be kept for ever; give upper too, or make until give a time`)
	err = s.op.ProcessElement1(runtime.Record{Key: []byte("k"), Value: []byte(`{"id":1,"u":"soon"}`), Timestamp: 10}, m.out())
	require.EqualError(t, err, `until "left.u" gave "soon", neither a number of milliseconds nor an RFC 3339 time, for left row {"id":1,"u":"soon"}`)
	require.Zero(t, s.op.stats[left].rows, "nothing kept")
}
