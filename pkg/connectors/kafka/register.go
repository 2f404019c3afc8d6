package kafka

import (
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Definitions returns the operator types of this package, for a
// runtime.Registry.
func Definitions() []runtime.Definition {
	return []runtime.Definition{
		{Type: "kafka", Kind: api.KindSource,
			Doc:       "Kafka source, offsets in checkpoints (replayable): brokers, topic|topics, groupId, startingOffsets, format, bounded, isolationLevel, …",
			Configure: configureSource},
		{Type: "kafka", Kind: api.KindSink,
			Doc:       "Kafka sink, at-least-once (flush on checkpoint) or exactly-once (transactions): brokers, topic, key, deliveryTimeout, deliveryGuarantee, transactionalIdPrefix, transactionTimeout, …",
			Configure: configureSink},
	}
}
