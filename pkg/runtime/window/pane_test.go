package window

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// The harness drives operator (timers per key) and paneOp (by watermark)
// with the same records and watermarks, as the engine does, over real
// keyed state, timers and snapshots.

const harnessMaxPar = 128

// fakeTimers is the engine's event-time timer service: keyed state
// "__timers.event" (snapshotted with the keyed state, as the engine's).
type fakeTimers struct {
	ev *state.Timers
	pt *state.Timers
}

func newFakeTimers(t testing.TB, b *state.KeyedBackend) *fakeTimers {
	ev, err := state.NewTimers(b, "__timers.event")
	require.NoError(t, err)
	pt, err := state.NewTimers(b, "__timers.processing")
	require.NoError(t, err)
	return &fakeTimers{ev: ev, pt: pt}
}

func (f *fakeTimers) RegisterEventTime(ts int64)      { f.ev.Register(ts) }
func (f *fakeTimers) DeleteEventTime(ts int64)        { f.ev.Delete(ts) }
func (f *fakeTimers) RegisterProcessingTime(ts int64) { f.pt.Register(ts) }
func (f *fakeTimers) DeleteProcessingTime(ts int64)   { f.pt.Delete(ts) }

func (f *fakeTimers) EachTimer(d runtime.TimeDomain, fn func(key string, ts []int64)) {
	if d == runtime.ProcessingTime {
		f.pt.Each(fn)
	} else {
		f.ev.Each(fn)
	}
}

// firePT pops the processing-time timers at or before w, as the engine.
func (f *fakeTimers) firePT(w int64, fn func(ts int64) error) error {
	for {
		ts, ok := f.pt.PopCurrent(w)
		if !ok {
			return nil
		}
		if err := fn(ts); err != nil {
			return err
		}
	}
}

// fire pops the timers at or before w in timestamp order, as the engine.
func (f *fakeTimers) fire(w int64, fn func(ts int64) error) error {
	for {
		ts, ok := f.ev.PopCurrent(w)
		if !ok {
			return nil
		}
		if err := fn(ts); err != nil {
			return err
		}
	}
}

type collected struct {
	main []string
	late []int64
}

func (c *collected) Emit(r runtime.Record) { c.main = append(c.main, string(r.Value)) }
func (c *collected) EmitTo(tag string, r runtime.Record) {
	if tag != lateOutput {
		panic(tag)
	}
	c.late = append(c.late, r.Timestamp)
}

type harness struct {
	cfg    config
	b      *state.KeyedBackend
	ops    *state.OperatorState
	ctx    *runtime.Context
	fn     runtime.KeyedProcessFunction
	timers *fakeTimers
	wm     int64
	out    *collected
	m      *runtime.Metrics
}

func countConfig(t testing.TB, a Assigner, lateness int64, global bool) config {
	ag, err := parseAggregate("n", "count()")
	require.NoError(t, err)
	return config{assigner: a, lateness: lateness, aggs: []aggregate{ag}, args: expr.NewMulti(), global: global, orderFree: true}
}

// newHarness opens impl ("operator": the old layout, timerOp; "pane" or
// "chooser": what the window runs, paneOp) on subtask sub
// of par, restored from old when old is not nil.
func newHarness(t testing.TB, cfg config, impl string, old []*state.Snapshot, sub, par int) *harness {
	h := &harness{cfg: cfg, wm: runtime.MinWatermark, out: &collected{}, m: &runtime.Metrics{}}
	h.b = state.NewKeyedBackend(harnessMaxPar, state.RangeForSubtask(harnessMaxPar, par, sub))
	h.ops = state.NewOperatorState()
	if old != nil {
		h.b.Restore(old)
		h.ops = state.RestoreOperatorState(old, sub, par)
	}
	h.timers = newFakeTimers(t, h.b)
	h.ctx = runtime.NewContext(runtime.ContextOptions{Keyed: h.b, State: h.ops, Timers: h.timers, Restored: old != nil,
		Subtask: sub, Parallelism: par, MaxParallelism: harnessMaxPar, Metrics: h.m,
		Watermark: func() int64 { return h.wm }})
	switch impl {
	case "operator":
		h.fn = newTimerOp(cfg)
	case "pane":
		h.fn = newPaneOp(cfg)
	default:
		h.fn = newFunction(cfg)
	}
	require.NoError(t, h.fn.Open(h.ctx))
	return h
}

