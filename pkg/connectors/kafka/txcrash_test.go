package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/produce"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/internal/scorecard"
)

// crashStep is the step of a sink transaction at which the broker
// crashes (as kill -9 would: what it persisted so far survives, the
// request in hand is never answered).
type crashStep string

const (
	crashAtAdd      crashStep = "add"       // the first produce of a transaction (KIP-890: it adds the partition)
	crashAtProduce  crashStep = "produce"   // the request after that produce: records of the transaction are in the log
	crashAtEnd      crashStep = "end"       // EndTxn(commit), before the broker handles it
	crashAfterEnd   crashStep = "after end" // the request after a handled EndTxn(commit)
	crashWarmCommit           = 5           // commits before the crash is armed
)

// brokerCrasher watches a broker's requests through kfake's control hook
// and, at its step, copies the broker's data dir as it is on disk (the
// control function runs on the broker's request loop, so nothing is
// written meanwhile) and refuses every request from then on. The test
// then closes the broker and starts a new one on the copy: a kill -9
// with the broker's own log kept.
type brokerCrasher struct {
	step, dir, copyDir string

	mu      sync.Mutex
	commits int
	inTxn   map[string]int // transactional id → produces since its last EndTxn
	armed   bool           // crash at the next request (after the produce or EndTxn(commit) let through)
	crashed chan struct{}
	done    bool
}

func newCrasher(t *testing.T, b *kafkabroker.Broker, step crashStep, dir string) *brokerCrasher {
	c := &brokerCrasher{step: string(step), dir: dir, copyDir: filepath.Join(t.TempDir(), "crashed"),
		inTxn: map[string]int{}, crashed: make(chan struct{})}
	cl := b.Cluster()
	cl.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		return c.control(t, req)
	})
	return c
}

func (c *brokerCrasher) control(t *testing.T, req kmsg.Request) (kmsg.Response, error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return nil, errors.New("broker crashed"), true
	}
	if c.hit(req) {
		require.NoError(t, os.CopyFS(c.copyDir, os.DirFS(c.dir)))
		c.done = true
		close(c.crashed)
		return nil, errors.New("broker crashed"), true
	}
	return nil, nil, false
}

// hit tells whether req is the request the broker crashes at (and counts).
func (c *brokerCrasher) hit(req kmsg.Request) bool {
	ready := c.commits >= crashWarmCommit
	if c.armed {
		return true
	}
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		if r.TransactionID == nil {
			return false
		}
		id := *r.TransactionID
		c.inTxn[id]++
		first := ready && c.inTxn[id] == 1
		c.armed = first && c.step == string(crashAtProduce)
		return first && c.step == string(crashAtAdd)
	case *kmsg.EndTxnRequest:
		c.inTxn[r.TransactionalID] = 0
		if !r.Commit {
			return false
		}
		c.commits++
		if ready && c.step == string(crashAtEnd) {
			return true
		}
		c.armed = ready && c.step == string(crashAfterEnd)
	}
	return false
}

// TestExactlyOnceThroughBrokerCrashAtEachStep: a Kafka → Kafka
// exactly-once job writes while the broker crashes at each step of a
// transaction (add, produce, end, after end) and comes back on its data
// dir a second later. A broker that crashed mid-transaction aborts the
// transaction without a marker and bumps the producer's epoch, so the
// sink's commit gets INVALID_TXN_STATE, or success (answered as a retry of
// the commit before it) for records that are gone: the sink reads the
// outcome from the log, fails over to the checkpoint naming an aborted
// one, whose restore writes its records again from the topic, and ends
// with every record committed exactly once, never stalling. Each step
// runs with one sink subtask and with two: with two, one subtask's part
// of a checkpoint may be committed when the crash aborts its sibling's,
// and the restore must not write the committed part again (a replay from
// the checkpoint before did). The cases run in parallel (own brokers).
func TestExactlyOnceThroughBrokerCrashAtEachStep(t *testing.T) {
	t.Parallel() // waits on timeouts and restarts with its own broker
	start := time.Now()
	steps := []crashStep{crashAtAdd, crashAtProduce, crashAtEnd, crashAfterEnd}
	sinks := []int{1, 2}
	if testing.Short() { // make check: the two-subtask cases (two transactions in flight) only
		sinks = []int{2}
	}
	var mu sync.Mutex
	var records, lost, dup int64
	fired := 0
	t.Run("cases", func(t *testing.T) {
		for _, sinkParallelism := range sinks {
			for _, step := range steps {
				name := fmt.Sprintf("%s/sinks=%d", strings.ReplaceAll(string(step), " ", "-"), sinkParallelism)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					got, want := runThroughCrash(t, step, sinkParallelism)
					l, d, u := onceEach(got, want)
					mu.Lock()
					fired++
					records, lost, dup = records+int64(len(got)), lost+l, dup+d
					mu.Unlock()
					t.Logf("step %s, %d sink subtasks: %d input records, %d committed, %d lost, %d duplicated, %d unexpected",
						step, sinkParallelism, len(want), len(got), l, d, u)
					assert.Zero(t, l+d+u, "every input record committed exactly once")
				})
			}
		}
	})
	scorecard.Record(t, start, scorecard.Entry{Suite: "Kafka → Kafka exactly-once, broker crash (kill -9, data dir kept) at each transaction step",
		Faults:  "broker crash at add, produce, end and after end of a transaction, with 1 and 2 sink subtasks, restart on its data after 1 s",
		Planned: len(steps) * len(sinks), Fired: fired, Cases: len(steps) * len(sinks), Records: records, Lost: lost, Duplicated: dup})
}

