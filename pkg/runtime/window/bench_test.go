package window_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// benchRecords are the inputs of the window benchmarks, generated once:
// n records {"user":"u<k>","amount":A,"ts":T} over keys users, with event
// time advancing by step ms every perStep records and shuffled by up to
// 1 s. Records are replayed from memory by the "bench-replay" source, so
// the benchmarks measure the pipeline, not a generator.
type benchInput struct {
	recs  [][]byte
	ts    []int64
	bound int64
}

var (
	benchMu     sync.Mutex
	benchInputs = map[string]*benchInput{}
)

func makeBenchInput(n, keys, perStep int) *benchInput {
	in := &benchInput{recs: make([][]byte, n), ts: make([]int64, n), bound: 1000}
	for i := 0; i < n; i++ {
		h := mix(uint64(i))
		ts := 1_700_000_000_000 + int64(i/perStep) - int64(h%1000)
		in.recs[i] = fmt.Appendf(nil, `{"user":"u%d","amount":%d,"ts":%d}`, mix(h)%uint64(keys), h%100, ts)
		in.ts[i] = ts
	}
	return in
}

func benchInputOf(name string) *benchInput {
	benchMu.Lock()
	defer benchMu.Unlock()
	return benchInputs[name]
}

// replaySource emits a benchInput's records, subtask s taking every p-th.
type replaySource struct {
	in   *benchInput
	hold bool
	ctx  *runtime.Context
	next int
}

func replayDef() runtime.Definition {
	return runtime.Definition{Type: "bench-replay", Kind: api.KindSource, Doc: "benchmarks' input",
		Configure: func(c *runtime.ConfigContext) *runtime.Plan {
			var o struct {
				Input string `yaml:"input"`
				Hold  bool   `yaml:"hold"` // after the input, wait instead of ending
			}
			c.Decode(&o)
			return &runtime.Plan{Bounded: !o.Hold, NewSource: func() runtime.Source {
				return &replaySource{in: benchInputOf(o.Input), hold: o.Hold}
			}}
		}}
}

func (s *replaySource) Open(ctx *runtime.Context) error {
	s.ctx, s.next = ctx, ctx.Subtask()
	return nil
}
func (s *replaySource) SnapshotState(int64) error { return nil }
func (s *replaySource) Close() error              { return nil }

func (s *replaySource) Poll(b *runtime.Batch) error {
	p := s.ctx.Parallelism()
	for len(b.Records) < cap(b.Records) && s.next < len(s.in.recs) {
		b.Records = append(b.Records, runtime.Record{Value: s.in.recs[s.next]})
		s.next += p
	}
	if s.next >= len(s.in.recs) {
		if s.hold {
			time.Sleep(10 * time.Millisecond)
			return nil
		}
		return runtime.ErrEndOfInput
	}
	return nil
}

var benchTypes = append(append([]runtime.Definition(nil), testTypes...), replayDef())

// measure runs fn and returns the CPU time it took.
func measure(fn func()) time.Duration {
	goruntime.GC()
	start := runtimetest.CPUTime()
	fn()
	return runtimetest.CPUTime() - start
}

// runWindowJob runs bench-replay → keyBy(user) → window → discard.
func runWindowJob(tb testing.TB, input, window, checkpointing string) {
	spec := fmt.Sprintf(`
name: bench-window
%s
operators:
  - {uid: src, type: bench-replay, input: %s, eventTime: {timestamp: ts, maxOutOfOrderness: 1s}}
  - {uid: byUser, type: keyBy, from: [src], expr: user}
  - {uid: win, type: window, from: [byUser], window: %s, aggregate: {clicks: count(), spent: sum(amount)}}
  - {uid: out, type: discard, from: [win]}
`, checkpointing, input, window)
	o := runtimetest.Options{Types: benchTypes}
	if checkpointing != "" {
		o.CheckpointsDir = tb.TempDir()
	}
	j := runtimetest.Start(tb, spec, o)
	if s := runtimetest.Wait(tb, j, 10*time.Minute); s != api.StateFinished {
		tb.Fatalf("job %s: %s", s, j.Info().Error)
	}
}

// loopRecord is how the hand-written loop decodes a record.
type loopRecord struct {
	User   string `json:"user"`
	Amount int64  `json:"amount"`
	TS     int64  `json:"ts"`
}

type loopAcc struct{ clicks, spent int64 }