func (h *harness) rec(t testing.TB, key string, ts int64) {
	h.b.SetCurrentKey([]byte(key))
	require.NoError(t, h.fn.ProcessElement(runtime.Record{Key: []byte(key), Timestamp: ts}, h.out))
}

func (h *harness) watermark(t testing.TB, w int64) {
	if w <= h.wm {
		return
	}
	h.wm = w
	require.NoError(t, h.timers.fire(w, func(ts int64) error { return h.fn.OnTimer(ts, runtime.EventTime, h.out) }))
	if l, ok := h.fn.(runtime.WatermarkListener); ok {
		require.NoError(t, l.OnWatermark(w, h.out))
	}
}

// take returns (sorted) and forgets what was emitted since the last take.
func (h *harness) take() []string {
	got := h.out.main
	h.out.main = nil
	sort.Strings(got)
	return got
}

func (h *harness) snapshot(t testing.TB) *state.Snapshot {
	if s, ok := h.fn.(runtime.Snapshotter); ok {
		require.NoError(t, s.SnapshotState(1))
	}
	data, _ := state.Encode(h.ops, h.b)
	s, err := state.Decode(data)
	require.NoError(t, err)
	return s
}

func (h *harness) gauge(name string) int64 { return h.m.Gauge(name).Load() }

type step struct {
	key string
	ts  int64
	wm  bool // a watermark at ts rather than a record
}

// randomSteps is a stream with out-of-order and late records, sparse gaps
// and watermarks.
func randomSteps(rnd *rand.Rand, n int) []step {
	var out []step
	now := int64(rnd.IntN(3000)) - 1500
	maxTS := now
	for i := 0; i < n; i++ {
		switch r := rnd.IntN(100); {
		case r < 8:
			out = append(out, step{ts: maxTS - int64(rnd.IntN(200)), wm: true})
		case r < 10: // a jump: sparse panes far apart
			now += int64(rnd.IntN(20000))
		default:
			ts := now + int64(rnd.IntN(400)) - 300
			if rnd.IntN(20) == 0 {
				ts -= int64(rnd.IntN(3000)) // late
			}
			now += int64(rnd.IntN(30))
			maxTS = max(maxTS, ts)
			out = append(out, step{key: fmt.Sprint("k", rnd.IntN(5)), ts: ts})
		}
	}
	return out
}

func harnessAssigners(t testing.TB) map[string]Assigner {
	as := map[string]Assigner{}
	for _, c := range []struct {
		k                   Kind
		size, slide, offset int64
	}{
		{Tumbling, 100, 0, 0}, {Tumbling, 100, 0, 37}, {Tumbling, 1000, 0, -250},
		{Sliding, 300, 100, 0}, {Sliding, 300, 120, 0}, {Sliding, 250, 100, 30},
		{Sliding, 100, 100, 0}, {Sliding, 1000, 70, 13}, {Sliding, 700, 300, -5},
	} {
		a, err := newAssigner(c.k, c.size, c.slide, 0, c.offset)
		require.NoError(t, err)
		as[fmt.Sprintf("%s-%d-%d-%d", c.k, c.size, c.slide, c.offset)] = a
	}
	return as
}

