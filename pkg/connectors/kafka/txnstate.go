package kafka

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/flinkgo/flinkgo/pkg/state"
)

// committable is a pre-committed transaction: flushed at barrier
// Checkpoint, still open on the broker, to be committed when that
// checkpoint (or a later one) completes. It is everything an instance
// other than the one that wrote it needs to finish it: the transactional
// id with the producer id and epoch the records were written under (an
// EndTxn naming them commits exactly this transaction), and where its
// records start in each partition, to read its outcome back from the log
// when the broker no longer knows it.
type committable struct {
	Checkpoint int64
	ID         string
	ProducerID int64
	Epoch      int16
	Records    int64
	Topic      string
	First      []partitionOffset // by partition
}

// partitionOffset is the offset of a transaction's first record in a
// partition.
type partitionOffset struct {
	Partition int32
	Offset    int64
}

func (c committable) String() string {
	return fmt.Sprintf("transaction %s (producer %d, epoch %d, %d records) of checkpoint %d", c.ID, c.ProducerID, c.Epoch, c.Records, c.Checkpoint)
}

// poolEntry is one sink subtask's snapshot: which transactional ids it
// may have used (its pool: Prefix-Subtask-0 … Prefix-Subtask-(Size-1)) and
// the transactions it pre-committed and has not committed yet. The list
// is Union-distributed: on restore every subtask sees every entry and
// takes over those of old subtasks s with s % parallelism == its index.
type poolEntry struct {
	Prefix  string
	Subtask int
	Size    int
	Pending []committable
}

// txnID names id k of a subtask's pool.
func txnID(prefix string, subtask, k int) string {
	return prefix + "-" + strconv.Itoa(subtask) + "-" + strconv.Itoa(k)
}

// ids lists the pool's transactional ids.
func (e poolEntry) ids() []string {
	out := make([]string, e.Size)
	for k := range out {
		out[k] = txnID(e.Prefix, e.Subtask, k)
	}
	return out
}

// transactionsList names the sink's operator state list of pool entries.
const transactionsList = "transactions"

// poolEntryVersion is the format version of an encoded pool entry
// (state.Encoder; version 1 was written by hand before, byte for byte the
// same).
const poolEntryVersion = 1

// maxPoolSize bounds a pool (and a decoded one).
const maxPoolSize = 1000

func (e poolEntry) encode() []byte {
	enc := state.NewEncoder(poolEntryVersion)
	enc.String(e.Prefix)
	enc.Uvarint(uint64(e.Subtask))
	enc.Uvarint(uint64(e.Size))
	enc.Uvarint(uint64(len(e.Pending)))
	for _, c := range e.Pending {
		enc.Varint(c.Checkpoint)
		enc.String(c.ID)
		enc.Varint(c.ProducerID)
		enc.Varint(int64(c.Epoch))
		enc.Varint(c.Records)
		enc.String(c.Topic)
		enc.Uvarint(uint64(len(c.First)))
		for _, f := range c.First {
			enc.Varint(int64(f.Partition))
			enc.Varint(f.Offset)
		}
	}
	return enc.Encoded()
}

// decodePoolEntry reads an entry written by encode; a damaged one is
// state.ErrCorrupt.
func decodePoolEntry(b []byte) (poolEntry, error) {
	d := state.NewDecoder("kafka sink transactions", b, poolEntryVersion)
	e := poolEntry{Prefix: d.String(), Subtask: int(uvarintAtMost(d, 1<<31-1)), Size: int(uvarintAtMost(d, maxPoolSize))}
	n := uvarintAtMost(d, maxPoolSize)
	for i := uint64(0); i < n && d.Err() == nil; i++ {
		c := committable{Checkpoint: d.Varint(), ID: d.String(), ProducerID: d.Varint(),
			Epoch: int16(d.Int(math.MinInt16, math.MaxInt16)), Records: d.Varint(), Topic: d.String()}
		m := uvarintAtMost(d, 1<<20)
		for j := uint64(0); j < m && d.Err() == nil; j++ {
			c.First = append(c.First, partitionOffset{Partition: int32(d.Int(0, math.MaxInt32)), Offset: d.Varint()})
		}
		e.Pending = append(e.Pending, c)
	}
	if err := d.Finish(); err != nil {
		return poolEntry{}, err
	}
	return e, nil
}

// uvarintAtMost reads a uvarint of at most limit (a count or an index).
func uvarintAtMost(d *state.Decoder, limit uint64) uint64 {
	v := d.Uvarint()
	if d.Err() == nil && v > limit {
		d.Fail("count %d above %d", v, limit)
		return 0
	}
	return v
}

// takeOver returns the entries of old subtasks that subtask (of
// parallelism) takes over: their pools to fence and their pending
// transactions to commit, oldest checkpoint first.
func takeOver(entries []poolEntry, subtask, parallelism int) (pools []poolEntry, pending []committable) {
	for _, e := range entries {
		if e.Subtask%parallelism != subtask {
			continue
		}
		pools = append(pools, e)
		pending = append(pending, e.Pending...)
	}
	slices.SortStableFunc(pending, func(a, b committable) int { return cmp.Compare(a.Checkpoint, b.Checkpoint) })
	return pools, pending
}
