package vfs

import (
	"bytes"
	"maps"
	"slices"
)

// CrashModel says what survives a simulated crash.
type CrashModel int

const (
	// ProcessCrash is a kill -9: everything written to the OS survives.
	ProcessCrash CrashModel = iota
	// PowerLoss keeps only durable state: file contents as of their last
	// Sync, and directory entries (creations, renames, removals, links,
	// subdirectories) as of the last SyncDir of the directory holding them.
	// A file whose entry is durable but which was never synced is empty.
	PowerLoss
)

func (c CrashModel) String() string {
	switch c {
	case ProcessCrash:
		return "ProcessCrash"
	case PowerLoss:
		return "PowerLoss"
	}
	return "CrashModel(?)"
}

// CrashClone returns a new MemFS holding what would be on disk after a crash
// of the given model now; m itself is unchanged. Open files are not carried
// over. It is safe to call while other goroutines use m: the clone sees each
// operation either entirely or not at all.
func (m *MemFS) CrashClone(model CrashModel) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	memo := map[*inode]*inode{}
	switch model {
	case ProcessCrash:
		return &MemFS{root: copyLive(m.root, memo)}
	case PowerLoss:
		return &MemFS{root: copyDurable(m.root, memo)}
	}
	panic("vfs: bug: unknown crash model " + model.String())
}

// copyLive deep-copies n, its live and durable state, sharing copies of
// inodes shared in the original (hard links).
func copyLive(n *inode, memo map[*inode]*inode) *inode {
	if c, ok := memo[n]; ok {
		return c
	}
	c := &inode{dir: n.dir, perm: n.perm, modTime: n.modTime,
		data: bytes.Clone(n.data), synced: bytes.Clone(n.synced)}
	memo[n] = c
	if n.dir {
		c.children = copyEntries(n.children, memo, copyLive)
		c.syncedChildren = copyEntries(n.syncedChildren, memo, copyLive)
	}
	return c
}

// copyDurable copies the durable state of n: synced data and synced
// entries, which become the live state of the copy. A directory reachable
// twice (possible when renames were synced in one directory but not the
// other) is kept only where it is met first, so the copy stays a tree.
func copyDurable(n *inode, memo map[*inode]*inode) *inode {
	if c, ok := memo[n]; ok {
		if n.dir {
			return nil
		}
		return c
	}
	c := &inode{dir: n.dir, perm: n.perm, modTime: n.modTime,
		data: bytes.Clone(n.synced), synced: bytes.Clone(n.synced)}
	memo[n] = c
	if n.dir {
		c.children = copyEntries(n.syncedChildren, memo, copyDurable)
		c.syncedChildren = maps.Clone(c.children)
	}
	return c
}

// copyEntries copies a directory's entries in name order with cp, dropping
// entries cp returns nil for.
func copyEntries(entries map[string]*inode, memo map[*inode]*inode,
	cp func(*inode, map[*inode]*inode) *inode) map[string]*inode {
	out := make(map[string]*inode, len(entries))
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		if c := cp(entries[name], memo); c != nil {
			out[name] = c
		}
	}
	return out
}
