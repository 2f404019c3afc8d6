package kafka

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

const (
	// pollWait is how long Poll waits for records before returning empty.
	pollWait = 50 * time.Millisecond
	// chunkQueue is how many chunks the fetchers of a subtask may have
	// ready ahead of Poll (backpressure beyond it).
	chunkQueue = 64
	// openTimeout bounds one round of Open's requests (metadata and
	// offsets); failed rounds are retried for retryTimeout (openRetry).
	openTimeout = 30 * time.Second
)

// Gauges published by the source (per subtask; info sums them).
const (
	gaugeSkipped     = "recordsSkipped"           // format json: invalid (onDecodeError: skip)
	gaugeMissing     = "recordsWithoutValue"      // format json: tombstones and empty values, skipped (onMissingValue: skip)
	gaugeSkippedOOR  = "recordsSkippedOutOfRange" // records lost to retention and skipped (onOffsetOutOfRange)
	gaugePending     = "pendingRecords"           // records in the assigned partitions not yet emitted
	gaugePartitions  = "assignedPartitions"
	gaugeNotFetching = "partitionsNotFetching" // partitions whose fetches fail (retrying for retryTimeout)
	gaugeCommitFails = "offsetCommitFailures"
)

// partition is an assigned partition as Poll sees it.
type partition struct {
	pos   position // pos.next: offset of the next record to emit
	lag   int64    // high watermark - pos.next at the last chunk; -1 unknown
	done  bool     // bounded: reached pos.stop
	f     *fetcher
	split uint32 // its index in source.parts: Record.Split of its records
}

// source is one subtask of the kafka source. Open, Poll, SnapshotState, the
// notifications and Close run on the subtask's goroutine; fetchers (one
// goroutine per partition), discovery and the committer run beside it and
// talk to it through channels.
type source struct {
	cfg    sourceConfig
	ctx    *runtime.Context
	faults bool
	cl     *cluster
	run    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	shared *fetchShared

	parts      []*partition
	byTP       map[topicPartition]*partition
	active     int // partitions not done
	cur        *chunk
	timer      *time.Timer
	discovered chan []position // nil without discovery
	committer  *committer
	committed  *committedReader // isolationLevel read_committed: reads every partition (no fetchers)

	snap          []position           // positions of the last snapshot (DescribeState)
	pending       map[int64][]position // snapshots awaiting completion, to commit
	pendingGauge  *atomic.Int64
	assignedGauge *atomic.Int64
}

func newSource(cfg sourceConfig) *source {
	return &source{cfg: cfg, byTP: map[topicPartition]*partition{}, pending: map[int64][]position{}}
}

func (s *source) Open(ctx *runtime.Context) error {
	s.ctx = ctx
	s.faults = ctx.FaultsArmed()
	s.pendingGauge, s.assignedGauge = ctx.Metrics().Gauge(gaugePending), ctx.Metrics().Gauge(gaugePartitions)
	restored, known, err := s.restored()
	if err != nil {
		return err
	}
	s.cl = newCluster(s.cfg.brokers, s.cfg.discovery)
	if s.cfg.readCommitted {
		s.cl.isolation = kafka.ReadCommitted
	}
	s.run, s.cancel = context.WithCancel(context.Background())
	s.watchDone(ctx.Done())
	s.shared = &fetchShared{cfg: &s.cfg, cl: s.cl, log: *ctx.Log(), ctx: s.run,
		dialer: &kafka.Dialer{ClientID: clientID, Timeout: requestTimeout},
		out:    make(chan *chunk, chunkQueue), free: make(chan *chunk, chunkQueue+8),
		metrics: ctx.Metrics(), failing: ctx.Metrics().Gauge(gaugeNotFetching),
		skipped: ctx.Metrics().Counter(gaugeSkipped), skippedOOR: ctx.Metrics().Counter(gaugeSkippedOOR),
		missing: ctx.Metrics().Counter(gaugeMissing)}
	positions, all, err := s.initialPositions(restored, known)
	if err != nil {
		return fmt.Errorf("kafka source: %w", err)
	}
	if s.cfg.readCommitted {
		s.committed = startCommittedReader(s.shared, &s.wg)
	}
	for _, p := range positions {
		s.assign(p)
	}
	s.timer = time.NewTimer(time.Hour)
	s.timer.Stop()
	if s.cfg.discovery > 0 {
		s.discovered = make(chan []position)
		s.wg.Add(1)
		go s.discover(all)
	}
	if s.cfg.group != "" {
		s.committer = startCommitter(s.cl, s.cfg.group, *ctx.Log(), ctx.Metrics().Counter(gaugeCommitFails))
	}
	ctx.Log().Info().Strs("topics", s.cfg.topics).Int("partitions", len(s.parts)).Bool("restored", restored != nil).
		Msg("kafka source opened")
	return nil
}

// assign adds a partition and starts its fetcher (unless already finished).
func (s *source) assign(pos position) {
	if s.byTP[pos.tp] != nil {
		return
	}
	p := &partition{pos: pos, lag: -1, split: uint32(len(s.parts))}
	s.parts = append(s.parts, p)
	s.byTP[pos.tp] = p
	s.assignedGauge.Store(int64(len(s.parts)))
	if pos.stop != noStop && pos.next >= pos.stop {
		p.done = true
		return
	}
	s.active++
	if s.committed != nil {
		s.committed.add(p)
		return
	}
	p.f = newFetcher(s.shared, p)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		p.f.run()
	}()
}

// Splits lists the partitions being read (event time: one watermark per
// partition); a bounded partition that reached its end is no longer one.
func (s *source) Splits(dst []uint32) []uint32 {
	for _, p := range s.parts {
		if !p.done {
			dst = append(dst, p.split)
		}
	}
	return dst
}

