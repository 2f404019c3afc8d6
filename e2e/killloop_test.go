package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/produce"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// killMode is when in a daemon's life a kill lands.
type killMode int

const (
	killStartup    killMode = iota // before the daemon is ready: recovery, restore
	killRandom                     // at a random moment while it runs
	killMidWrite                   // a new chk-<n> exists without _metadata
	killAfterWrite                 // right after a new _metadata appears, before the sink commits
	killFaultExit                  // the daemon exits (code 137) at a named fault point
	killFallback                   // waited for a checkpoint or fault that did not come: killed anyway
	numKillModes
)

// exitPoints are the fault points a Kafka → file job passes; the loop makes
// the daemon exit at each of them in turn (FLINKGO_FAULTS point:exit).
var exitPoints = []string{"task.open", "task.snapshot", "task.notify-complete", "checkpoint.write-state",
	"checkpoint.publish-metadata", "checkpoint.record", "checkpoint.discard", "file.write", "file.precommit", "file.commit",
	"file.commit-done", "file.restore", "kafka.poll", "kafka.snapshot", "kafka.commit-offsets"}

func (m killMode) String() string {
	return [...]string{"startup", "random", "mid-checkpoint", "after-publish", "fault-exit", "fallback"}[m]
}

// killPlan is the kill loop's size.
type killPlan struct {
	kills   int
	records int64
	rate    float64 // records/s, so production spans most of the loop
	reserve int64   // records held back and fed to the loop after the paced part
}

func chaosPlan() killPlan {
	if os.Getenv("FLINKGO_CHAOS") == "long" {
		return killPlan{kills: 200, records: 200_000, rate: 1_600, reserve: 10_000}
	}
	return killPlan{kills: 40, records: 80_000, rate: 2_500, reserve: 4_000}
}

func chaosSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FLINKGO_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "FLINKGO_CHAOS_SEED")
		seed = v
	}
	t.Logf("kill schedule seed %d (replay with FLINKGO_CHAOS_SEED=%d)", seed, seed)
	return seed
}

// checkpointWatch reports a job's checkpoint directories on disk.
type checkpointWatch struct{ dir string }

// scan returns the highest chk-<n> and whether it has its _metadata.
func (w checkpointWatch) scan() (maxID int64, complete bool) {
	entries, _ := os.ReadDir(w.dir)
	for _, e := range entries {
		id, err := strconv.ParseInt(strings.TrimPrefix(e.Name(), "chk-"), 10, 64)
		if err != nil || !strings.HasPrefix(e.Name(), "chk-") || id <= maxID {
			continue
		}
		maxID = id
	}
	if maxID == 0 {
		return 0, false
	}
	_, err := os.Stat(filepath.Join(w.dir, "chk-"+strconv.FormatInt(maxID, 10), "_metadata"))
	return maxID, err == nil
}

// waitFor polls cond every 10 ms until it holds or timeout passes. A
// condition that asks a daemon (its info) or reads output (verify) costs
// milliseconds of CPU with the race detector: polled every millisecond it
// kept a core busy beside the daemons it waited for.
func waitFor(timeout time.Duration, cond func() bool) bool {
	return waitEvery(timeout, 10*time.Millisecond, cond)
}

// waitEvery polls cond every interval until it holds or timeout passes.
func waitEvery(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(interval)
	}
	return false
}

// checkEvery is how often a wait reads a job's whole output (a file sink's
// directory, a topic) to see whether it is complete.
const checkEvery = 100 * time.Millisecond

// kafkaProducer writes the known input in the background: all but a
// reserve at the plan's rate, then the reserve in small chunks on demand.
// The reserve keeps the fault points that only a record passes (a
// transaction's write, pre-commit and commit; the file sink's write) within
// reach after the paced input has run out, however long the loop runs.
type kafkaProducer struct {
	cfg   produce.Config
	total int64
	paced chan struct{} // closed once all but the reserve is sent
	done  chan struct{} // closed once everything is sent (or on error)
	feed  chan int64    // chunk sizes; 0: the rest
	sent  int64         // read after paced (the paced part) or done
	err   error
}

// reserveChunk is how many records one feed releases.
const reserveChunk = 20

func startProducer(addr, topic string, plan killPlan) *kafkaProducer {
	p := &kafkaProducer{cfg: produce.Config{Brokers: []string{addr}, Topic: topic}, total: plan.records,
		paced: make(chan struct{}), done: make(chan struct{}), feed: make(chan int64, 64)}
	reserve := min(plan.reserve, plan.records)
	go func() {
		defer close(p.done)
		cfg := p.cfg
		cfg.Count, cfg.Rate = plan.records-reserve, plan.rate
		p.sent, p.err = produce.Run(context.Background(), cfg)
		close(p.paced)
		for p.err == nil && p.sent < p.total {
			n := <-p.feed
			if n == 0 || n > p.total-p.sent {
				n = p.total - p.sent
			}
			cfg := p.cfg
			cfg.Start, cfg.Count = produce.DefaultStart+p.sent, n
			var sent int64
			sent, p.err = produce.Run(context.Background(), cfg)
			p.sent += sent
		}
	}()
	return p
}

