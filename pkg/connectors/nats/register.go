package nats

import (
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Definitions returns the operator types of this package, for a
// runtime.Registry.
func Definitions() []runtime.Definition {
	return []runtime.Definition{
		{Type: "nats", Kind: api.KindSource,
			Doc: "NATS JetStream source: url, stream, mode bookmark (replay from a sequence kept in checkpoints: bookmark, deliveryGuarantee, discardOn) " +
				"or queue (durable consumer with acks: durable, queueSemantics, maxBacklog, ackBatchSize, ackTimeout, ackWait); subject, format, onDecodeError",
			Configure: configureSource},
		{Type: "nats", Kind: api.KindSink,
			Doc:       "NATS JetStream sink, at-least-once (publish acks awaited on checkpoint; Nats-Msg-Id drops replays): url, subject|subjectExpr, msgIdPrefix, publishTimeout",
			Configure: configureSink},
	}
}