func (s *source) Poll(b *runtime.Batch) error {
	if s.faults {
		if err := s.ctx.Fault("kafka.poll", s.ctx.UID(), s.ctx.Subtask()); err != nil {
			return err
		}
	}
	for len(b.Records) < cap(b.Records) {
		if s.cur == nil && !s.nextChunk(len(b.Records) == 0) {
			break
		}
		if err := s.take(b); err != nil {
			return err
		}
	}
	if s.cfg.bounded && s.active == 0 {
		return runtime.ErrEndOfInput
	}
	return nil
}

// nextChunk makes the next ready chunk current and reports whether Poll
// may take it now. With wait it waits up to pollWait for one (or a
// wakeup); a chunk that came after a wait is made current but left for
// the next Poll, so this one returns empty-handed and its wait counts as
// idle, not busy (runtime.Source.Poll): a source reading a trickle spends
// its time waiting on the broker.
func (s *source) nextChunk(wait bool) bool {
	select {
	case s.cur = <-s.shared.out:
		return true
	case ps := <-s.discovered:
		s.assignAll(ps)
		return false
	default:
	}
	if !wait || (s.cfg.bounded && s.active == 0) {
		return false
	}
	s.timer.Reset(pollWait)
	defer s.timer.Stop()
	select {
	case s.cur = <-s.shared.out:
	case ps := <-s.discovered:
		s.assignAll(ps)
	case <-s.ctx.Wakeup():
	case <-s.timer.C:
	}
	return false
}

// take moves records of the current chunk into b and advances the
// partition's position; a chunk's error is returned once its records are.
func (s *source) take(b *runtime.Batch) error {
	c := s.cur
	p := c.part
	n := min(cap(b.Records)-len(b.Records), len(c.recs)-c.pos)
	from := len(b.Records)
	b.Records = append(b.Records, c.recs[c.pos:c.pos+n]...)
	for i := from; i < len(b.Records); i++ {
		b.Records[i].Split = p.split
	}
	if c.pos += n; c.pos < len(c.recs) {
		p.pos.next = c.offs[c.pos]
		return nil
	}
	s.cur = nil
	p.pos.next = c.next
	lag := int64(-1)
	if c.hwm >= 0 {
		lag = max(c.hwm-c.next, 0)
	}
	s.pendingGauge.Add(max(lag, 0) - max(p.lag, 0))
	p.lag = lag
	if c.done && !p.done {
		p.done = true
		s.active--
	}
	err := c.err
	s.shared.recycle(c)
	if err != nil {
		return fmt.Errorf("kafka source: %w", err)
	}
	return nil
}

func (s *source) assignAll(ps []position) {
	for _, p := range ps {
		s.ctx.Log().Info().Str("partition", p.tp.String()).Int64("offset", p.next).Msg("kafka partition discovered")
		s.assign(p)
	}
}

// SnapshotState stores the position of every assigned partition (a Union
// list: a restore at any parallelism gives each subtask all positions and
// it keeps the partitions it owns).
func (s *source) SnapshotState(id int64) error {
	if s.faults {
		if err := s.ctx.Fault("kafka.snapshot", s.ctx.UID(), s.ctx.Subtask(), id); err != nil {
			return err
		}
	}
	snap := make([]position, len(s.parts))
	items := make([][]byte, len(s.parts))
	for i, p := range s.parts {
		snap[i] = p.pos
		items[i] = p.pos.encode()
	}
	s.ctx.OperatorState().Set(partitionsList, state.Union, items)
	s.snap = snap
	if s.committer != nil {
		s.pending[id] = snap
	}
	return nil
}

// NotifyCheckpointComplete commits the offsets of checkpoint id to groupId
// (in the background; failures are only logged: the offsets that matter
// are in the checkpoint).
func (s *source) NotifyCheckpointComplete(id int64) error {
	offsets, ok := s.pending[id]
	for k := range s.pending {
		if k <= id {
			delete(s.pending, k)
		}
	}
	if !ok || s.committer == nil {
		return nil
	}
	if s.faults {
		if err := s.ctx.Fault("kafka.commit-offsets", s.ctx.UID(), s.ctx.Subtask(), id); err != nil {
			s.committer.failed(id, err)
			return nil
		}
	}
	s.committer.submit(id, offsets)
	return nil
}

func (s *source) NotifyCheckpointAborted(id int64) { delete(s.pending, id) }

// DescribeState shows the snapshotted offsets by "topic/partition" (and
// the stop offsets of a bounded source) for savepoint inspect.
func (s *source) DescribeState() map[string]any {
	offsets := make(map[string]int64, len(s.snap))
	stops := map[string]int64{}
	for _, p := range s.snap {
		offsets[p.tp.String()] = p.next
		if p.stop != noStop {
			stops[p.tp.String()] = p.stop
		}
	}
	out := map[string]any{"offsets": offsets}
	if len(stops) > 0 {
		out["stopOffsets"] = stops
	}
	return out
}

// Close stops the fetchers, discovery and the committer (which makes a
// last, short attempt to commit the latest completed checkpoint's offsets).
func (s *source) Close() error {
	if s.cancel != nil {
		s.cancel()
	}
	for _, p := range s.parts {
		if p.f != nil {
			p.f.interrupt()
		}
	}
	s.wg.Wait()
	if s.committed != nil {
		s.committed.close()
	}
	if s.committer != nil {
		s.committer.close()
	}
	if s.cl != nil {
		s.cl.close()
	}
	return nil
}
