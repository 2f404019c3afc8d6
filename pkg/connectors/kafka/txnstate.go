package kafka

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
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

// poolEntryVersion is the first byte of an encoded pool entry.
const poolEntryVersion = 1

// maxPoolSize bounds a pool (and a decoded one).
const maxPoolSize = 1000

func (e poolEntry) encode() []byte {
	b := []byte{poolEntryVersion}
	b = appendString(b, e.Prefix)
	b = binary.AppendUvarint(b, uint64(e.Subtask))
	b = binary.AppendUvarint(b, uint64(e.Size))
	b = binary.AppendUvarint(b, uint64(len(e.Pending)))
	for _, c := range e.Pending {
		b = binary.AppendVarint(b, c.Checkpoint)
		b = appendString(b, c.ID)
		b = binary.AppendVarint(b, c.ProducerID)
		b = binary.AppendVarint(b, int64(c.Epoch))
		b = binary.AppendVarint(b, c.Records)
		b = appendString(b, c.Topic)
		b = binary.AppendUvarint(b, uint64(len(c.First)))
		for _, f := range c.First {
			b = binary.AppendVarint(b, int64(f.Partition))
			b = binary.AppendVarint(b, f.Offset)
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errCorruptPool = errors.New("corrupt kafka sink state (transactions)")

// decodePoolEntry reads an entry written by encode.
func decodePoolEntry(b []byte) (poolEntry, error) {
	var e poolEntry
	if len(b) == 0 {
		return e, errCorruptPool
	}
	if b[0] != poolEntryVersion {
		return e, fmt.Errorf("kafka sink state has transactions format version %d, this flinkgo reads version %d (state written by a newer flinkgo?)", b[0], poolEntryVersion)
	}
	d := decoder{b: b[1:]}
	e.Prefix = d.string()
	e.Subtask, e.Size = int(d.uvarint(1<<31)), int(d.uvarint(maxPoolSize))
	n := d.uvarint(maxPoolSize)
	for range n {
		var c committable
		c.Checkpoint = d.varint()
		c.ID = d.string()
		c.ProducerID = d.varint()
		c.Epoch = int16(d.varint())
		c.Records = d.varint()
		c.Topic = d.string()
		for range d.uvarint(1 << 20) {
			c.First = append(c.First, partitionOffset{Partition: int32(d.varint()), Offset: d.varint()})
		}
		e.Pending = append(e.Pending, c)
	}
	if d.err || len(d.b) != 0 {
		return poolEntry{}, errCorruptPool
	}
	return e, nil
}

// decoder reads varints and strings, remembering the first problem.
type decoder struct {
	b   []byte
	err bool
}

func (d *decoder) uvarint(limit uint64) uint64 {
	v, k := binary.Uvarint(d.b)
	if k <= 0 || v > limit {
		d.err, d.b = true, nil
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *decoder) varint() int64 {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		d.err, d.b = true, nil
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint(uint64(len(d.b)))
	if d.err {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
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
