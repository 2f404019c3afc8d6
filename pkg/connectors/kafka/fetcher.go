package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/segmentio/kafka-go"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
)

const (
	// chunkSize is the most records a chunk carries: one runtime batch.
	chunkSize = runtime.DefaultBatchSize
	// fetchMaxWait is how long the broker holds a fetch when there is no
	// data (Kafka's fetch.max.wait.ms).
	fetchMaxWait = 500 * time.Millisecond
	// fetchMaxBytes bounds one fetch response. kafka-go decodes it as it
	// streams in, so this is not memory held at once.
	fetchMaxBytes = 4 << 20
	// Reconnection backoff after a failed fetch.
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// chunk is a run of records of one partition, handed by the partition's
// fetcher to Poll. Chunks are recycled through fetchShared.free.
type chunk struct {
	part *partition
	recs []runtime.Record
	offs []int64 // offset of each record
	pos  int     // records before pos have been emitted
	next int64   // fetch position after the chunk (skipped records included)
	hwm  int64   // partition's high watermark when fetched; -1 unknown
	done bool    // bounded: the partition reached its stop offset
	err  error   // the fetcher failed for good after recs
}

func (c *chunk) reset() {
	clear(c.recs) // drop payload references
	c.recs, c.offs, c.pos = c.recs[:0], c.offs[:0], 0
	c.part, c.done, c.err = nil, false, nil
}

// fatalError ends a fetcher without retry (offset out of range under the
// fail policy, an undecodable record under onDecodeError: fail).
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }

// fetchShared is what the fetchers of one source subtask share.
type fetchShared struct {
	cfg        *sourceConfig
	cl         *cluster
	log        zerolog.Logger
	dialer     *kafka.Dialer
	ctx        context.Context // canceled by Close
	out        chan *chunk
	free       chan *chunk
	metrics    *runtime.Metrics // for the problems of failing fetchers
	failing    *atomic.Int64    // partitions whose fetches fail (partitionsNotFetching)
	skipped    *atomic.Int64    // undecodable records skipped
	missing    *atomic.Int64    // format json: records without value skipped
	skippedOOR *atomic.Int64    // records skipped because their offsets were gone
}

// fetcher reads one partition on its own goroutine and connection (kafka-go's
// Conn and ReadBatch: a fetch response is decoded straight into chunks, with
// no per-record channel hand-over as in kafka-go's Reader). It owns next, the
// offset to fetch; Poll owns the partition's emitted position.
type fetcher struct {
	*fetchShared
	part       *partition
	tp         topicPartition
	next, stop int64
	sent       int64 // next of the last chunk sent
	sentDone   bool  // the chunk marking the stop offset was sent
	progressed bool  // a fetch succeeded since the last failure

	mu     sync.Mutex // guards conn and closed (Close interrupts a fetch)
	conn   *kafka.Conn
	closed bool
}

func newFetcher(s *fetchShared, p *partition) *fetcher {
	return &fetcher{fetchShared: s, part: p, tp: p.pos.tp, next: p.pos.next, stop: p.pos.stop, sent: p.pos.next}
}

// run fetches until the partition is finished (bounded), the source closes
// or a fatal error, which it hands to Poll.
func (f *fetcher) run() {
	err := f.loop()
	if err != nil && f.ctx.Err() == nil {
		c := f.chunk()
		c.next, c.hwm, c.err = f.next, -1, err
		_ = f.send(c)
	}
}

func (f *fetcher) finished() bool { return f.stop != noStop && f.next >= f.stop }

