// Package state holds operator state (lists of blobs, such as source
// positions and sink committables) and keyed state (values per key,
// partitioned into key groups), and writes and reads their snapshots.
//
// An operator uses the keyed state handles (Value, Map, List, Reducing,
// Sliced, declared through runtime.NewValue and friends), their codecs,
// OperatorState and the item Encoder/Decoder. The engine, and an
// operator's test that snapshots and restores, use KeyedBackend,
// EncodeChunks (or Encode), Decode, RestoreOperatorState and
// KeyedBackend.Restore; the file format itself stays inside the package
// (Snapshot is opaque).
package state

import "fmt"

// KeyGroupRange is the half-open range [Start, End) of key groups a subtask
// owns. Keyed state is stored and redistributed by key group, so a job can
// restore with a different parallelism (as long as max parallelism stays).
type KeyGroupRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// AllKeyGroups is the range of every key group of a job with
// maxParallelism key groups (one subtask owning them all).
func AllKeyGroups(maxParallelism int) KeyGroupRange {
	return KeyGroupRange{Start: 0, End: maxParallelism}
}

// Len is the number of key groups in the range.
func (r KeyGroupRange) Len() int { return r.End - r.Start }

// Contains reports whether kg is in the range.
func (r KeyGroupRange) Contains(kg int) bool { return kg >= r.Start && kg < r.End }

// Overlaps reports whether the two ranges share a key group.
func (r KeyGroupRange) Overlaps(o KeyGroupRange) bool { return r.Start < o.End && o.Start < r.End }

func (r KeyGroupRange) String() string { return fmt.Sprintf("[%d,%d)", r.Start, r.End) }

// RangeForSubtask returns the key groups owned by subtask of parallelism
// subtasks (Flink's KeyGroupRangeAssignment).
func RangeForSubtask(maxParallelism, parallelism, subtask int) KeyGroupRange {
	start := (subtask*maxParallelism + parallelism - 1) / parallelism
	end := ((subtask+1)*maxParallelism + parallelism - 1) / parallelism
	return KeyGroupRange{Start: start, End: end}
}

// SubtaskForKeyGroup returns the subtask that owns kg.
func SubtaskForKeyGroup(maxParallelism, parallelism, kg int) int {
	return kg * parallelism / maxParallelism
}

// KeyGroup returns the key group of key. The hash is fixed across processes
// and versions: it decides where state lives in every snapshot.
func KeyGroup(key []byte, maxParallelism int) int {
	return int(keyHash(key) % uint32(maxParallelism))
}

// keyHash is FNV-1a with a murmur3 finalizer for avalanche.
func keyHash(key []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range key {
		h ^= uint32(c)
		h *= 16777619
	}
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
