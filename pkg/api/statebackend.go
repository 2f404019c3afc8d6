package api

import (
	"fmt"
	"strings"
)

// State backends (Flink's state.backend.type): where a job's keyed state
// lives while it runs. Checkpoints and savepoints are the same on both
// (docs/state-backends.md).
const (
	// BackendHashMap keeps keyed state in Go maps (the default).
	BackendHashMap = "hashmap"
	// BackendPebble keeps keyed state in a pebble LSM on local disk.
	BackendPebble = "pebble"
)

// StateBackendSpec is a job's stateBackend block.
type StateBackendSpec struct {
	Type string `yaml:"type" json:"type,omitempty"`
	// Incremental asks for incremental checkpoints (pebble only): each
	// checkpoint writes the DB files the previous ones did not
	// (docs/state-backends.md). Unset: the daemon's
	// state.backend.incremental.
	Incremental *bool `yaml:"incremental" json:"incremental,omitempty"`
}

// StateBackendType reads a backend name in any of Flink's spellings
// (hashmap, HASHMAP, heap, pebble) and returns ours, or an error that says
// what to write instead: rocksdb is Flink's disk backend, flinkgo's is
// pebble.
func StateBackendType(v string) (string, error) {
	norm := strings.ToLower(strings.TrimSpace(v))
	switch norm {
	case BackendHashMap, "heap", "memory", "filesystem":
		return BackendHashMap, nil
	case BackendPebble:
		return BackendPebble, nil
	case "rocksdb", "embedded-rocksdb", "embeddedrocksdb":
		return "", fmt.Errorf("%q is not available: flinkgo's on-disk state backend is pebble (an LSM like RocksDB, in Go); write type: pebble", v)
	}
	return "", fmt.Errorf("unknown state backend %q: use hashmap (state in memory, the default) or pebble (state on local disk)", v)
}

// IncrementalOnHeap is the error for incremental checkpoints asked of a
// job whose keyed state is on the heap.
const IncrementalOnHeap = "incremental checkpoints are pebble's (the DB's files are what a checkpoint shares with the previous one); the hashmap backend writes its whole state every checkpoint: set type: pebble, or remove incremental"

// validateStateBackendSpec records every problem of s (at path) on d and
// puts its type in our spelling.
func validateStateBackendSpec(d *Decoder, path string, s *StateBackendSpec) {
	if s.Type != "" {
		t, err := StateBackendType(s.Type)
		if err != nil {
			d.ErrorAt(joinPath(path, "type"), "%v", err)
		} else {
			s.Type = t
		}
	}
	if s.Incremental != nil && *s.Incremental && s.Type == BackendHashMap {
		d.ErrorAt(joinPath(path, "incremental"), "%s", IncrementalOnHeap)
	}
}
