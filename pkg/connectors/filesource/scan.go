package filesource

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// listed is a file a listing found.
type listed struct {
	rel  string // relative to the root, '/'-separated
	size int64
	mod  time.Time
}

// hidden reports whether a name is skipped: writers give files in
// progress such names until they rename them (Flink's file sink and ours
// start them with '.', Hadoop and Spark with '_').
func hidden(name string) bool { return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") }

// owner is the subtask of parallelism par that reads the file rel.
func owner(rel string, par int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(rel))
	return int(h.Sum32() % uint32(par))
}

// list returns the files below root (root itself when it is a file) that
// subtask of par owns, in path order. A missing root is an error that no
// restart fixes, unless emptyOK: an object store has no empty
// directories, so a monitored prefix without objects yet is empty.
func list(fsys vfs.FS, root string, subtask, par int, emptyOK bool) ([]listed, error) {
	fi, err := fsys.Stat(root)
	if errors.Is(err, fs.ErrNotExist) && emptyOK && vfs.IsObject(root) {
		return nil, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, runtime.SuppressRestarts(fmt.Errorf("path %s does not exist: give the file or directory to read", root))
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		if owner("", par) != subtask {
			return nil, nil
		}
		return []listed{{rel: "", size: fi.Size(), mod: fi.ModTime()}}, nil
	}
	var out []listed
	var walk func(dir, rel string) error
	walk = func(dir, rel string) error {
		entries, err := fsys.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries { // sorted by name, so out is in path order
			if hidden(e.Name()) {
				continue
			}
			r := e.Name()
			if rel != "" {
				r = rel + "/" + e.Name()
			}
			if e.IsDir() {
				if err := walk(vfs.Join(dir, e.Name()), r); err != nil {
					return err
				}
				continue
			}
			if !e.Type().IsRegular() || owner(r, par) != subtask {
				continue
			}
			info, err := e.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed since the listing
			}
			if err != nil {
				return err
			}
			out = append(out, listed{rel: r, size: info.Size(), mod: info.ModTime()})
		}
		return nil
	}
	return out, walk(root, "")
}