// loop reconnects with backoff until a fetch succeeds again, for at most
// retryTimeout without progress.
func (f *fetcher) loop() error {
	var failingSince time.Time
	defer func() {
		if !failingSince.IsZero() {
			f.recovered()
		}
	}()
	backoff := minBackoff
	for {
		if f.finished() {
			if f.sentDone {
				return nil
			}
			c := f.chunk()
			c.next, c.hwm, c.done = f.next, -1, true
			return f.send(c)
		}
		err := f.session()
		if f.ctx.Err() != nil {
			return nil
		}
		var fatal *fatalError
		if errors.As(err, &fatal) {
			return fatal.err
		}
		if f.progressed {
			if !failingSince.IsZero() {
				f.log.Info().Str("partition", f.tp.String()).Msg("kafka fetch recovered")
				f.recovered()
			}
			failingSince, backoff, f.progressed = time.Time{}, minBackoff, false
		}
		if err == nil || errors.Is(err, errRedial) {
			continue
		}
		now := time.Now()
		if failingSince.IsZero() {
			failingSince = now
			f.log.Warn().Err(err).Str("partition", f.tp.String()).Dur("retry_timeout", f.cfg.retryTimeout).Msg("kafka fetch failed; reconnecting")
			f.failing.Add(1)
		}
		f.metrics.SetProblem("fetch "+f.tp.String(), fmt.Sprintf("partition %s cannot fetch since %s: %v (the job fails over after retryTimeout %s)",
			f.tp, failingSince.Format(time.RFC3339), err, f.cfg.retryTimeout))
		if now.Sub(failingSince) > f.cfg.retryTimeout {
			return fmt.Errorf("%s: no successful fetch for %s (retryTimeout): %w", f.tp, now.Sub(failingSince).Round(time.Millisecond), err)
		}
		select {
		case <-time.After(backoff):
		case <-f.ctx.Done():
			return nil
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// recovered ends the partition's failure streak in the figures.
func (f *fetcher) recovered() {
	f.failing.Add(-1)
	f.metrics.ClearProblem("fetch " + f.tp.String())
}

// errRedial ends a session that should start again at once on a new
// connection: kafka-go's Conn cannot be reused after a fetch answered with an
// error (the rest of the response stays unread in its buffer, and the next
// request on it fails with "multiple Read calls return no data or error").
var errRedial = errors.New("redial")

// session fetches on one connection until an error or the stop offset.
func (f *fetcher) session() error {
	conn, err := f.dial()
	if err != nil {
		return err
	}
	defer f.drop(conn)
	for !f.finished() {
		if err := f.ctx.Err(); err != nil {
			return err
		}
		err := f.fetch(conn)
		switch {
		case err == nil:
			f.progressed = true
		case errors.Is(err, kafka.RequestTimedOut):
			return errRedial // the long poll outlived the deadline: ask again
		case errors.Is(err, kafka.OffsetOutOfRange):
			if err := f.outOfRange(); err != nil {
				return err
			}
			return errRedial
		default:
			return err
		}
	}
	return nil
}

func (f *fetcher) dial() (*kafka.Conn, error) {
	var errs []error
	for _, b := range f.cfg.brokers {
		ctx, cancel := context.WithTimeout(f.ctx, requestTimeout)
		conn, err := f.dialer.DialLeader(ctx, "tcp", b, f.tp.Topic, f.tp.Partition)
		cancel()
		if err == nil {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.closed {
				conn.Close()
				return nil, context.Canceled
			}
			f.conn = conn
			return conn, nil
		}
		errs = append(errs, err)
		if f.ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("connect to the leader of %s: %w", f.tp, errors.Join(errs...))
}

func (f *fetcher) drop(conn *kafka.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	conn.Close()
	f.conn = nil
}

// interrupt closes the connection of a fetch in flight; the fetcher then
// sees its context canceled. Called by Close, on another goroutine.
func (f *fetcher) interrupt() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if f.conn != nil {
		f.conn.Close()
	}
}

// fetch sends one fetch request from f.next and turns the answer into chunks.
func (f *fetcher) fetch(conn *kafka.Conn) error {
	if _, err := conn.Seek(f.next, kafka.SeekAbsolute|kafka.SeekDontCheck); err != nil {
		return err
	}
	if err := conn.SetReadDeadline(time.Now().Add(fetchMaxWait + requestTimeout)); err != nil {
		return err
	}
	batch := conn.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: fetchMaxBytes, MaxWait: fetchMaxWait})
	err := f.read(batch)
	if cerr := batch.Close(); err == nil {
		err = cerr
	}
	return err
}

// read decodes the records of batch into chunks and sends them.
func (f *fetcher) read(batch *kafka.Batch) error {
	hwm := batch.HighWaterMark()
	c := f.chunk()
	var err error
	for !f.finished() {
		var m kafka.Message
		if m, err = batch.ReadMessage(); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
				// past control records and compacted gaps at the end
				f.next = max(f.next, batch.Offset())
			}
			break
		}
		if m.Offset < f.next {
			continue
		}
		if f.stop != noStop && m.Offset >= f.stop {
			f.next = f.stop
			break
		}
		keep, derr := f.admit(f.tp, m.Offset, m.Value)
		if derr != nil {
			err = derr
			break
		}
		if !keep {
			f.next = m.Offset + 1
			continue
		}
		ts := int64(0)
		if !m.Time.IsZero() {
			ts = m.Time.UnixMilli()
		}
		c.recs = append(c.recs, runtime.Record{Key: m.Key, Value: m.Value, Timestamp: ts})
		c.offs = append(c.offs, m.Offset)
		f.next = m.Offset + 1
		if len(c.recs) == chunkSize {
			c.next, c.hwm = f.next, hwm
			if serr := f.send(c); serr != nil {
				return serr
			}
			c = f.chunk()
		}
	}
	c.next, c.hwm, c.done = f.next, hwm, f.finished()
	if len(c.recs) > 0 || c.done || c.next != f.sent {
		if serr := f.send(c); serr != nil {
			return serr
		}
	} else {
		f.recycle(c)
	}
	return err
}