// paneOp emits what operator emits, step by step, with the same late
// records, for random streams, every assigner shape and lateness.
func TestPaneOpMatchesOperator(t *testing.T) {
	for name, a := range harnessAssigners(t) {
		for _, lateness := range []int64{0, 1, 150, 1000} {
			t.Run(fmt.Sprintf("%s-L%d", name, lateness), func(t *testing.T) {
				for seed := uint64(0); seed < 20; seed++ {
					rnd := rand.New(rand.NewPCG(seed, 7))
					cfg := countConfig(t, a, lateness, false)
					old := newHarness(t, cfg, "operator", nil, 0, 1)
					pane := newHarness(t, cfg, "pane", nil, 0, 1)
					emitted := 0
					defer func() {
						if seed == 0 {
							t.Logf("emitted %d late %d", emitted, len(old.out.late))
						}
					}()
					for i, s := range append(randomSteps(rnd, 400), step{ts: runtime.MaxWatermark, wm: true}) {
						if s.wm {
							old.watermark(t, s.ts)
							pane.watermark(t, s.ts)
						} else {
							old.rec(t, s.key, s.ts)
							pane.rec(t, s.key, s.ts)
						}
						got := old.take()
						emitted += len(got)
						require.Equal(t, got, pane.take(), "seed %d step %d %+v", seed, i, s)
						require.Equal(t, old.out.late, pane.out.late, "seed %d step %d", seed, i)
						require.Equal(t, old.gauge(metricOpen), pane.gauge(metricOpen), "openWindows seed %d step %d", seed, i)
						require.Equal(t, old.gauge(metricKeys), pane.gauge(metricKeys), "keys seed %d step %d", seed, i)
					}
				}
			})
		}
	}
}

var _ = slices.Sort[[]int]

// job is one window's subtasks: records routed by key group, watermarks
// to every subtask (as the engine's keyed exchange broadcasts them).
type job struct {
	hs  []*harness
	par int
}

func newJob(t testing.TB, cfg config, impl string, old []*state.Snapshot, par int) *job {
	j := &job{par: par}
	for i := 0; i < par; i++ {
		j.hs = append(j.hs, newHarness(t, cfg, impl, old, i, par))
	}
	return j
}

func (j *job) owner(key string) *harness {
	kg := state.KeyGroup([]byte(key), harnessMaxPar)
	return j.hs[state.SubtaskForKeyGroup(harnessMaxPar, j.par, kg)]
}

func (j *job) step(t testing.TB, s step) {
	if s.wm {
		for _, h := range j.hs {
			h.watermark(t, s.ts)
		}
		return
	}
	j.owner(s.key).rec(t, s.key, s.ts)
}

func (j *job) take() []string {
	var all []string
	for _, h := range j.hs {
		all = append(all, h.take()...)
	}
	sort.Strings(all)
	return all
}

func (j *job) late() int {
	n := 0
	for _, h := range j.hs {
		n += len(h.out.late)
	}
	return n
}

func (j *job) snapshot(t testing.TB) []*state.Snapshot {
	var out []*state.Snapshot
	for _, h := range j.hs {
		out = append(out, h.snapshot(t))
	}
	return out
}

func (j *job) impls() []string {
	var out []string
	for _, h := range j.hs {
		out = append(out, fmt.Sprintf("%T", h.fn))
	}
	return out
}

// A savepoint at parallelism 2 restored at 3 (and again at 1) fires every
// window once with the results of an uninterrupted run; so does one of the
// old layout (a timer per key, timerOp), converted to panes at the first
// restore.
func TestPaneRestoreRescaleMatchesUninterrupted(t *testing.T) {
	for _, first := range []string{"chooser", "operator"} {
		for name, a := range harnessAssigners(t) {
			for _, lateness := range []int64{0, 150} {
				t.Run(fmt.Sprintf("%s-%s-L%d", first, name, lateness), func(t *testing.T) {
					testRestoreRescale(t, first, a, lateness)
				})
			}
		}
	}
}

