package kafka

import (
	"strconv"
	"unicode/utf16"

	"github.com/flinkgo/flinkgo/pkg/state"
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
	e := state.NewEncoder(positionVersion)
	e.String(p.tp.Topic)
	e.Varint(int64(p.tp.Partition))
	e.Varint(p.next)
	e.Varint(p.stop)
	return e.Encoded()
}

func decodePosition(b []byte) (position, error) {
	d := state.NewDecoder("kafka source position", b, positionVersion)
	p := position{tp: topicPartition{Topic: d.String(), Partition: d.Int(0, 1<<31-1)}, next: d.Varint(), stop: d.Varint()}
	return p, d.Finish()
}