// finished reports whether the paced input is complete.
func (p *kafkaProducer) finished() bool {
	select {
	case <-p.paced:
		return true
	default:
		return false
	}
}

// more releases a chunk of the reserve (nothing once it is spent).
func (p *kafkaProducer) more() {
	select {
	case p.feed <- reserveChunk:
	default:
	}
}

// rest releases what is left of the reserve.
func (p *kafkaProducer) rest() {
	go func() {
		select {
		case p.feed <- 0:
		case <-p.done:
		}
	}()
}

// killLoop crashes and restarts the daemon of e while its job runs.
type killLoop struct {
	t       *testing.T
	e       *env
	rng     *rand.Rand
	watch   checkpointWatch
	broker  *kafkabroker.Broker
	addr    string
	dataDir string

	modes          [numKillModes]int
	kills          int
	brokerRestarts int
	torn           int      // torn checkpoints the next daemon skipped
	points         []string // fault points to exit at, in random order
	fired          map[string]bool
	prod           *kafkaProducer // the input, once run has started
	logs           []string       // the last daemons' logs, for a failure message
}

// newKillLoop starts the broker (cfg, on a data dir, a free port) and a
// daemon; the loop exits at points in a random order.
func newKillLoop(t *testing.T, salt uint64, cfg kafkabroker.Config, points []string) *killLoop {
	l := &killLoop{t: t, rng: rand.New(rand.NewPCG(chaosSeed(t), salt)), dataDir: t.TempDir(), fired: map[string]bool{}}
	cfg.Listen, cfg.DataDir = "127.0.0.1:0", l.dataDir
	var err error
	l.broker, err = kafkabroker.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.broker.Close() })
	l.addr = l.broker.Addr()
	l.points = append([]string(nil), points...)
	l.rng.Shuffle(len(l.points), func(i, j int) { l.points[i], l.points[j] = l.points[j], l.points[i] })
	l.e = newEnv(t)
	l.e.startDaemon()
	return l
}

// drain is the last start: the job resumes and reads what is left of the
// topic; it returns once the producer has written the whole plan.
func (l *killLoop) drain(plan killPlan, prod *kafkaProducer) {
	l.e.startDaemon()
	prod.rest()
	require.True(l.t, waitFor(2*time.Minute, func() bool {
		select {
		case <-prod.done:
			return true
		default:
			return false
		}
	}), "producer still running")
	require.NoError(l.t, prod.err)
	require.Equal(l.t, plan.records, prod.sent)
}

// missed lists the fault points the daemon never exited at.
func (l *killLoop) missed() []string {
	var out []string
	for _, p := range l.points {
		if !l.fired[p] {
			out = append(out, p)
		}
	}
	return out
}

// nextPoint is the first fault point the daemon has not exited at yet.
func (l *killLoop) nextPoint() string {
	for _, p := range l.points {
		if !l.fired[p] {
			return p
		}
	}
	return ""
}

// pickMode draws when the kill lands.
func (l *killLoop) pickMode(first bool) killMode {
	switch n := l.rng.IntN(100); {
	case n < 12 && !first: // the first daemon is up already
		return killStartup
	case n < 50:
		return killRandom
	case n < 72:
		return killMidWrite
	}
	return killAfterWrite
}

// await waits for the moment of mode and returns the mode that happened
// (killFallback when the awaited event did not come).
func (l *killLoop) await(mode killMode, point string) killMode {
	e := l.e
	switch mode {
	case killFaultExit:
		// Past the paced input a chunk of the reserve every 300ms gives
		// the points only records pass something to pass (nth up to 4).
		var fed time.Time
		if !waitFor(10*time.Second, func() bool {
			if l.prod != nil && l.prod.finished() && time.Since(fed) > 300*time.Millisecond {
				l.prod.more()
				fed = time.Now()
			}
			return strings.Contains(e.stderr.String(), "injected fault: "+point+" exit")
		}) {
			return killFallback // counted in the fallback mode
		}
		l.fired[point] = true
	case killStartup:
		time.Sleep(time.Duration(l.rng.IntN(500)) * time.Millisecond)
	case killRandom:
		e.waitReady(30 * time.Second)
		time.Sleep(time.Duration(50+l.rng.IntN(1200)) * time.Millisecond)
	case killMidWrite, killAfterWrite:
		e.waitReady(30 * time.Second)
		if !l.awaitCheckpoint(mode) {
			return killFallback
		}
	}
	return mode
}

