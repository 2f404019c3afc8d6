package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnOutcome is how a transaction ended, as its partition's log tells.
type txnOutcome uint8

const (
	outcomeOpen      txnOutcome = iota + 1 // the last stable offset has not passed its first record yet
	outcomeCommitted                       // passed, and not in the partition's aborted transactions
	outcomeAborted                         // passed, and listed as aborted (with or without a marker)
)

func (o txnOutcome) String() string {
	switch o {
	case outcomeOpen:
		return "open"
	case outcomeCommitted:
		return "committed"
	case outcomeAborted:
		return "aborted"
	}
	return fmt.Sprintf("txnOutcome(%d)", o)
}

// errOutcomeUnknown wraps every failure to learn a transaction's outcome:
// the records are gone, the broker cannot be reached within the bound, or
// the transaction stays open. The caller fails (the job fails over and
// the restore asks again); it never guesses.
var errOutcomeUnknown = errors.New("transaction outcome unknown")

// firstSeen is the first record (data or control) a read_committed
// reader gets when it starts at a transaction's first record.
type firstSeen struct {
	Offset   int64
	Producer int64
}

// decideOutcome is the pure rule, which is the readers' own view: a
// read_committed reader started at the transaction's first record gets
// that record first if the transaction committed, and a later one (a
// marker at least) if it was aborted, with or without a marker (kfake's
// crash recovery aborts what was open at a crash without one, so waiting
// for the marker would wait forever); it gets nothing while the
// transaction is open.
func decideOutcome(cm committable, at partitionOffset, got firstSeen) (txnOutcome, error) {
	switch {
	case got.Offset > at.Offset:
		return outcomeAborted, nil
	case got.Producer != cm.ProducerID:
		return 0, fmt.Errorf("%w: %s: the record at %s/%d offset %d belongs to producer %d", errOutcomeUnknown, cm, cm.Topic, at.Partition, at.Offset, got.Producer)
	}
	return outcomeCommitted, nil
}

// outcomeFromLog reads how cm ended from its first partition, with two
// readers at once, the first to tell deciding: a read_committed one
// (decideOutcome: it also tells a transaction aborted without a marker,
// but waits while any transaction open before cm's first record is open,
// another subtask's too) and a read_uncommitted one looking for the
// producer's next marker after the record (one producer's transactions
// follow each other, so that marker ends cm; it is not held up by other
// producers). Until ctx ends; then it reports outcomeOpen.
func (c *franzClient) outcomeFromLog(ctx context.Context, cm committable) (txnOutcome, error) {
	if len(cm.First) == 0 {
		return 0, fmt.Errorf("%w: %s: no record offsets known", errOutcomeUnknown, cm)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		o   txnOutcome
		err error
	}
	answers := make(chan answer, 2)
	for _, committed := range []bool{true, false} {
		go func() {
			o, err := c.readOutcome(ctx, cm, committed)
			answers <- answer{o, err}
		}()
	}
	first := <-answers
	if first.err == nil && first.o == outcomeOpen { // ctx ended for it: the other ends too
		first = <-answers
		return first.o, first.err
	}
	cancel()
	<-answers
	return first.o, first.err
}

// readOutcome is one reader of outcomeFromLog.
func (c *franzClient) readOutcome(ctx context.Context, cm committable, committed bool) (txnOutcome, error) {
	at := cm.First[0]
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(append(c.cfg.base(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cm.Topic: {at.Partition: kgo.NewOffset().At(at.Offset)}}),
		kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()), kgo.FetchMaxWait(fetchMaxWait))...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return outcomeOpen, nil
		}
		for _, fe := range fetches.Errors() {
			if errors.Is(fe.Err, kerr.OffsetOutOfRange) {
				return 0, fmt.Errorf("%w: %s: its records are gone from %s/%d (deleted by retention?)", errOutcomeUnknown, cm, cm.Topic, at.Partition)
			}
		}
		var got *firstSeen
		var marker *bool
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Offset < at.Offset {
				return
			}
			if got == nil {
				got = &firstSeen{Offset: r.Offset, Producer: r.ProducerID}
			}
			var key kmsg.ControlRecordKey
			if marker == nil && r.Attrs.IsControl() && r.ProducerID == cm.ProducerID && key.ReadFrom(r.Key) == nil {
				commit := key.Type == kmsg.ControlRecordKeyTypeCommit
				marker = &commit
			}
		})
		switch {
		case committed && got != nil:
			return decideOutcome(cm, at, *got)
		case !committed && got != nil && got.Offset == at.Offset && got.Producer != cm.ProducerID:
			return decideOutcome(cm, at, *got) // the record is not cm's: unknown
		case !committed && marker != nil && *marker:
			return outcomeCommitted, nil
		case !committed && marker != nil:
			return outcomeAborted, nil
		}
	}
}
