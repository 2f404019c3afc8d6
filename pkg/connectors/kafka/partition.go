package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
)

// topicPartition names one partition of a topic.
type topicPartition struct {
	Topic     string
	Partition int
}

// String is the form used in logs, errors and savepoint inspect: "topic/3".
func (tp topicPartition) String() string { return tp.Topic + "/" + strconv.Itoa(tp.Partition) }

// owner returns the source subtask (of parallelism) that reads tp. It is
// Flink's KafkaSourceEnumerator.getSplitOwner: the partitions of one topic
// are dealt round-robin starting at a subtask chosen by the topic's Java
// hash code, so several topics spread evenly. It depends only on the topic,
// the partition and the parallelism, which lets every subtask pick its own
// partitions (at start, on discovery and on restore) without coordination.
func owner(tp topicPartition, parallelism int) int {
	start := int((javaHashCode(tp.Topic)*31)&0x7FFFFFFF) % parallelism
	return (start + tp.Partition) % parallelism
}

// javaHashCode is Java's String.hashCode (over UTF-16 code units, with
// 32-bit wrap-around).
func javaHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r1, r2 := utf16.EncodeRune(r); r1 != '\uFFFD' {
			h = 31*h + int32(r1)
			h = 31*h + int32(r2)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// noStop is position.stop of an unbounded partition.
const noStop = -1

// position is the checkpointed state of one partition: the offset of the
// next record to emit and, for a bounded source, the offset to stop before
// (fixed when the partition was first assigned, so a restarted bounded job
// still ends where it would have).
type position struct {
	tp   topicPartition
	next int64
	stop int64
}

// partitionsList names the operator state list of positions (Union: every
// subtask receives all positions on restore and keeps those it owns).
const partitionsList = "partitions"

// positionVersion is the first byte of an encoded position.
const positionVersion = 1

func (p position) encode() []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen64*4+len(p.tp.Topic))
	b = append(b, positionVersion)
	b = binary.AppendUvarint(b, uint64(len(p.tp.Topic)))
	b = append(b, p.tp.Topic...)
	b = binary.AppendVarint(b, int64(p.tp.Partition))
	b = binary.AppendVarint(b, p.next)
	return binary.AppendVarint(b, p.stop)
}

var errCorruptPosition = errors.New("corrupt kafka source state (partition position)")

func decodePosition(b []byte) (position, error) {
	var p position
	if len(b) == 0 {
		return p, errCorruptPosition
	}
	if b[0] != positionVersion {
		return p, fmt.Errorf("kafka source state has position format version %d, this flinkgo reads version %d (state written by a newer flinkgo?)", b[0], positionVersion)
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return p, errCorruptPosition
	}
	p.tp.Topic, b = string(b[k:k+int(n)]), b[k+int(n):]
	var part int64
	for _, dst := range []*int64{&part, &p.next, &p.stop} {
		v, k := binary.Varint(b)
		if k <= 0 {
			return p, errCorruptPosition
		}
		*dst, b = v, b[k:]
	}
	if len(b) != 0 || part < 0 || part > 1<<31-1 {
		return p, errCorruptPosition
	}
	p.tp.Partition = int(part)
	return p, nil
}