// awaitCheckpoint lets 0-2 checkpoints complete, then waits for the next
// one to appear without _metadata (killMidWrite) or with it (killAfterWrite).
func (l *killLoop) awaitCheckpoint(mode killMode) bool {
	seen, _ := l.watch.scan()
	skip := l.rng.IntN(3)
	// Every millisecond: a checkpoint is without its _metadata for a few
	// milliseconds only.
	return waitEvery(5*time.Second, time.Millisecond, func() bool {
		n, complete := l.watch.scan()
		switch {
		case n <= seen:
			return false
		case !complete:
			return mode == killMidWrite && skip == 0
		case mode == killAfterWrite && skip == 0:
			return true
		}
		skip = max(skip-1, 0)
		seen = n
		return false
	})
}

// crash kills the daemon (or reaps one that exited at a fault point) and
// checks its log.
func (l *killLoop) crash(i int, mode killMode) {
	t := l.t
	killed, err := l.e.crash()
	log := l.e.stderr.String()
	if mode == killFaultExit {
		killed = killed || err != nil && strings.Contains(err.Error(), "exit status 137")
	}
	require.Truef(t, killed, "kill %d (%s): the daemon had exited by itself (%v):\n%s", i+1, mode, err, log)
	requireNoPanic(t, fmt.Sprintf("daemon log before kill %d (%s)", i+1, mode), log)
	l.modes[mode]++
	l.kills++
	l.torn += strings.Count(log, "newest checkpoint is incomplete") + strings.Count(log, "checkpoint unusable for restore")
	l.logs = append(l.logs, fmt.Sprintf("--- daemon %d, killed (%s) ---\n%s", i+1, mode, log))
	if len(l.logs) > 3 {
		l.logs = l.logs[1:]
	}
}

// restartBroker closes the broker and starts it again on its data and
// ports (all its nodes).
func (l *killLoop) restartBroker() {
	addrs := l.broker.Addrs()
	require.NoError(l.t, l.broker.Close())
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: l.addr, Nodes: len(addrs), NodeListen: addrs[1:], DataDir: l.dataDir})
	require.NoError(l.t, err, "restart the broker on %s", l.dataDir)
	l.broker = b
	l.brokerRestarts++
}

// run crashes and restarts the daemon at least plan.kills times, and at
// least killsAfterInput times once the input is complete (those may restart
// the broker too), until the daemon has exited at every fault point.
func (l *killLoop) run(plan killPlan, prod *kafkaProducer) {
	const killsAfterInput = 8
	e := l.e
	l.prod = prod
	afterInput := 0
	for i := 0; i < 3*plan.kills && (i < plan.kills || afterInput < killsAfterInput || l.nextPoint() != ""); i++ {
		// Every other daemon exits at the next fault point not reached yet
		// instead of being killed (a point a run does not reach, such as
		// the sink's restore after a fresh start, is tried again).
		mode, point := l.pickMode(i == 0), ""
		if i%2 == 1 {
			if point = l.nextPoint(); point != "" {
				mode = killFaultExit
				e.extra = []string{fmt.Sprintf("FLINKGO_FAULTS=%s:exit,nth=%d", point, 1+l.rng.IntN(4))}
			}
		}
		if i > 0 {
			e.spawnDaemon()
		}
		e.extra = nil
		l.crash(i, l.await(mode, point))
		if prod.finished() {
			afterInput++
			if afterInput%2 == 1 && l.brokerRestarts < 3 {
				l.restartBroker()
			}
		}
	}
}

func (l *killLoop) summary() string {
	var ms []string
	for m := killMode(0); m < numKillModes; m++ {
		ms = append(ms, fmt.Sprintf("%s %d", m, l.modes[m]))
	}
	sort.Strings(ms)
	return strings.Join(ms, ", ")
}

