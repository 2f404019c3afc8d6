package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// outcomeFromLog reads how a transaction ended from the topic itself: the
// first control record (commit or abort marker) its producer wrote into a
// partition after the transaction's first record there ends that
// transaction, since one producer's transactions follow each other. It is
// asked only when the coordinator cannot tell (the id has moved on to a
// newer epoch since). Records gone to retention, or a marker that does
// not come before ctx ends, leave the outcome unknown: an error.
func (c *franzClient) outcomeFromLog(ctx context.Context, cm committable) (bool, error) {
	if len(cm.First) == 0 {
		return false, fmt.Errorf("%s: no record offsets known, the outcome cannot be read from the log", cm)
	}
	at := cm.First[0]
	cl, err := kgo.NewClient(append(c.cfg.base(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cm.Topic: {at.Partition: kgo.NewOffset().At(at.Offset)}}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()), kgo.FetchMaxWait(fetchMaxWait))...)
	if err != nil {
		return false, err
	}
	defer cl.Close()
	where := fmt.Sprintf("%s/%d from offset %d", cm.Topic, at.Partition, at.Offset)
	for {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("%s: no commit or abort marker of producer %d found in %s: %w", cm, cm.ProducerID, where, err)
		}
		for _, fe := range fetches.Errors() {
			if errors.Is(fe.Err, kerr.OffsetOutOfRange) {
				return false, fmt.Errorf("%s: its records are gone from %s (deleted by retention?), so whether it committed cannot be told", cm, where)
			}
			return false, fmt.Errorf("%s: read %s: %w", cm, where, fe.Err)
		}
		var decided, committed bool
		var bad error
		fetches.EachRecord(func(r *kgo.Record) {
			switch {
			case decided || bad != nil || r.Offset < at.Offset:
			case r.Offset == at.Offset && r.ProducerID != cm.ProducerID:
				bad = fmt.Errorf("%s: the record at %s/%d offset %d belongs to producer %d, so the log cannot tell this transaction's outcome", cm, cm.Topic, at.Partition, at.Offset, r.ProducerID)
			case r.Attrs.IsControl() && r.ProducerID == cm.ProducerID:
				var key kmsg.ControlRecordKey
				if key.ReadFrom(r.Key) == nil {
					decided, committed = true, key.Type == kmsg.ControlRecordKeyTypeCommit
				}
			}
		})
		if bad != nil || decided {
			return committed, bad
		}
	}
}
