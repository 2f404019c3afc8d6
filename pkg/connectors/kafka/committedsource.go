package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// committedPoll bounds one PollFetches, so partitions added meanwhile are
// taken up soon and the health check runs.
const committedPoll = 100 * time.Millisecond

// committedReader reads a source subtask's partitions with franz-go's
// consumer at isolation level read_committed, for isolationLevel:
// read_committed. segmentio/kafka-go cannot: its ReadCommitted only caps
// fetches at the last stable offset and hands aborted records and control
// batches to the application (segmentio/kafka-go#1332). franz-go drops the
// records of aborted transactions (from the fetch response's aborted
// transaction list) and never reads past the last stable offset.
//
// It produces the same chunks as the kafka-go fetchers, into the same
// channel, so Poll, the positions, the snapshots and restore are the
// source's, unchanged: a position is the offset after the last record the
// reader saw, control records (commit and abort markers, which it asks for
// and drops) included. A savepoint of either reader restores with the
// other.
//
// One goroutine and one kgo client per subtask, for all its partitions;
// the client is made when the first partitions are added.
type committedReader struct {
	*fetchShared
	health *fetchHealth

	mu    sync.Mutex
	added []*partition // handed over by add, taken up by run

	kcl   *kgo.Client // run's goroutine only (and close, after it ended)
	parts map[topicPartition]*committedPart
}

// committedPart is the reader's state of one partition.
type committedPart struct {
	p    *partition
	next int64 // offset after the last record seen
	stop int64
}

func startCommittedReader(s *fetchShared, wg *sync.WaitGroup) *committedReader {
	r := &committedReader{fetchShared: s, health: &fetchHealth{}, parts: map[topicPartition]*committedPart{}}
	r.health.ok.Store(time.Now().UnixNano())
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.run()
	}()
	return r
}

// add assigns p (from the subtask goroutine; never blocks).
func (r *committedReader) add(p *partition) {
	r.mu.Lock()
	r.added = append(r.added, p)
	r.mu.Unlock()
}

// close releases the client once run has ended (ctx canceled, wg waited).
func (r *committedReader) close() {
	if r.kcl != nil {
		r.kcl.Close()
	}
}

func (r *committedReader) run() {
	for r.ctx.Err() == nil {
		if err := r.takeAdded(); err != nil {
			r.fail(nil, err)
			return
		}
		if r.kcl == nil || len(r.parts) == 0 {
			select {
			case <-time.After(committedPoll):
			case <-r.ctx.Done():
			}
			continue
		}
		ctx, cancel := context.WithTimeout(r.ctx, committedPoll)
		fetches := r.kcl.PollFetches(ctx)
		cancel()
		if r.ctx.Err() != nil {
			return
		}
		if err := r.handle(fetches); err != nil {
			return
		}
		if err := r.health.check(r.cfg.retryTimeout); err != nil {
			r.fail(nil, err)
			return
		}
		r.report()
	}
}

// report shows in the figures whether the reader's partitions can fetch,
// as the kafka-go fetchers do per partition: kgo fetches them together,
// so they fail and recover together.
func (r *committedReader) report() {
	const problem = "fetch read_committed"
	failing := 0
	if since := r.health.failingSince(); !since.IsZero() {
		failing = len(r.parts)
		r.metrics.SetProblem(problem, fmt.Sprintf("%d partitions cannot fetch since %s (the job fails over after retryTimeout %s)",
			failing, since.Format(time.RFC3339), r.cfg.retryTimeout))
	} else {
		r.metrics.ClearProblem(problem)
	}
	r.failing.Store(int64(failing))
}

