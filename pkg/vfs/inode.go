package vfs

import (
	"bytes"
	"maps"
	"os"
	"time"
)

// inode is one file or directory of a MemFS. Directory entries point at
// inodes, so hard links share one inode and a rename moves an entry, not
// the data. Each inode keeps two states: the live one that reads see and
// the durable one that survives a power loss (see CrashClone).
type inode struct {
	dir     bool
	perm    os.FileMode
	modTime time.Time

	data   []byte // live content (files)
	synced []byte // content as of the last File.Sync (files)

	children       map[string]*inode // live entries (directories)
	syncedChildren map[string]*inode // entries as of the last SyncDir (directories)
}

func newFileInode(perm os.FileMode) *inode {
	return &inode{perm: perm, modTime: time.Now()}
}

func newDirInode(perm os.FileMode) *inode {
	return &inode{
		dir:            true,
		perm:           perm,
		modTime:        time.Now(),
		children:       map[string]*inode{},
		syncedChildren: map[string]*inode{},
	}
}

func (n *inode) touch() { n.modTime = time.Now() }

// syncData makes the live content durable (fsync of a file).
func (n *inode) syncData() { n.synced = bytes.Clone(n.data) }

// syncEntries makes the live entries durable (fsync of a directory).
func (n *inode) syncEntries() { n.syncedChildren = maps.Clone(n.children) }

// writeAt writes p at off, extending the file with zeros if off is past
// the end.
func (n *inode) writeAt(p []byte, off int64) {
	if end := off + int64(len(p)); end > int64(len(n.data)) {
		n.resize(end)
	}
	copy(n.data[off:], p)
	n.touch()
}

// resize truncates or zero-extends the live content.
func (n *inode) resize(size int64) {
	if size <= int64(len(n.data)) {
		n.data = n.data[:size:size] // later appends must not reuse the tail
	} else {
		n.data = append(n.data, make([]byte, size-int64(len(n.data)))...)
	}
	n.touch()
}

func (n *inode) info(name string) os.FileInfo {
	fi := memFileInfo{name: name, size: int64(len(n.data)), mode: n.perm, modTime: n.modTime}
	if n.dir {
		fi.mode |= os.ModeDir
		fi.size = 0
	}
	return fi
}

// memFileInfo is the os.FileInfo of a MemFS inode.
type memFileInfo struct {
	name    string
	size    int64
	mode    os.FileMode
	modTime time.Time
}

func (fi memFileInfo) Name() string       { return fi.name }
func (fi memFileInfo) Size() int64        { return fi.size }
func (fi memFileInfo) Mode() os.FileMode  { return fi.mode }
func (fi memFileInfo) ModTime() time.Time { return fi.modTime }
func (fi memFileInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi memFileInfo) Sys() any           { return nil }
