package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// parityCases run unchanged against the OS (in a temp dir) and MemFS, so
// MemFS behaves like the real thing for the basic operations.
var parityCases = []struct {
	name string
	run  func(t *testing.T, fsys FS, dir string)
}{
	{"create write read stat", func(t *testing.T, fsys FS, dir string) {
		p := filepath.Join(dir, "f")
		writeFile(t, fsys, p, "hello", true)
		require.Equal(t, "hello", readString(t, fsys, p))
		fi, err := fsys.Stat(p)
		require.NoError(t, err)
		require.Equal(t, "f", fi.Name())
		require.EqualValues(t, 5, fi.Size())
		require.False(t, fi.IsDir())
	}},
	{"create truncates existing", func(t *testing.T, fsys FS, dir string) {
		p := filepath.Join(dir, "f")
		writeFile(t, fsys, p, "long content", false)
		writeFile(t, fsys, p, "short", false)
		require.Equal(t, "short", readString(t, fsys, p))
	}},
	{"missing names", func(t *testing.T, fsys FS, dir string) {
		p := filepath.Join(dir, "missing")
		_, err := fsys.Open(p)
		requirePathErr(t, err, fs.ErrNotExist)
		_, err = fsys.OpenReadWrite(p)
		requirePathErr(t, err, fs.ErrNotExist)
		_, err = fsys.Stat(p)
		requirePathErr(t, err, fs.ErrNotExist)
		requirePathErr(t, fsys.Remove(p), fs.ErrNotExist)
		_, err = fsys.ReadDir(p)
		requirePathErr(t, err, fs.ErrNotExist)
		_, err = fsys.Create(filepath.Join(p, "f"))
		requirePathErr(t, err, fs.ErrNotExist)
		requirePathErr(t, fsys.SyncDir(p), fs.ErrNotExist)
		ok, err := Exists(fsys, p)
		require.NoError(t, err)
		require.False(t, ok)
	}},
	{"open is read-only", func(t *testing.T, fsys FS, dir string) {
		p := filepath.Join(dir, "f")
		writeFile(t, fsys, p, "x", false)
		f, err := fsys.Open(p)
		require.NoError(t, err)
		defer f.Close()
		_, err = f.Write([]byte("y"))
		require.Error(t, err)
		require.Error(t, f.Truncate(0))
	}},
	{"open read-write at offset 0", func(t *testing.T, fsys FS, dir string) {
		p := filepath.Join(dir, "f")
		writeFile(t, fsys, p, "abcdef", false)
		f, err := fsys.OpenReadWrite(p)
		require.NoError(t, err)
		_, err = f.Write([]byte("XY"))
		require.NoError(t, err)
		off, err := f.Seek(0, io.SeekEnd)
		require.NoError(t, err)
		require.EqualValues(t, 6, off)
		_, err = f.Write([]byte("!"))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.Equal(t, "XYcdef!", readString(t, fsys, p))
	}},
	{"seek and read at", func(t *testing.T, fsys FS, dir string) {
		p := filepath.Join(dir, "f")
		writeFile(t, fsys, p, "0123456789", false)
		f, err := fsys.Open(p)
		require.NoError(t, err)
		defer f.Close()
		buf := make([]byte, 4)
		n, err := f.ReadAt(buf, 8)
		require.Equal(t, 2, n)
		require.ErrorIs(t, err, io.EOF)
		n, err = f.ReadAt(buf, 2)
		require.NoError(t, err)
		require.Equal(t, "2345", string(buf[:n]))
		_, err = f.Seek(3, io.SeekStart)
		require.NoError(t, err)
		_, err = f.Seek(2, io.SeekCurrent)
		require.NoError(t, err)
		rest, err := io.ReadAll(f)
		require.NoError(t, err)
		require.Equal(t, "56789", string(rest))
		_, err = f.Seek(-1, io.SeekStart)
		require.Error(t, err)
	}},
	{"truncate shrinks and zero-extends", func(t *testing.T, fsys FS, dir string) {
		p := filepath.Join(dir, "f")
		writeFile(t, fsys, p, "abcdef", false)
		f, err := fsys.OpenReadWrite(p)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(2))
		fi, err := f.Stat()
		require.NoError(t, err)
		require.EqualValues(t, 2, fi.Size())
		require.NoError(t, f.Truncate(4))
		require.NoError(t, f.Close())
		require.Equal(t, "ab\x00\x00", readString(t, fsys, p))
	}},
	{"write past end zero-fills", func(t *testing.T, fsys FS, dir string) {
		p := filepath.Join(dir, "f")
		f, err := fsys.Create(p)
		require.NoError(t, err)
		_, err = f.Seek(3, io.SeekStart)
		require.NoError(t, err)
		_, err = f.Write([]byte("x"))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.Equal(t, "\x00\x00\x00x", readString(t, fsys, p))
	}},
	{"close twice", func(t *testing.T, fsys FS, dir string) {
		f, err := fsys.Create(filepath.Join(dir, "f"))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.ErrorIs(t, f.Close(), os.ErrClosed)
		_, err = f.Write([]byte("x"))
		require.ErrorIs(t, err, os.ErrClosed)
	}},
	{"rename replaces", func(t *testing.T, fsys FS, dir string) {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		writeFile(t, fsys, a, "new", false)
		writeFile(t, fsys, b, "old", false)
		require.NoError(t, fsys.Rename(a, b))
		require.Equal(t, "new", readString(t, fsys, b))
		require.Equal(t, []string{"b"}, names(t, fsys, dir))
	}},
	{"rename errors", func(t *testing.T, fsys FS, dir string) {
		a, d := filepath.Join(dir, "a"), filepath.Join(dir, "d")
		err := fsys.Rename(a, d)
		var le *os.LinkError
		require.ErrorAs(t, err, &le)
		require.ErrorIs(t, err, fs.ErrNotExist)
		writeFile(t, fsys, a, "x", false)
		require.NoError(t, fsys.MkdirAll(filepath.Join(d, "sub"), 0o755))
		require.ErrorIs(t, fsys.Rename(a, d), fs.ErrExist)
		require.ErrorIs(t, fsys.Rename(d, a), syscall.ENOTDIR)
		require.ErrorIs(t, fsys.Rename(d, filepath.Join(d, "sub", "x")), syscall.EINVAL)
	}},
	{"rename same file is a no-op", func(t *testing.T, fsys FS, dir string) {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		writeFile(t, fsys, a, "x", false)
		require.NoError(t, fsys.Link(a, b))
		require.NoError(t, fsys.Rename(a, b))
		require.Equal(t, []string{"a", "b"}, names(t, fsys, dir))
	}},
	{"rename directory with contents", func(t *testing.T, fsys FS, dir string) {
		src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
		require.NoError(t, fsys.MkdirAll(src, 0o755))
		writeFile(t, fsys, filepath.Join(src, "f"), "x", false)
		require.NoError(t, fsys.Rename(src, dst))
		require.Equal(t, "x", readString(t, fsys, filepath.Join(dst, "f")))
		_, err := fsys.Stat(src)
		require.ErrorIs(t, err, fs.ErrNotExist)
	}},
	{"hard link shares the file", func(t *testing.T, fsys FS, dir string) {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		writeFile(t, fsys, a, "one", false)
		require.NoError(t, fsys.Link(a, b))
		f, err := fsys.OpenReadWrite(b)
		require.NoError(t, err)
		_, err = f.Write([]byte("ONE"))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.Equal(t, "ONE", readString(t, fsys, a))
		require.NoError(t, fsys.Remove(a))
		require.Equal(t, "ONE", readString(t, fsys, b))
	}},
	{"link errors", func(t *testing.T, fsys FS, dir string) {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		err := fsys.Link(a, b)
		var le *os.LinkError
		require.ErrorAs(t, err, &le)
		require.ErrorIs(t, err, fs.ErrNotExist)
		writeFile(t, fsys, a, "x", false)
		writeFile(t, fsys, b, "y", false)
		require.ErrorIs(t, fsys.Link(a, b), fs.ErrExist)
	}},
	{"remove", func(t *testing.T, fsys FS, dir string) {
		d := filepath.Join(dir, "d")
		require.NoError(t, fsys.MkdirAll(d, 0o755))
		writeFile(t, fsys, filepath.Join(d, "f"), "x", false)
		requirePathErr(t, fsys.Remove(d), syscall.ENOTEMPTY)
		require.NoError(t, fsys.Remove(filepath.Join(d, "f")))
		require.NoError(t, fsys.Remove(d))
		require.Empty(t, names(t, fsys, dir))
		writeFile(t, fsys, d, "x", false)
		requirePathErr(t, fsys.RemoveAll(filepath.Join(d, "x")), syscall.ENOTDIR)
	}},
	{"remove all", func(t *testing.T, fsys FS, dir string) {
		d := filepath.Join(dir, "d")
		require.NoError(t, fsys.MkdirAll(filepath.Join(d, "x", "y"), 0o755))
		writeFile(t, fsys, filepath.Join(d, "x", "f"), "x", false)
		require.NoError(t, fsys.RemoveAll(d))
		require.Empty(t, names(t, fsys, dir))
		require.NoError(t, fsys.RemoveAll(d), "missing is not an error")
	}},
	{"mkdir all", func(t *testing.T, fsys FS, dir string) {
		d := filepath.Join(dir, "a", "b", "c")
		require.NoError(t, fsys.MkdirAll(d, 0o755))
		require.NoError(t, fsys.MkdirAll(d, 0o755), "idempotent")
		fi, err := fsys.Stat(d)
		require.NoError(t, err)
		require.True(t, fi.IsDir())
		f := filepath.Join(dir, "file")
		writeFile(t, fsys, f, "x", false)
		requirePathErr(t, fsys.MkdirAll(filepath.Join(f, "sub"), 0o755), syscall.ENOTDIR)
	}},
	{"read dir sorted", func(t *testing.T, fsys FS, dir string) {
		for _, n := range []string{"c", "a", "b"} {
			writeFile(t, fsys, filepath.Join(dir, n), n, false)
		}
		require.NoError(t, fsys.MkdirAll(filepath.Join(dir, "0dir"), 0o755))
		entries, err := fsys.ReadDir(dir)
		require.NoError(t, err)
		require.Equal(t, []string{"0dir", "a", "b", "c"}, names(t, fsys, dir))
		require.True(t, entries[0].IsDir())
		require.False(t, entries[1].IsDir())
		_, err = fsys.ReadDir(filepath.Join(dir, "a"))
		require.Error(t, err)
	}},
	{"create on a directory", func(t *testing.T, fsys FS, dir string) {
		d := filepath.Join(dir, "d")
		require.NoError(t, fsys.MkdirAll(d, 0o755))
		_, err := fsys.Create(d)
		requirePathErr(t, err, syscall.EISDIR)
		_, err = fsys.OpenReadWrite(d)
		requirePathErr(t, err, syscall.EISDIR)
	}},
	{"sync dir", func(t *testing.T, fsys FS, dir string) {
		writeFile(t, fsys, filepath.Join(dir, "f"), "x", true)
		require.NoError(t, fsys.SyncDir(dir))
		d, err := fsys.Open(dir)
		require.NoError(t, err)
		require.NoError(t, d.Sync(), "a directory handle syncs too")
		require.NoError(t, d.Close())
	}},
	{"write file atomic", func(t *testing.T, fsys FS, dir string) {
		p := filepath.Join(dir, "meta")
		require.NoError(t, WriteFileAtomic(fsys, p, []byte("v1")))
		require.NoError(t, WriteFileAtomic(fsys, p, []byte("v2")))
		require.Equal(t, "v2", readString(t, fsys, p))
		require.Equal(t, []string{"meta"}, names(t, fsys, dir), "no temp file left")
		ok, err := Exists(fsys, p)
		require.NoError(t, err)
		require.True(t, ok)
		err = WriteFileAtomic(fsys, filepath.Join(dir, "missing", "m"), []byte("x"))
		require.ErrorIs(t, err, fs.ErrNotExist)
	}},
}

func requirePathErr(t *testing.T, err, target error) {
	t.Helper()
	var pe *os.PathError
	require.True(t, errors.As(err, &pe), "want *os.PathError, got %T: %v", err, err)
	require.ErrorIs(t, err, target)
}

func TestParity(t *testing.T) {
	impls := []struct {
		name  string
		setup func(t *testing.T) (FS, string)
	}{
		{"os", func(t *testing.T) (FS, string) { return Default, t.TempDir() }},
		{"os confined", func(t *testing.T) (FS, string) {
			root := t.TempDir()
			return Confined([]string{root}), filepath.Join(root, "dir")
		}},
		{"mem", func(t *testing.T) (FS, string) {
			m := NewMem()
			require.NoError(t, m.MkdirAll("/work/dir", 0o755))
			return m, "/work/dir"
		}},
		{"mem relative", func(t *testing.T) (FS, string) { return NewMem(), "rel" }},
	}
	for _, impl := range impls {
		for _, tc := range parityCases {
			t.Run(impl.name+"/"+tc.name, func(t *testing.T) {
				fsys, dir := impl.setup(t)
				require.NoError(t, fsys.MkdirAll(dir, 0o755))
				tc.run(t, fsys, dir)
			})
		}
	}
}