func testRestoreRescale(t *testing.T, first string, a Assigner, lateness int64) {
	{
		{
			{
				for seed := uint64(0); seed < 10; seed++ {
					rnd := rand.New(rand.NewPCG(seed, 9))
					cfg := countConfig(t, a, lateness, false)
					steps := append(randomSteps(rnd, 600), step{ts: runtime.MaxWatermark, wm: true})
					ref := newJob(t, cfg, "operator", nil, 1)
					j := newJob(t, cfg, first, nil, 2)
					var want, got []string
					lateSum := 0
					for i, s := range steps {
						ref.step(t, s)
						j.step(t, s)
						want = append(want, ref.take()...)
						got = append(got, j.take()...)
						if i == 200 || i == 400 {
							lateSum += j.late()
						}
						switch i {
						case 200:
							j = newJob(t, cfg, "chooser", j.snapshot(t), 3)
							if first == "operator" {
								// The old layout's snapshot has no watermark: the
								// input's comes again before any record (else a
								// window between the fired watermark its timers
								// tell, firedOfTimers, and the snapshot's may take
								// records the uninterrupted run judged late, as the
								// old layout's did after a restore).
								j.step(t, step{ts: ref.hs[0].wm, wm: true})
							}
						case 400:
							j = newJob(t, cfg, "chooser", j.snapshot(t), 1)
						}
					}
					requireSameMultiset(t, want, got, "seed %d", seed)
					require.Equal(t, ref.late(), lateSum+j.late(), "late records seed %d", seed)
				}
			}
		}
	}
}

// Global windows (no keyBy): key nil, one subtask.
func TestGlobalPaneOpMatchesOperator(t *testing.T) {
	for name, a := range harnessAssigners(t) {
		t.Run(name, func(t *testing.T) {
			for seed := uint64(0); seed < 10; seed++ {
				rnd := rand.New(rand.NewPCG(seed, 11))
				cfg := countConfig(t, a, 150, true)
				old := newHarness(t, cfg, "operator", nil, 0, 1)
				pane := newHarness(t, cfg, "pane", nil, 0, 1)
				for i, s := range append(randomSteps(rnd, 300), step{ts: runtime.MaxWatermark, wm: true}) {
					if s.wm {
						old.watermark(t, s.ts)
						pane.watermark(t, s.ts)
					} else {
						old.rec(t, "", s.ts)
						pane.rec(t, "", s.ts)
					}
					require.Equal(t, old.take(), pane.take(), "seed %d step %d", seed, i)
					require.Equal(t, old.gauge(metricKeys), pane.gauge(metricKeys), "keys seed %d step %d", seed, i)
				}
				s := pane.snapshot(t)
				r := newHarness(t, cfg, "chooser", []*state.Snapshot{s}, 0, 1)
				require.Equal(t, int64(0), r.gauge(metricOpen))
			}
		})
	}
}

// requireSameMultiset fails with only the differences of two multisets.
// diffMultiset returns what want has more of than got, and got of want.
func diffMultiset(want, got []string) (missing, extra []string) {
	n := map[string]int{}
	for _, w := range want {
		n[w]++
	}
	for _, g := range got {
		n[g]--
	}
	for k, c := range n {
		for ; c > 0; c-- {
			missing = append(missing, k)
		}
		for ; c < 0; c++ {
			extra = append(extra, k)
		}
	}
	return missing, extra
}

func requireSameMultiset(t testing.TB, want, got []string, msg string, args ...any) {
	t.Helper()
	n := map[string]int{}
	for _, w := range want {
		n[w]++
	}
	for _, g := range got {
		n[g]--
	}
	var diff []string
	for k, c := range n {
		if c != 0 {
			diff = append(diff, fmt.Sprintf("%+d %s", -c, k))
		}
	}
	sort.Strings(diff)
	require.Empty(t, diff, fmt.Sprintf("(+ extra, - missing) "+msg, args...))
}

