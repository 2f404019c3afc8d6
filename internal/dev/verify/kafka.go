package verify

import (
	"context"
	"fmt"

	"github.com/flinkgo/flinkgo/internal/dev/consume"
)

// KafkaOptions configures Kafka.
type KafkaOptions struct {
	Brokers []string
	Topic   string
	// Field is the JSON field holding the sequence number ("" : the value
	// is the number).
	Field string
}

// Kafka checks the committed records of a topic as Run checks a file
// sink's finished files: every record's value is one line. It reads with
// isolation level read_committed (records of aborted and open transactions
// are not output), every partition from its start to its last stable
// offset at the time of the call. It returns an error only when the topic
// cannot be read.
func Kafka(ctx context.Context, opts KafkaOptions) (*Report, error) {
	c := newChecker(opts.Field)
	parts := map[int32]bool{}
	_, err := consume.Kafka(ctx, consume.KafkaConfig{Brokers: opts.Brokers, Topic: opts.Topic, ReadCommitted: true},
		func(r consume.Record) error {
			parts[r.Partition] = true
			c.line(fmt.Sprintf("%s/%d offset", opts.Topic, r.Partition), int(r.Offset), r.Value)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	rep := c.report()
	rep.Partitions = len(parts)
	return rep, nil
}