// admit applies the format to a record's value (both readers): false is a
// record to skip (counted in recordsSkipped), an error a fatal decode error.
func (s *fetchShared) admit(tp topicPartition, offset int64, value []byte) (bool, error) {
	if !s.cfg.json {
		return true, nil
	}
	bad := expr.CheckJSON(value) // not JSON, or a number out of range
	if bad == nil {
		return true, nil
	}
	if len(value) == 0 { // no value: nothing to decode (see missingValue)
		if s.cfg.failMissing {
			return false, &fatalError{fmt.Errorf("%s offset %d: the record has no value (a tombstone, or an empty value: the Kafka client reports them alike) and onMissingValue is fail; set onMissingValue: skip to skip such records", tp, offset)}
		}
		s.missing.Add(1)
		return false, nil
	}
	if !s.cfg.skipInvalid {
		return false, &fatalError{fmt.Errorf("%s offset %d: %v (format json; set onDecodeError: skip to skip such records): %s", tp, offset, bad, excerpt(value))}
	}
	s.skipped.Add(1)
	return false, nil
}

// outOfRange applies onOffsetOutOfRange after the broker refused f.next.
func (f *fetcher) outOfRange() error {
	ctx, cancel := context.WithTimeout(f.ctx, requestTimeout)
	defer cancel()
	ranges, err := f.cl.ranges(ctx, []topicPartition{f.tp})
	if err != nil {
		return err
	}
	first, last := ranges[f.tp].first, ranges[f.tp].last
	to, skipped, err := resolveOutOfRange(f.cfg.outOfRange, f.tp, f.next, first, last)
	if err != nil {
		return &fatalError{err}
	}
	if to == f.next {
		return kafka.OffsetOutOfRange // in range by now: retry after a backoff
	}
	f.log.Warn().Str("partition", f.tp.String()).Int64("offset", f.next).Int64("log_start_offset", first).
		Int64("end_offset", last).Int64("new_offset", to).Int64("records_skipped", skipped).
		Stringer("on_offset_out_of_range", f.cfg.outOfRange).Msg("kafka offset out of range; records skipped")
	f.skippedOOR.Add(skipped)
	f.next = to
	c := f.chunk() // no records: moves the checkpointed position
	c.next, c.hwm = to, last
	return f.send(c)
}

// resolveOutOfRange decides where a partition whose offset from lies
// outside [first, last] continues: an error naming the offsets under the
// fail policy (startNone), else the log start or end and how many records
// that skips.
func resolveOutOfRange(policy startMode, tp topicPartition, from, first, last int64) (to, skipped int64, err error) {
	if from >= first && from <= last {
		return from, 0, nil
	}
	switch policy {
	case startEarliest:
		to = first
	case startLatest:
		to = last
	default:
		if from < first {
			return 0, 0, fmt.Errorf("%s: offset %d is out of range (log start offset %d, end offset %d): records %d to %d were deleted (retention or delete-records) before they were read; set onOffsetOutOfRange: earliest to skip the %d deleted records, or latest to skip to the end (%d records)",
				tp, from, first, last, from, first-1, first-from, last-from)
		}
		return 0, 0, fmt.Errorf("%s: offset %d is beyond the end of the partition (log start offset %d, end offset %d; was the topic recreated?); set onOffsetOutOfRange: earliest or latest to continue from there",
			tp, from, first, last)
	}
	return to, max(to-from, 0), nil
}

func (f *fetcher) chunk() *chunk {
	select {
	case c := <-f.free:
		c.part = f.part
		return c
	default:
		return &chunk{part: f.part, recs: make([]runtime.Record, 0, chunkSize), offs: make([]int64, 0, chunkSize)}
	}
}

// recycle returns a consumed chunk for reuse (from any goroutine).
func (s *fetchShared) recycle(c *chunk) {
	c.reset()
	select {
	case s.free <- c:
	default:
	}
}

// send hands c to Poll, which owns it from then on.
func (f *fetcher) send(c *chunk) error {
	next, done := c.next, c.done
	select {
	case f.out <- c:
		f.sent, f.sentDone = next, done
		return nil
	case <-f.ctx.Done():
		return f.ctx.Err()
	}
}

// excerpt quotes the start of a value for an error message.
func excerpt(v []byte) string {
	const limit = 80
	if len(v) > limit {
		return fmt.Sprintf("%q…", v[:limit])
	}
	return fmt.Sprintf("%q", v)
}