// takeAdded starts consuming the partitions added since the last call.
func (r *committedReader) takeAdded() error {
	r.mu.Lock()
	added := r.added
	r.added = nil
	r.mu.Unlock()
	if len(added) == 0 {
		return nil
	}
	offsets := map[string]map[int32]kgo.Offset{}
	for _, p := range added {
		tp := p.pos.tp
		r.parts[tp] = &committedPart{p: p, next: p.pos.next, stop: p.pos.stop}
		if offsets[tp.Topic] == nil {
			offsets[tp.Topic] = map[int32]kgo.Offset{}
		}
		offsets[tp.Topic][int32(tp.Partition)] = kgo.NewOffset().At(p.pos.next)
	}
	if r.kcl != nil {
		r.kcl.AddConsumePartitions(offsets)
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.cfg.brokers...), kgo.ClientID(clientID), kgo.DialTimeout(requestTimeout),
		kgo.ConsumePartitions(offsets), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()), kgo.FetchMaxWait(fetchMaxWait), kgo.FetchMaxPartitionBytes(fetchMaxBytes),
		kgo.WithHooks(r.health))
	if err != nil {
		return fmt.Errorf("kafka client for brokers %v: %w", r.cfg.brokers, err)
	}
	r.kcl = cl
	return nil
}

// handle turns one poll's records into chunks; an error ended the reader
// (the chunk carrying it was sent).
func (r *committedReader) handle(fetches kgo.Fetches) error {
	var err error
	fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
		if err != nil {
			return
		}
		cp := r.parts[topicPartition{Topic: fp.Topic, Partition: int(fp.Partition)}]
		if cp == nil {
			return
		}
		if fp.Err != nil {
			err = r.fetchError(cp, fp.Err)
			return
		}
		err = r.records(cp, fp.FetchPartition)
	})
	return err
}

// fetchError handles a partition's fetch error: an offset out of range
// under onOffsetOutOfRange, anything else (kgo retries what it can) fails
// the source.
func (r *committedReader) fetchError(cp *committedPart, ferr error) error {
	tp := cp.p.pos.tp
	if !errors.Is(ferr, kerr.OffsetOutOfRange) {
		return r.fail(cp, fmt.Errorf("%s: fetch: %w", tp, ferr))
	}
	ctx, cancel := context.WithTimeout(r.ctx, requestTimeout)
	defer cancel()
	ranges, err := r.cl.ranges(ctx, []topicPartition{tp})
	if err != nil {
		return r.fail(cp, err)
	}
	first, last := ranges[tp].first, ranges[tp].last
	to, skipped, err := resolveOutOfRange(r.cfg.outOfRange, tp, cp.next, first, last)
	if err != nil {
		return r.fail(cp, err)
	}
	r.log.Warn().Str("partition", tp.String()).Int64("offset", cp.next).Int64("log_start_offset", first).
		Int64("end_offset", last).Int64("new_offset", to).Int64("records_skipped", skipped).
		Stringer("on_offset_out_of_range", r.cfg.outOfRange).Msg("kafka offset out of range; records skipped")
	r.skippedOOR.Add(skipped)
	cp.next = to
	r.kcl.SetOffsets(map[string]map[int32]kgo.EpochOffset{tp.Topic: {int32(tp.Partition): {Epoch: -1, Offset: to}}})
	c := r.chunkFor(cp)
	c.next, c.hwm = to, last
	return r.sendChunk(c)
}

// records moves a partition's records into chunks. Control records only
// advance the position; a bounded partition ends at its stop offset.
func (r *committedReader) records(cp *committedPart, fp kgo.FetchPartition) error {
	c := r.chunkFor(cp)
	start := cp.next
	for _, rec := range fp.Records {
		if rec.Offset < cp.next {
			continue
		}
		if cp.stop != noStop && rec.Offset >= cp.stop {
			cp.next = cp.stop
			break
		}
		cp.next = rec.Offset + 1
		if rec.Attrs.IsControl() {
			continue
		}
		keep, err := r.admit(cp.p.pos.tp, rec.Offset, rec.Value)
		if err != nil {
			c.next, c.hwm, c.err = rec.Offset, fp.LastStableOffset, err
			_ = r.sendChunk(c)
			return err
		}
		if !keep {
			continue
		}
		c.recs = append(c.recs, kgoRecord(rec))
		c.offs = append(c.offs, rec.Offset)
		if len(c.recs) == chunkSize {
			c.next, c.hwm = cp.next, fp.LastStableOffset
			if err := r.sendChunk(c); err != nil {
				return err
			}
			c = r.chunkFor(cp)
		}
	}
	done := cp.stop != noStop && cp.next >= cp.stop
	c.next, c.hwm, c.done = cp.next, fp.LastStableOffset, done
	if len(c.recs) == 0 && !done && cp.next == start {
		r.recycle(c)
		return nil
	}
	if done {
		delete(r.parts, cp.p.pos.tp)
		r.kcl.RemoveConsumePartitions(map[string][]int32{cp.p.pos.tp.Topic: {int32(cp.p.pos.tp.Partition)}})
	}
	return r.sendChunk(c)
}

