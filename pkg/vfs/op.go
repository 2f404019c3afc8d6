package vfs

import "fmt"

// OpKind names one filesystem operation, as seen by the wrappers in this
// package (WithFaults, WithLog, Count, CrashAt).
type OpKind int

const (
	OpCreate OpKind = iota
	OpOpen
	OpOpenReadWrite
	OpWrite // File.Write
	OpRead  // File.Read and File.ReadAt
	OpSync  // File.Sync
	OpTruncate
	OpRename
	OpLink
	OpRemove
	OpRemoveAll
	OpMkdirAll
	OpStat // FS.Stat and File.Stat
	OpReadDir
	OpSyncDir
	OpClose // File.Close
)

var opKindNames = [...]string{
	OpCreate:        "Create",
	OpOpen:          "Open",
	OpOpenReadWrite: "OpenReadWrite",
	OpWrite:         "Write",
	OpRead:          "Read",
	OpSync:          "Sync",
	OpTruncate:      "Truncate",
	OpRename:        "Rename",
	OpLink:          "Link",
	OpRemove:        "Remove",
	OpRemoveAll:     "RemoveAll",
	OpMkdirAll:      "MkdirAll",
	OpStat:          "Stat",
	OpReadDir:       "ReadDir",
	OpSyncDir:       "SyncDir",
	OpClose:         "Close",
}

func (k OpKind) String() string {
	if k >= 0 && int(k) < len(opKindNames) {
		return opKindNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// Op is one operation about to run. Path is the file or directory it acts
// on (for File methods, the name the file was opened with); Path2 is the
// target of a Rename or Link.
type Op struct {
	Kind  OpKind
	Path  string
	Path2 string
}

func (op Op) String() string {
	if op.Path2 != "" {
		return fmt.Sprintf("%s %s -> %s", op.Kind, op.Path, op.Path2)
	}
	return fmt.Sprintf("%s %s", op.Kind, op.Path)
}

// IsMutating reports whether op can change what is on disk, live or
// durable: Create, OpenReadWrite, Write, Sync, Truncate, Rename, Link,
// Remove, RemoveAll, MkdirAll and SyncDir. Crash sweeps crash at each of
// these.
func IsMutating(op Op) bool {
	switch op.Kind {
	case OpCreate, OpOpenReadWrite, OpWrite, OpSync, OpTruncate, OpRename,
		OpLink, OpRemove, OpRemoveAll, OpMkdirAll, OpSyncDir:
		return true
	}
	return false
}
