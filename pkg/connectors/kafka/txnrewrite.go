package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A pre-committed transaction the broker aborted (its timeout passed, a
// fence, or a broker crash: kfake aborts what was open at a crash) is
// not committed, but its records stay in the log, marked aborted, until
// retention deletes them. The restore that finds it aborted reads them
// back (ReadAborted) and writes them again as the first records of its
// open transaction, which the next barrier pre-commits and the checkpoint
// completing commits, like any other (txnWriter.rewrite). So the job
// resumes at the checkpoint that names the transaction and never before
// it: the parts of that checkpoint that other sink subtasks (or other
// sinks) committed are not written again.
//
// Idempotent because the rewrite commits only through a checkpoint whose
// snapshot names it: a restore that does not see it (the same checkpoint
// restored again) fences the pool it is on, which aborts it, and rewrites
// the original again.

// errRecordsGone: the records of an aborted transaction are no longer in
// the log (deleted by retention or compaction, or lost with an unsynced
// broker crash), so they cannot be written again; the restore goes back
// to the snapshot before the transaction's checkpoint instead
// (runtime.RestoreBeforeError).
var errRecordsGone = errors.New("the records of the aborted transaction are no longer in the topic")

// ReadAborted hands fn the records of the aborted transaction cm, in log
// order per partition: the data records of cm's producer id and epoch at
// or after its first offset in each partition (no two transactions of a
// pool share a producer id and epoch, see txnProducer.Reusable), exactly
// cm.Records of them. It reads with read_uncommitted (aborted records are
// what it wants) up to the partitions' ends at the start: cm ended before
// (it is aborted), so none of its records comes later. Fewer records than
// cm.Records, or an offset before the log start, is errRecordsGone;
// anything else (brokers unreachable within ctx) an ordinary error.
func (c *franzClient) ReadAborted(ctx context.Context, cm committable, fn func(partition int32, key, value []byte, timestamp int64) error) error {
	if len(cm.First) == 0 {
		return fmt.Errorf("%w: %s: no record offsets known", errRecordsGone, cm)
	}
	ends, err := c.endOffsets(ctx, cm.First)
	if err != nil {
		return fmt.Errorf("%s: end offsets of topic %q: %w", cm, cm.Topic, err)
	}
	next := map[int32]int64{}
	from := map[int32]kgo.Offset{}
	for _, f := range cm.First {
		next[f.Partition] = f.Offset
		from[f.Partition] = kgo.NewOffset().At(f.Offset)
	}
	reached := func() bool {
		for p, n := range next {
			if n < ends[p] {
				return false
			}
		}
		return true
	}
	cl, err := kgo.NewClient(append(c.cfg.base(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cm.Topic: from}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()), kgo.FetchMaxWait(fetchMaxWait))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	var got int64
	for got < cm.Records && !reached() {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: read its records back (%d of %d so far): %w", cm, got, cm.Records, err)
		}
		for _, fe := range fetches.Errors() {
			if errors.Is(fe.Err, kerr.OffsetOutOfRange) {
				return fmt.Errorf("%w: %s: offset out of range in %s/%d (deleted by retention?)", errRecordsGone, cm, cm.Topic, fe.Partition)
			}
		}
		var ferr error
		fetches.EachRecord(func(r *kgo.Record) {
			n, ok := next[r.Partition]
			if !ok || ferr != nil || got == cm.Records || r.Offset < n {
				return
			}
			next[r.Partition] = r.Offset + 1
			if r.Attrs.IsControl() || r.ProducerID != cm.ProducerID || r.ProducerEpoch != cm.Epoch {
				return
			}
			got++
			ferr = fn(r.Partition, r.Key, r.Value, r.Timestamp.UnixMilli())
		})
		if ferr != nil {
			return ferr
		}
	}
	if got < cm.Records {
		return fmt.Errorf("%w: %s: %d of its %d records found", errRecordsGone, cm, got, cm.Records)
	}
	return nil
}

// endOffsets returns the high watermarks of the partitions of at.
func (c *franzClient) endOffsets(ctx context.Context, at []partitionOffset) (map[int32]int64, error) {
	ends := map[int32]int64{}
	err := retry(ctx, func() error {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		t := kmsg.NewListOffsetsRequestTopic()
		t.Topic = c.cfg.topic
		for _, f := range at {
			p := kmsg.NewListOffsetsRequestTopicPartition()
			p.Partition, p.Timestamp = f.Partition, -1 // latest; read_uncommitted: the high watermark
			t.Partitions = append(t.Partitions, p)
		}
		req.Topics = append(req.Topics, t)
		shards := c.admin.RequestSharded(ctx, req)
		for _, sh := range shards {
			if sh.Err != nil {
				return sh.Err
			}
			for _, rt := range sh.Resp.(*kmsg.ListOffsetsResponse).Topics {
				for _, rp := range rt.Partitions {
					if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
						return err
					}
					ends[rp.Partition] = rp.Offset
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, f := range at {
		if _, ok := ends[f.Partition]; !ok {
			return nil, fmt.Errorf("no end offset for partition %d", f.Partition)
		}
	}
	return ends, nil
}