// runThroughCrash runs one case (the sink with sinkParallelism subtasks) and returns the committed idxs and the
// idxs the input holds (what a producer at 2,000 records/s wrote before
// the crash, then 1,000 more).
func runThroughCrash(t *testing.T, step crashStep, sinkParallelism int) (got, want []int64) {
	dir := filepath.Join(t.TempDir(), "data")
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", DataDir: dir, SyncWrites: true,
		Topics: []kafkabroker.Topic{{Name: "in", Partitions: 2}, {Name: "out", Partitions: 2}}})
	require.NoError(t, err)
	addr := b.Addr()
	c := newCrasher(t, b, step, dir)
	spec := fmt.Sprintf(`
name: eo-crash
parallelism: 2
checkpointing: {interval: 100ms, timeout: 5s}
restartStrategy: {type: fixed-delay, attempts: 1000, delay: 100ms}
operators:
  - {uid: in, type: kafka, brokers: [%[1]s], topic: in, format: json}
  - {uid: out, type: kafka, from: [in], parallelism: %[2]d, brokers: [%[1]s], topic: out, deliveryGuarantee: exactly-once, deliveryTimeout: 4s}
`, addr, sinkParallelism)
	opts := runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()}
	if os.Getenv("CRASHDBG") != "" {
		l := zerolog.New(os.Stderr)
		opts.Log = &l
	}
	j := runtimetest.Start(t, spec, opts)
	ctx, stopInput := context.WithCancel(context.Background())
	input := make(chan struct{})
	go func() {
		defer close(input)
		_, _ = produce.Run(ctx, produce.Config{Brokers: []string{addr}, Topic: "in", Rate: 2000})
	}()
	select {
	case <-c.crashed:
	case <-time.After(waitFor):
		t.Errorf("the broker did not reach step %q", step)
	}
	stopInput()
	<-input
	_ = b.Close()
	time.Sleep(time.Second)
	b, err = kafkabroker.Start(kafkabroker.Config{Listen: addr, DataDir: c.copyDir})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, b.Close()) })
	in := idxs(t, readValues(t, addr, "in", false))
	next := slices.Max(append(in, 0)) + 1
	produceIdx(t, addr, "in", next, 1000)
	want = uniqueIdxs(idxs(t, readValues(t, addr, "in", false)))
	for deadline := time.Now().Add(2 * waitFor); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if len(uniqueIdxs(idxs(t, readValues(t, addr, "out", true)))) >= len(want) {
			break
		}
	}
	runtimetest.Cancel(t, waitFor, j)
	return idxs(t, readValues(t, addr, "out", true)), want
}

// uniqueIdxs returns the distinct idxs, sorted.
func uniqueIdxs(v []int64) []int64 {
	out := slices.Clone(v)
	slices.Sort(out)
	return slices.Compact(out)
}

// onceEach counts the idxs of want missing from got, the extra copies in
// got, and the idxs in got that want does not hold.
func onceEach(got, want []int64) (lost, dup, unexpected int64) {
	count := map[int64]int{}
	for _, v := range got {
		count[v]++
	}
	for _, w := range want {
		switch c := count[w]; {
		case c == 0:
			lost++
		case c > 1:
			dup += int64(c - 1)
		}
		delete(count, w)
	}
	return lost, dup, int64(len(count))
}