// A kill -9 loop on the real binary: a Kafka → file job with exactly-once
// checkpoints every 150ms reads a topic (4 partitions, persisted broker)
// while a producer writes a known sequence. The daemon is killed at random
// moments, during startup, while a checkpoint is being written and right
// after one is published, and made to exit at every fault point the job
// passes; it is restarted after each crash, and the broker is restarted on
// its data a few times while the daemon is down. In the end the job is
// stopped and its finished files must hold every record exactly once.
func killLoopKafkaToFilesExactlyOnce(t *testing.T) {
	start := time.Now()
	plan := chaosPlan()
	const topic = "seq"
	l := newKillLoop(t, 0x6b696c6c, kafkabroker.Config{Topics: []kafkabroker.Topic{{Name: topic, Partitions: 4}}}, exitPoints)
	e := l.e
	out := filepath.Join(e.home, "out")
	spec := fmt.Sprintf(`
name: kill-loop
parallelism: 2
checkpointing: {interval: 150ms, mode: exactly-once}
restartStrategy: {type: fixed-delay, attempts: 100000, delay: 100ms}
operators:
  - {uid: source, type: kafka, brokers: [%s], topic: %s, groupId: kill-loop, startingOffsets: earliest, format: json}
  - {uid: files, type: file, from: [source], path: %s, bucket: yyyy-MM-dd--HH, rolling: {onCheckpoint: true}}
`, l.addr, topic, out)
	id := e.mustRun("run", e.writeSpec("kill-loop.yaml", spec))
	l.watch = checkpointWatch{dir: filepath.Join(e.home, "checkpoints", id)}
	prod := startProducer(l.addr, topic, plan)

	l.run(plan, prod)
	l.drain(plan, prod)
	var r *verify.Report
	var err error
	done := waitEvery(90*time.Second, checkEvery, func() bool {
		r, err = verify.Run(verify.Options{Path: out, Field: "idx"})
		return err == nil && r.Distinct >= plan.records
	})
	info, err := e.jobInfo(id)
	require.NoError(t, err)
	require.Truef(t, done, "job %s (restarts %d, error %q) committed %d of %d records\n%s\n--- last daemon ---\n%s",
		info.State, info.Restarts, info.Error, r.Distinct, plan.records, strings.Join(l.logs, "\n"), e.stderr.String())
	chkDirs, _ := filepath.Glob(filepath.Join(l.watch.dir, "chk-*"))
	stopped := e.mustRun("stop", id, "--savepoint-path", filepath.Join(e.home, "sp"))
	require.DirExists(t, stopped)
	e.waitState(id, api.StateFinished, 30*time.Second)
	requireNoPanic(t, "last daemon log", e.stderr.String())

	r, err = verify.Run(verify.Options{Path: out, Field: "idx"})
	require.NoError(t, err)
	hidden := 0
	_ = filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.HasPrefix(fi.Name(), ".") && fi.Name() != runtime.OwnerFile {
			hidden++
		}
		return nil
	})
	t.Logf("%d finished files, %d hidden (in-progress or pending) files left in the output", r.Files, hidden)
	t.Logf("%d checkpoint dirs before the stop", len(chkDirs))
	l.score(start, "kill -9 loop, real binary (Kafka → file)", *r, plan.records, info.Restarts)
	require.Zero(t, hidden, "in-progress or pending part files of crashed attempts left in the output")
	require.Positive(t, l.modes[killMidWrite]+l.modes[killAfterWrite], "no kill hit a checkpoint")
	require.Positive(t, l.brokerRestarts, "the broker was never restarted")
}

// score reports a kill loop's outcome (log and scorecard row) and requires
// every record of 1..records exactly once in r and a daemon exit at every
// fault point. Each crash is planned as a kill (always lands) or an exit
// at a fault point (lands if the point is reached in time; else it falls
// back to a kill, counted as "fallback"), so every planned crash happened.
func (l *killLoop) score(start time.Time, suite string, r verify.Report, records int64, restarts int) {
	t := l.t
	lost := r.GapCount + max(0, records-r.Last) + max(0, r.First-1)
	missed := l.missed()
	t.Logf("%d crashes (%s), daemon exits at %d of %d fault points (missed %v), %d broker restarts, %d torn checkpoints skipped on recovery, %d job restarts; %d records, %d lost, %d duplicated; %.1fs",
		l.kills, l.summary(), len(l.fired), len(l.points), missed, l.brokerRestarts, l.torn, restarts, r.Records, lost, r.Duplicates, time.Since(start).Seconds())
	scorecard.Record(t, start, scorecard.Entry{Suite: suite,
		Faults: fmt.Sprintf("%d crashes of the daemon (%s; exits at %d/%d fault points), %d torn checkpoints recovered, %d broker restarts",
			l.kills, l.summary(), len(l.fired), len(l.points), l.torn, l.brokerRestarts),
		Planned: l.kills, Fired: l.kills, Cases: l.kills + 1,
		Records: r.Records, Lost: lost, Duplicated: r.Duplicates})
	require.Truef(t, r.OK() && r.Records == records && r.First == 1 && r.Last == records,
		"%d records, %d..%d, %d missing in %v, %d duplicates (e.g. %v)", r.Records, r.First, r.Last, r.GapCount, r.Gaps, r.Duplicates, r.DuplicateSamples)
	require.Empty(t, missed, "fault points where the daemon never exited")
}
