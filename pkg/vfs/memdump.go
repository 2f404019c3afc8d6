package vfs

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// String lists the live files; see Dump.
func (m *MemFS) String() string { return m.Dump() }

// Dump lists every live directory and file with its size and its durable
// (synced) size, one per line, for test failure messages.
func (m *MemFS) Dump() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	dumpTree(&b, "/", m.root)
	return b.String()
}

func dumpTree(b *strings.Builder, p string, n *inode) {
	for _, name := range slices.Sorted(maps.Keys(n.children)) {
		c, cp := n.children[name], path.Join(p, name)
		_, durable := n.syncedChildren[name]
		if c.dir {
			fmt.Fprintf(b, "%s/ durable=%t\n", cp, durable)
			dumpTree(b, cp, c)
			continue
		}
		fmt.Fprintf(b, "%s size=%d synced=%d durable=%t\n", cp, len(c.data), len(c.synced), durable)
	}
}