func (r *committedReader) chunkFor(cp *committedPart) *chunk {
	select {
	case c := <-r.free:
		c.part = cp.p
		return c
	default:
		return &chunk{part: cp.p, recs: make([]runtime.Record, 0, chunkSize), offs: make([]int64, 0, chunkSize)}
	}
}

func (r *committedReader) sendChunk(c *chunk) error {
	select {
	case r.out <- c:
		return nil
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
}

// fail hands err to Poll (on a chunk of cp, or of any partition) and
// returns it.
func (r *committedReader) fail(cp *committedPart, err error) error {
	if cp == nil {
		for _, p := range r.parts {
			cp = p
			break
		}
	}
	if cp == nil {
		r.mu.Lock()
		if len(r.added) > 0 {
			cp = &committedPart{p: r.added[0], next: r.added[0].pos.next}
		}
		r.mu.Unlock()
	}
	if cp == nil {
		r.log.Error().Err(err).Msg("kafka source reader failed with no partition to report it on")
		return err
	}
	c := r.chunkFor(cp)
	c.next, c.hwm, c.err = cp.next, -1, err
	_ = r.sendChunk(c)
	return err
}

// kgoRecord is a runtime record of a franz-go record (key and value are
// the client's, not reused by it).
func kgoRecord(r *kgo.Record) runtime.Record {
	ts := int64(0)
	if !r.Timestamp.IsZero() {
		ts = r.Timestamp.UnixMilli()
	}
	return runtime.Record{Key: r.Key, Value: r.Value, Timestamp: ts}
}

// fetchHealth tells whether the brokers still answer fetches: kgo retries
// unreachable brokers by itself and reports nothing to PollFetches, so the
// reader watches its connections (kgo hooks, on kgo's goroutines) and
// fails the source after retryTimeout without a fetch answer while
// connections fail, as the kafka-go fetchers do.
type fetchHealth struct {
	ok   atomic.Int64 // unix ns of the last fetch answer (or the start)
	fail atomic.Int64 // unix ns of the last failed connection or read
}

var (
	_ kgo.HookBrokerRead    = (*fetchHealth)(nil)
	_ kgo.HookBrokerConnect = (*fetchHealth)(nil)
)

const fetchKey = 1 // the Fetch request's API key

func (h *fetchHealth) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	switch {
	case err != nil:
		h.fail.Store(time.Now().UnixNano())
	case key == fetchKey:
		h.ok.Store(time.Now().UnixNano())
	}
}

func (h *fetchHealth) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil {
		h.fail.Store(time.Now().UnixNano())
	}
}

// failingSince is the last fetch answer while connections have failed
// since (zero: fetching).
func (h *fetchHealth) failingSince() time.Time {
	ok, fail := h.ok.Load(), h.fail.Load()
	if fail <= ok {
		return time.Time{}
	}
	return time.Unix(0, ok)
}

// check returns an error once fetches have failed for longer than limit.
func (h *fetchHealth) check(limit time.Duration) error {
	ok, fail := h.ok.Load(), h.fail.Load()
	if fail <= ok {
		return nil
	}
	if since := time.Since(time.Unix(0, ok)); since > limit {
		return fmt.Errorf("no successful fetch for %s (retryTimeout): the brokers are unreachable", since.Round(time.Millisecond))
	}
	return nil
}