// A savepoint taken after the final watermark (stop --drain, or a job
// whose inputs all ended) holds fired = MaxWatermark. The restored window
// starts anew, as operator (and Flink, whose window operator does not
// restore the watermark) does: it windows the new records, none is late.
func TestRestoreAfterFinalWatermarkWindowsNewRecords(t *testing.T) {
	a, err := newAssigner(Tumbling, 1000, 0, 0, 0)
	require.NoError(t, err)
	cfg := countConfig(t, a, 0, false)
	for _, impl := range []string{"operator", "chooser"} {
		t.Run(impl, func(t *testing.T) {
			h := newHarness(t, cfg, impl, nil, 0, 1)
			h.rec(t, "k", 500)
			h.watermark(t, runtime.MaxWatermark) // stop --drain: the final watermark, then the savepoint
			require.Len(t, h.take(), 1)
			r := newHarness(t, cfg, impl, []*state.Snapshot{h.snapshot(t)}, 0, 1)
			r.rec(t, "k", 5500) // the input goes on after the restore
			r.rec(t, "k", 5600)
			r.watermark(t, 7000)
			require.Empty(t, r.out.late, "records after the restore are not late")
			require.Equal(t, []string{`{"key":"k","windowStart":5000,"windowEnd":6000,"n":2}`}, r.take())
		})
	}
}

// A savepoint of the old layout (timers per key) restored at a
// parallelism where one subtask gets no key: every subtask converts to
// panes, and a checkpoint before any watermark, restored again, fires each
// window once (the keyless subtask's fired watermark, MinWatermark, is
// the union's least: the others' windows that fired must not fire again;
// here every pane's fired windows fall out with it, as the old layout's).
func TestOldLayoutRestoreConvertsOnEverySubtask(t *testing.T) {
	a, err := newAssigner(Sliding, 300, 100, 0, 0)
	require.NoError(t, err)
	cfg := countConfig(t, a, 0, false)
	// Two keys on different subtasks of 2... and of 4, one subtask of 4 with none.
	old := newJob(t, cfg, "operator", nil, 2)
	ref := newJob(t, cfg, "operator", nil, 1)
	keys := []string{"k0", "k1", "k2"}
	for _, j := range []*job{old, ref} {
		for _, k := range keys {
			j.step(t, step{key: k, ts: 50})
			j.step(t, step{key: k, ts: 150})
		}
		j.step(t, step{ts: 120, wm: true}) // window [-200,100) fired; [-100,200) and [0,300) pending
	}
	require.Equal(t, old.take(), ref.take())
	j1 := newJob(t, cfg, "chooser", old.snapshot(t), 4)
	// Subtask 0 of 4 owns none of the keys.
	require.Equal(t, []string{"*window.paneOp", "*window.paneOp", "*window.paneOp", "*window.paneOp"}, j1.impls())
	// A checkpoint before any watermark reached the window, then a failure:
	// the job restarts from it, at the same parallelism.
	j2 := newJob(t, cfg, "chooser", j1.snapshot(t), 4)
	for _, j := range []*job{j2, ref} {
		j.step(t, step{ts: runtime.MaxWatermark, wm: true})
	}
	requireSameMultiset(t, ref.take(), j2.take(), "windows after the second restore")
}

// Sliding windows with allowedLateness: a late record whose pane is still
// kept (its last window is within the lateness) re-fires only the windows
// of its pane within their own lateness, not one past it whose earlier
// panes were dropped ([0,300) would come again with n=2, though it held 4
// records). Flink skips a window past its cleanup time
// (WindowOperator.isWindowLate: maxTimestamp + allowedLateness <= watermark).
func TestLateRecordDoesNotRefireWindowPastItsLateness(t *testing.T) {
	a, err := newAssigner(Sliding, 300, 100, 0, 0)
	require.NoError(t, err)
	cfg := countConfig(t, a, 150, false)
	for _, impl := range []string{"operator", "pane"} {
		t.Run(impl, func(t *testing.T) {
			h := newHarness(t, cfg, impl, nil, 0, 1)
			h.rec(t, "k", 50)
			h.rec(t, "k", 60)
			h.rec(t, "k", 250)
			h.watermark(t, 460) // [0,300) fired at 299, cleaned up at 449 (pane 0 dropped)
			h.take()
			h.rec(t, "k", 260) // pane 200 is kept until 649: within the lateness
			for _, r := range h.take() {
				require.NotContains(t, r, `"windowStart":0,"windowEnd":300`, "a window past its lateness fires again: %s", r)
			}
		})
	}
}

