package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/segmentio/kafka-go"
)

// requestTimeout bounds one request to the brokers (metadata, offsets,
// commits, one fetch beyond its long poll).
const requestTimeout = 10 * time.Second

// clientID names flinkgo in the brokers' logs and quotas.
const clientID = "flinkgo"

// cluster sends the source's metadata, offset and commit requests. It owns
// its transport (kafka-go's default one keeps pooled connections and their
// goroutines alive): close releases them. Safe for concurrent use.
type cluster struct {
	brokers []string
	tr      *kafka.Transport
	cl      *kafka.Client
	// isolation of the end offsets listed (read_committed: the last
	// stable offset, where a read_committed reader stops)
	isolation kafka.IsolationLevel
}

// newCluster: kafka-go's transport answers metadata requests from a cache
// it refreshes every metadataTTL (at a random point within, 6s if zero), so
// partition discovery sees a new partition after at most twice that.
func newCluster(brokers []string, metadataTTL time.Duration) *cluster {
	tr := &kafka.Transport{ClientID: clientID, DialTimeout: requestTimeout, MetadataTTL: metadataTTL}
	return &cluster{brokers: brokers, tr: tr,
		cl: &kafka.Client{Addr: kafka.TCP(brokers...), Transport: tr, Timeout: requestTimeout}}
}

func (c *cluster) close() { c.tr.CloseIdleConnections() }

// partitions lists the partitions of topics, sorted. A topic that does not
// exist is an error.
func (c *cluster) partitions(ctx context.Context, topics []string) ([]topicPartition, error) {
	resp, err := c.cl.Metadata(ctx, &kafka.MetadataRequest{Topics: topics})
	if err != nil {
		return nil, fmt.Errorf("read metadata of topics %v from brokers %v: %w", topics, c.brokers, err)
	}
	found := map[string]bool{}
	var out []topicPartition
	for _, t := range resp.Topics {
		if t.Error != nil {
			if errors.Is(t.Error, kafka.UnknownTopicOrPartition) {
				return nil, topicMissing(t.Name, c.brokers)
			}
			return nil, fmt.Errorf("read metadata of topic %q: %w", t.Name, t.Error)
		}
		found[t.Name] = true
		for _, p := range t.Partitions {
			out = append(out, topicPartition{Topic: t.Name, Partition: p.ID})
		}
	}
	for _, t := range topics {
		if !found[t] {
			return nil, topicMissing(t, c.brokers)
		}
	}
	sortPartitions(out)
	return out, nil
}

func sortPartitions(tps []topicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
}

// offsetRange is a partition's log: offsets first (log start) to last (end,
// the offset the next record will get).
type offsetRange struct{ first, last int64 }

// ranges returns the log start and end offsets of tps.
func (c *cluster) ranges(ctx context.Context, tps []topicPartition) (map[topicPartition]offsetRange, error) {
	req := map[string][]kafka.OffsetRequest{}
	for _, tp := range tps {
		req[tp.Topic] = append(req[tp.Topic], kafka.FirstOffsetOf(tp.Partition), kafka.LastOffsetOf(tp.Partition))
	}
	out := map[topicPartition]offsetRange{}
	err := c.listOffsets(ctx, req, len(tps), func(tp topicPartition, po kafka.PartitionOffsets) {
		out[tp] = offsetRange{first: po.FirstOffset, last: po.LastOffset}
	})
	return out, err
}

// offsetsForTime returns, per partition, the offset of the first record
// with a timestamp at or after t, or -1 when there is none.
func (c *cluster) offsetsForTime(ctx context.Context, tps []topicPartition, t time.Time) (map[topicPartition]int64, error) {
	req := map[string][]kafka.OffsetRequest{}
	for _, tp := range tps {
		req[tp.Topic] = append(req[tp.Topic], kafka.TimeOffsetOf(tp.Partition, t))
	}
	out := map[topicPartition]int64{}
	err := c.listOffsets(ctx, req, len(tps), func(tp topicPartition, po kafka.PartitionOffsets) {
		out[tp] = -1
		for off := range po.Offsets {
			out[tp] = off
		}
	})
	return out, err
}

// listOffsets sends req (for want partitions) and calls each per partition.
func (c *cluster) listOffsets(ctx context.Context, req map[string][]kafka.OffsetRequest, want int, each func(topicPartition, kafka.PartitionOffsets)) error {
	resp, err := c.cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: req, IsolationLevel: c.isolation})
	if err != nil {
		return fmt.Errorf("list offsets: %w", err)
	}
	n := 0
	for topic, parts := range resp.Topics {
		for _, po := range parts {
			tp := topicPartition{Topic: topic, Partition: po.Partition}
			if po.Error != nil {
				return fmt.Errorf("list offsets of %s: %w", tp, po.Error)
			}
			each(tp, po)
			n++
		}
	}
	if n != want {
		return fmt.Errorf("list offsets: answer for %d of %d partitions", n, want)
	}
	return nil
}

// committed returns the offsets committed by group for tps; a partition
// without a commit is absent.
func (c *cluster) committed(ctx context.Context, group string, tps []topicPartition) (map[topicPartition]int64, error) {
	req := map[string][]int{}
	for _, tp := range tps {
		req[tp.Topic] = append(req[tp.Topic], tp.Partition)
	}
	resp, err := c.cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: req})
	if err != nil {
		return nil, fmt.Errorf("fetch offsets committed by group %q: %w", group, err)
	}
	out := map[topicPartition]int64{}
	if errors.Is(resp.Error, kafka.GroupIdNotFound) {
		return out, nil // a group that never committed (kfake answers so; Kafka answers -1)
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("fetch offsets committed by group %q: %w", group, resp.Error)
	}
	for topic, parts := range resp.Topics {
		for _, p := range parts {
			tp := topicPartition{Topic: topic, Partition: p.Partition}
			if p.Error != nil {
				return nil, fmt.Errorf("fetch offset committed by group %q for %s: %w", group, tp, p.Error)
			}
			if p.CommittedOffset >= 0 {
				out[tp] = p.CommittedOffset
			}
		}
	}
	return out, nil
}

// commit stores offsets for group without joining it (generation -1), as
// Flink's KafkaSource does for monitoring.
func (c *cluster) commit(ctx context.Context, group string, offsets []position) error {
	req := map[string][]kafka.OffsetCommit{}
	for _, p := range offsets {
		req[p.tp.Topic] = append(req[p.tp.Topic], kafka.OffsetCommit{Partition: p.tp.Partition, Offset: p.next})
	}
	resp, err := c.cl.OffsetCommit(ctx, &kafka.OffsetCommitRequest{GroupID: group, GenerationID: -1, Topics: req})
	if err != nil {
		return fmt.Errorf("commit offsets for group %q: %w", group, err)
	}
	var errs []error
	for topic, parts := range resp.Topics {
		for _, p := range parts {
			if p.Error != nil {
				errs = append(errs, fmt.Errorf("commit offset of %s/%d for group %q: %w", topic, p.Partition, group, p.Error))
			}
		}
	}
	return errors.Join(errs...)
}