// handLoop is what a Go programmer writes for a keyed tumbling count and
// sum by event time: decode each record, add it to a map of windows per
// key, and when the watermark (the largest timestamp minus the bound)
// passes a window's end, format its result. parse decodes a record.
func handLoop(in *benchInput, size int64, parse func([]byte, *loopRecord) error) (windows int, out int) {
	open := map[string]map[int64]*loopAcc{}
	ends := map[int64][]string{} // window end -> keys with that window open
	var pending []int64          // ends waiting for the watermark, ascending
	wm, maxTS := int64(-1<<63), int64(-1<<63)
	var buf []byte
	var r loopRecord
	fire := func(upTo int64) {
		for len(pending) > 0 && pending[0]-1 <= upTo {
			e := pending[0]
			pending = pending[1:]
			for _, k := range ends[e] {
				a := open[k][e]
				buf = fmt.Appendf(buf[:0], `{"key":%q,"windowStart":%d,"windowEnd":%d,"clicks":%d,"spent":%d}`, k, e-size, e, a.clicks, a.spent)
				out += len(buf)
				delete(open[k], e)
				windows++
			}
			delete(ends, e)
		}
	}
	for i, raw := range in.recs {
		if err := parse(raw, &r); err != nil {
			panic(err)
		}
		e := r.TS - ((r.TS%size)+size)%size + size
		w := open[r.User]
		if w == nil {
			w = map[int64]*loopAcc{}
			open[r.User] = w
		}
		a := w[e]
		if a == nil {
			a = &loopAcc{}
			w[e] = a
			if ends[e] == nil {
				pending = append(pending, e)
				sort.Slice(pending, func(i, j int) bool { return pending[i] < pending[j] })
			}
			ends[e] = append(ends[e], r.User)
		}
		a.clicks++
		a.spent += r.Amount
		maxTS = max(maxTS, r.TS)
		if i%512 == 0 { // a watermark per batch, as a source sends them
			wm = max(wm, maxTS-in.bound-1)
			fire(wm)
		}
	}
	fire(1 << 62)
	return windows, out
}

func jsonParse(b []byte, r *loopRecord) error { return json.Unmarshal(b, r) }

// scanParse is a hand-rolled decoder for exactly this record shape: the
// fastest a loop can be.
func scanParse(b []byte, r *loopRecord) error {
	field := func(name string) []byte {
		i := bytes.Index(b, []byte(`"`+name+`":`))
		if i < 0 {
			return nil
		}
		v := b[i+len(name)+3:]
		j := bytes.IndexAny(v, ",}")
		return v[:j]
	}
	u := field("user")
	r.User = string(u[1 : len(u)-1])
	r.Amount, _ = strconv.ParseInt(string(field("amount")), 10, 64)
	r.TS, _ = strconv.ParseInt(string(field("ts")), 10, 64)
	return nil
}

func register(name string, in *benchInput) {
	benchMu.Lock()
	benchInputs[name] = in
	benchMu.Unlock()
}

// BenchmarkTumblingVsHandLoop: a keyed tumbling 10 s count and sum over
// 10,000 users, flinkgo (parse, keyBy, window, on one core) against the
// hand-written loop above doing the same aggregation over the same records,
// in the same run: with encoding/json (what a Go programmer writes) and
// with a hand-rolled scanner for this one record shape (the fastest loop).
// Goal: >= 0.5x the loop.
func BenchmarkTumblingVsHandLoop(b *testing.B) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	const n = 2_000_000
	in := makeBenchInput(n, 10_000, 50) // 40 s of event time: 4 windows per user
	register("tumbling", in)
	var job, loopJSON, loopScan time.Duration
	for i := 0; i < b.N; i++ {
		job += measure(func() { runWindowJob(b, "tumbling", "{type: tumbling, size: 10s}", "") })
		loopJSON += measure(func() { handLoop(in, 10_000, jsonParse) })
		loopScan += measure(func() { handLoop(in, 10_000, scanParse) })
	}
	records := float64(n * b.N)
	b.ReportMetric(records/job.Seconds(), "records/cpu-s(flinkgo)")
	b.ReportMetric(records/loopJSON.Seconds(), "records/cpu-s(loop-json)")
	b.ReportMetric(records/loopScan.Seconds(), "records/cpu-s(loop-scanner)")
	b.ReportMetric(loopJSON.Seconds()/job.Seconds(), "ratio-vs-loop-json")
	b.ReportMetric(loopScan.Seconds()/job.Seconds(), "ratio-vs-loop-scanner")
}