// allowedLateness 0 (the default), sliding windows: an out-of-order record
// whose pane still has a window to come (not late) goes into the windows
// to come only; [-200,100), fired already, gets no second result. Flink
// adds a record only to the windows that are not late, and fires each
// window once when there is no allowed lateness.
func TestSlidingWithoutLatenessFiresEachWindowOnce(t *testing.T) {
	a, err := newAssigner(Sliding, 300, 100, 0, 0)
	require.NoError(t, err)
	cfg := countConfig(t, a, 0, false)
	for _, impl := range []string{"operator", "pane"} {
		t.Run(impl, func(t *testing.T) {
			h := newHarness(t, cfg, impl, nil, 0, 1)
			h.rec(t, "k", 50)
			h.rec(t, "k", 60)
			h.watermark(t, 150)
			require.Equal(t, []string{`{"key":"k","windowStart":-200,"windowEnd":100,"n":2}`}, h.take())
			h.rec(t, "k", 70) // out of order, not late: windows [-100,200) and [0,300) are to come
			require.Empty(t, h.out.late)
			require.Empty(t, h.take(), "no window fires twice without allowedLateness")
		})
	}
}

// A window new to a restored job (the snapshot has no state of it) takes
// panes; one restored from a snapshot of panes keeps them.
func TestNewWindowInRestoredJobTakesPanes(t *testing.T) {
	a, err := newAssigner(Tumbling, 1000, 0, 0, 0)
	require.NoError(t, err)
	cfg := countConfig(t, a, 0, false)
	data, _ := state.Encode(state.NewOperatorState(), state.NewKeyedBackend(harnessMaxPar, state.RangeForSubtask(harnessMaxPar, 1, 0)))
	empty, err := state.Decode(data)
	require.NoError(t, err)
	h := newHarness(t, cfg, "chooser", []*state.Snapshot{empty}, 0, 1)
	require.IsType(t, &paneOp{}, h.fn)
	h.rec(t, "k", 10)
	again := newHarness(t, cfg, "chooser", []*state.Snapshot{h.snapshot(t)}, 0, 1)
	require.IsType(t, &paneOp{}, again.fn)
	again.watermark(t, 2000)
	require.Equal(t, []string{`{"key":"k","windowStart":0,"windowEnd":1000,"n":1}`}, again.take())
}

// Processing time: one timer fires a window for every key. Restored at
// another parallelism, each subtask with panes arms a timer of its own
// (the one timer went with its key to one of them), and every window
// fires once.
func TestProcessingTimeRestoreArmsEverySubtask(t *testing.T) {
	a, err := newAssigner(Tumbling, 60_000, 0, 0, 0)
	require.NoError(t, err)
	cfg := countConfig(t, a, 0, false)
	cfg.processing = true
	h := newHarness(t, cfg, "chooser", nil, 0, 1)
	var keys []string
	for i := range 24 {
		keys = append(keys, fmt.Sprint("k", i))
	}
	for _, k := range keys {
		h.rec(t, k, 0)
	}
	require.Equal(t, 1, h.timers.pt.Len(), "one timer for the window of every key")
	j := newJob(t, cfg, "chooser", []*state.Snapshot{h.snapshot(t)}, 3)
	var got []string
	for i, r := range j.hs {
		require.NotZero(t, r.fn.(*paneOp).panes.Len(), "subtask %d has keys", i)
		require.NotZero(t, r.timers.pt.Len(), "subtask %d armed no timer", i)
		require.NoError(t, r.timers.firePT(runtime.MaxWatermark, func(ts int64) error {
			return r.fn.OnTimer(ts, runtime.ProcessingTime, r.out)
		}))
		got = append(got, r.take()...)
	}
	require.Len(t, got, len(keys), "%v", got)
}
