package checkpoint

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"time"
)

// _metadata format:
//
//	magic "FGMETA\r\n" | version u16 LE | body length u32 LE | JSON body | crc32c u32 LE
//
// The checksum covers everything before it. JSON keeps the body readable by
// `savepoint inspect` and tools; the frame makes truncation and corruption
// detectable.
const (
	metaMagic = "FGMETA\r\n"
	// MetadataVersion is the format this build writes and reads.
	MetadataVersion = 1
	// MetadataFile is the name of the file that makes a snapshot complete.
	MetadataFile = "_metadata"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxMaxParallelism is the largest number of key groups (api.MaxMaxParallelism).
const maxMaxParallelism = 1 << 15

// Metadata describes a complete checkpoint or savepoint: everything needed
// to restore it, with only relative paths so the directory can be moved.
type Metadata struct {
	JobID           string          `json:"jobId"`
	JobName         string          `json:"jobName"`
	CheckpointID    int64           `json:"checkpointId"`
	Kind            string          `json:"kind"`
	Timestamp       time.Time       `json:"timestamp"`
	DurationMs      int64           `json:"durationMs"`
	SpecFingerprint string          `json:"specFingerprint"`
	Spec            string          `json:"spec"`
	MaxParallelism  int             `json:"maxParallelism"`
	Operators       []OperatorState `json:"operators"`
	// Drained: a stop --drain wrote it, after the end of input fired
	// every window and timer: a restore would fire them again (refused
	// unless the user asks for it).
	Drained bool           `json:"drained,omitempty"`
	Extra   map[string]any `json:"extra,omitempty"`
}

// OperatorState is one operator's part of a snapshot.
type OperatorState struct {
	UID         string   `json:"uid"`
	Type        string   `json:"type"`
	Parallelism int      `json:"parallelism"`
	Subtasks    []Handle `json:"subtasks"`
	// State is what the operator's state means, as the job that wrote the
	// snapshot configured it (nil in snapshots of a flinkgo before it was
	// recorded: then it cannot be checked from the snapshot alone).
	State *StateRecord `json:"state,omitempty"`
}

// StateRecord is an operator's runtime.StateMeaning as a snapshot records
// it: its state schema version and the values its state depends on.
type StateRecord struct {
	Version int               `json:"version"`
	Meaning map[string]string `json:"meaning,omitempty"`
}

// Size is the total size of the operator's state files (an incremental
// checkpoint's DB files included, shared ones too).
func (o *OperatorState) Size() int64 {
	var n int64
	for _, h := range o.Subtasks {
		n += h.Size
		if h.DB != nil {
			n += h.DB.Size()
		}
	}
	return n
}

// Keys is the total number of keys in the operator's keyed state.
func (o *OperatorState) Keys() int64 {
	var n int64
	for _, h := range o.Subtasks {
		n += h.Keys
	}
	return n
}

// TimerKeys is the total number of keys with timers.
func (o *OperatorState) TimerKeys() int64 {
	var n int64
	for _, h := range o.Subtasks {
		n += h.TimerKeys
	}
	return n
}

// HasState reports whether any subtask recorded operator or keyed state
// (an operator without state can be removed or retyped freely, as in Flink
// where it does not appear in the savepoint at all).
func (o *OperatorState) HasState() bool {
	for _, h := range o.Subtasks {
		if h.Keys > 0 || h.TimerKeys > 0 || len(h.Lists) > 0 {
			return true
		}
	}
	return false
}

// Size is the total size of all state files.
func (m *Metadata) Size() int64 {
	var n int64
	for i := range m.Operators {
		n += m.Operators[i].Size()
	}
	return n
}

// Operator returns the state of uid, or nil.
func (m *Metadata) Operator(uid string) *OperatorState {
	for i := range m.Operators {
		if m.Operators[i].UID == uid {
			return &m.Operators[i]
		}
	}
	return nil
}

// EncodeMetadata frames m.
func EncodeMetadata(m *Metadata) ([]byte, error) {
	body, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(metaMagic)+10+len(body))
	out = append(out, metaMagic...)
	out = binary.LittleEndian.AppendUint16(out, MetadataVersion)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(body)))
	out = append(out, body...)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli)), nil
}

// DecodeMetadata parses and verifies a _metadata file. Errors say what is
// wrong and what likely caused it.
func DecodeMetadata(data []byte) (*Metadata, error) {
	const head = len(metaMagic) + 2 + 4
	if len(data) < len(metaMagic) && string(data) == metaMagic[:len(data)] {
		return nil, fmt.Errorf("_metadata is empty or truncated (%d bytes): the snapshot was not completely written", len(data))
	}
	if len(data) < len(metaMagic) || string(data[:len(metaMagic)]) != metaMagic {
		return nil, fmt.Errorf("not a flinkgo _metadata file (bad magic): is this path a flinkgo savepoint or checkpoint?")
	}
	if len(data) < head+4 {
		return nil, fmt.Errorf("_metadata is truncated (%d bytes): the snapshot was not completely written", len(data))
	}
	if v := binary.LittleEndian.Uint16(data[len(metaMagic):]); v != MetadataVersion {
		return nil, fmt.Errorf("_metadata format version %d is not supported by this flinkgo (it reads version %d): the snapshot was written by a different flinkgo release; use the release that wrote it", v, MetadataVersion)
	}
	n := int(binary.LittleEndian.Uint32(data[len(metaMagic)+2:]))
	if len(data) != head+n+4 {
		return nil, fmt.Errorf("_metadata is truncated or has trailing bytes (%d bytes, expected %d): the snapshot was not completely written or was modified", len(data), head+n+4)
	}
	if crc32.Checksum(data[:head+n], castagnoli) != binary.LittleEndian.Uint32(data[head+n:]) {
		return nil, fmt.Errorf("_metadata checksum mismatch: the file is corrupt")
	}
	m := &Metadata{}
	if err := json.Unmarshal(data[head:head+n], m); err != nil {
		return nil, fmt.Errorf("_metadata body is malformed: %w", err)
	}
	if m.MaxParallelism < 1 || m.MaxParallelism > maxMaxParallelism {
		return nil, fmt.Errorf("_metadata is malformed: maxParallelism %d", m.MaxParallelism)
	}
	// Restore sizes slices by parallelism: a bad value must be an error here,
	// not a panic or a huge allocation there.
	for _, op := range m.Operators {
		if op.Parallelism < 1 || op.Parallelism > m.MaxParallelism {
			return nil, fmt.Errorf("_metadata is malformed: operator %q has parallelism %d (maxParallelism %d)", op.UID, op.Parallelism, m.MaxParallelism)
		}
	}
	return m, nil
}