// BenchmarkSlidingVsTumbling: a sliding window of 10 min every 10 s
// against a tumbling window of 10 s over the same records (10,000 users,
// 10 records per user and slide), on one core, in the same run. Panes keep
// a record's cost the same; Flink's copy per window would give 1/60.
// Goal: >= 0.6x.
func BenchmarkSlidingVsTumbling(b *testing.B) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	const n = 4_000_000
	in := makeBenchInput(n, 10_000, 10) // 400 s of event time
	register("sliding", in)
	var tumbling, sliding time.Duration
	for i := 0; i < b.N; i++ {
		tumbling += measure(func() { runWindowJob(b, "sliding", "{type: tumbling, size: 10s}", "") })
		sliding += measure(func() { runWindowJob(b, "sliding", "{type: sliding, size: 10m, slide: 10s}", "") })
	}
	records := float64(n * b.N)
	b.ReportMetric(records/tumbling.Seconds(), "records/cpu-s(tumbling-10s)")
	b.ReportMetric(records/sliding.Seconds(), "records/cpu-s(sliding-10m/10s)")
	b.ReportMetric(tumbling.Seconds()/sliding.Seconds(), "ratio")
}

// BenchmarkWindowCheckpointOverhead: the tumbling job with 1 s checkpoints
// against none, same records, same run (goal: >= 0.9x).
func BenchmarkWindowCheckpointOverhead(b *testing.B) {
	const n = 4_000_000
	in := makeBenchInput(n, 10_000, 50)
	register("overhead", in)
	var with, without time.Duration
	for i := 0; i < b.N; i++ {
		without += measure(func() { runWindowJob(b, "overhead", "{type: tumbling, size: 10s}", "") })
		with += measure(func() { runWindowJob(b, "overhead", "{type: tumbling, size: 10s}", "checkpointing: {interval: 1s}") })
	}
	records := float64(n * b.N)
	b.ReportMetric(records/without.Seconds(), "records/cpu-s(no-checkpoints)")
	b.ReportMetric(records/with.Seconds(), "records/cpu-s(1s-checkpoints)")
	b.ReportMetric(without.Seconds()/with.Seconds(), "throughput-ratio")
}

// BenchmarkWindowStateSavepointRestore: 1,000,000 keys with an open
// window each (count and sum): the savepoint's duration and size, and the
// time a restore takes until every window is back (the window's keys gauge).
func BenchmarkWindowStateSavepointRestore(b *testing.B) {
	const keys = 1_000_000
	in := &benchInput{recs: make([][]byte, keys), bound: 1000}
	for i := range in.recs {
		in.recs[i] = fmt.Appendf(nil, `{"user":"u%d","amount":%d,"ts":1700000000000}`, i, i%100)
	}
	register("state", in)
	spec := func() string {
		return `
name: bench-window-state
checkpointing: {interval: 1h}
operators:
  - {uid: src, type: bench-replay, input: state, hold: true, eventTime: {timestamp: ts, maxOutOfOrderness: 1s}}
  - {uid: byUser, type: keyBy, from: [src], expr: user}
  - {uid: win, type: window, from: [byUser], window: {type: tumbling, size: 1h}, aggregate: {clicks: count(), spent: sum(amount)}}
  - {uid: out, type: discard, from: [win]}
`
	}
	winMetric := func(j interface{ Info() api.JobInfo }, name string) int64 {
		for _, op := range j.Info().Operators {
			if op.UID == "win" {
				if name == "in" {
					return op.RecordsIn
				}
				return op.Metrics[name]
			}
		}
		return 0
	}
	var spDur, restoreDur time.Duration
	var size int64
	for i := 0; i < b.N; i++ {
		sp := b.TempDir()
		j := runtimetest.Start(b, spec(), runtimetest.Options{Types: benchTypes, CheckpointsDir: b.TempDir(), SavepointsDir: sp})
		runtimetest.WaitUntil(b, 5*time.Minute, "every key in a window", func() bool { return winMetric(j, "in") == keys })
		start := time.Now()
		path, _, err := j.Savepoint("")
		if err != nil {
			b.Fatal(err)
		}
		spDur += time.Since(start)
		for _, h := range j.Checkpoints().History {
			if h.Path == path {
				size += h.Size
			}
		}
		runtimetest.Cancel(b, time.Minute, j)
		start = time.Now()
		j = runtimetest.Start(b, spec(), runtimetest.Options{Types: benchTypes, CheckpointsDir: b.TempDir(), Restore: path})
		runtimetest.WaitUntil(b, 5*time.Minute, "the windows restored", func() bool { return winMetric(j, "keys") == keys })
		restoreDur += time.Since(start)
		runtimetest.Cancel(b, time.Minute, j)
	}
	n := float64(b.N)
	b.ReportMetric(spDur.Seconds()/n*1000, "ms-savepoint")
	b.ReportMetric(float64(size)/n/1e6, "MB-state")
	b.ReportMetric(restoreDur.Seconds()/n*1000, "ms-restore")
	b.ReportMetric(float64(size)/n/1e6/(restoreDur.Seconds()/n), "MB/s-restore")
}
