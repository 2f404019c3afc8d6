// Package consume reads what a job wrote, behind `flinkgo dev consume` and
// `flinkgo dev verify --kafka`: every partition of a Kafka topic from its
// start (with franz-go, read_committed or read_uncommitted), or the
// messages of a NATS subject.
//
// Without Follow a read ends at the end of the data present when it
// started: for Kafka, the end offsets (the last stable offsets under
// read_committed) listed at the start, so records committed later are not
// waited for.
package consume

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Record is one record read.
type Record struct {
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Timestamp time.Time
}

// KafkaConfig configures Kafka.
type KafkaConfig struct {
	Brokers []string
	Topic   string
	// ReadCommitted skips records of aborted and open transactions (and
	// stops at the last stable offset); otherwise every record is read.
	ReadCommitted bool
	// Count stops after so many records (0: no limit).
	Count int64
	// Follow keeps reading new records until ctx ends (or Count).
	Follow bool
}

const (
	requestTimeout = 10 * time.Second
	// idleEnd ends a read whose partitions sit below their start-time end
	// offsets with nothing more to read: under read_committed an aborted
	// transaction's records just below the last stable offset are never
	// delivered, and their abort marker may lie beyond it.
	idleEnd = 2 * time.Second
)

// Kafka calls fn for each record of cfg.Topic, partition by partition in
// offset order (partitions interleaved), and returns how many it read.
func Kafka(ctx context.Context, cfg KafkaConfig, fn func(Record) error) (int64, error) {
	if len(cfg.Brokers) == 0 || cfg.Topic == "" {
		return 0, errors.New("consume: brokers and topic are required")
	}
	iso := kgo.ReadUncommitted()
	if cfg.ReadCommitted {
		iso = kgo.ReadCommitted()
	}
	base := []kgo.Opt{kgo.SeedBrokers(cfg.Brokers...), kgo.ClientID("flinkgo-dev-consume"), kgo.RetryTimeout(requestTimeout)}
	ends, err := endOffsets(ctx, base, cfg.Topic, cfg.ReadCommitted)
	if err != nil {
		return 0, fmt.Errorf("consume %s: %w", cfg.Topic, err)
	}
	parts := map[int32]kgo.Offset{}
	for p := range ends {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(append(base, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Topic: parts}),
		kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(), kgo.FetchMaxWait(200*time.Millisecond))...)
	if err != nil {
		return 0, fmt.Errorf("consume %s: %w", cfg.Topic, err)
	}
	defer cl.Close()
	r := reader{cfg: cfg, ends: ends, next: map[int32]int64{}, fn: fn}
	return r.run(ctx, cl)
}

type reader struct {
	cfg  KafkaConfig
	ends map[int32]int64 // end offsets at the start
	next map[int32]int64 // position after the last record (control records included)
	fn   func(Record) error
	n    int64
}

func (r *reader) done() bool {
	if r.cfg.Count > 0 && r.n >= r.cfg.Count {
		return true
	}
	if r.cfg.Follow {
		return false
	}
	for p, end := range r.ends {
		if r.next[p] < end {
			return false
		}
	}
	return true
}

func (r *reader) run(ctx context.Context, cl *kgo.Client) (int64, error) {
	lastProgress := time.Now()
	for !r.done() {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fetches := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return r.n, nil
		}
		for _, fe := range fetches.Errors() {
			if !errors.Is(fe.Err, context.DeadlineExceeded) {
				return r.n, fmt.Errorf("consume %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
			}
		}
		progressed := false
		var err error
		fetches.EachRecord(func(rec *kgo.Record) {
			if err != nil || r.cfg.Count > 0 && r.n >= r.cfg.Count {
				return
			}
			progressed = true
			r.next[rec.Partition] = rec.Offset + 1
			if rec.Attrs.IsControl() || !r.cfg.Follow && rec.Offset >= r.ends[rec.Partition] {
				return
			}
			r.n++
			err = r.fn(Record{Partition: rec.Partition, Offset: rec.Offset, Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp})
		})
		if err != nil {
			return r.n, err
		}
		if progressed {
			lastProgress = time.Now()
		} else if !r.cfg.Follow && time.Since(lastProgress) > r.idleEnd() {
			break
		}
	}
	return r.n, nil
}

// idleEnd is how long a read may go without progress before it ends:
// idleEnd once a fetch returned records, requestTimeout before (the first
// fetch also connects and loads metadata, which a loaded machine can hold
// up for seconds; ending then would read nothing of a full topic).
func (r *reader) idleEnd() time.Duration {
	if len(r.next) == 0 {
		return requestTimeout
	}
	return idleEnd
}

// endOffsets lists the partitions of topic with their end offsets (last
// stable offsets when committed).
func endOffsets(ctx context.Context, base []kgo.Opt, topic string, committed bool) (map[int32]int64, error) {
	cl, err := kgo.NewClient(base...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("read metadata: %w", err)
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	if committed {
		req.IsolationLevel = 1
	}
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = topic
	for _, t := range mresp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("topic %q: %w", topic, err)
		}
		for _, p := range t.Partitions {
			lp := kmsg.NewListOffsetsRequestTopicPartition()
			lp.Partition, lp.Timestamp = p.Partition, -1
			lt.Partitions = append(lt.Partitions, lp)
		}
	}
	if len(lt.Partitions) == 0 {
		return nil, fmt.Errorf("topic %q not found", topic)
	}
	req.Topics = append(req.Topics, lt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("list offsets: %w", err)
	}
	out := map[int32]int64{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("list offsets of %s/%d: %w", topic, p.Partition, err)
			}
			out[p.Partition] = p.Offset
		}
	}
	return out, nil
}

// EndOffsets lists the partitions of topic with their end offsets (the
// last stable offsets when committed): what a read of the topic to its
// current end reads up to.
func EndOffsets(ctx context.Context, brokers []string, topic string, committed bool) (map[int32]int64, error) {
	return endOffsets(ctx, []kgo.Opt{kgo.SeedBrokers(brokers...), kgo.ClientID("flinkgo-dev-consume"), kgo.RetryTimeout(requestTimeout)}, topic, committed)
}
