// Package verify is the exactly-once check behind `flinkgo dev verify`: it
// reads the finished output of a file sink and reports whether the sequence
// numbers in it form one contiguous range with every number exactly once.
//
// Only finished files count. Every file or directory whose name starts with
// "." is skipped: the file sink's in-progress and pending part files are
// hidden (".part-0-3.inprogress.abc"), and become visible only when a
// checkpoint commits them. Each line of a finished file is one record: its
// raw value, for the demo a JSON object such as {"idx": 42}.
//
// The check is read-only and streams: values go into a sparse bitmap (a few
// MB for tens of millions of dense values), never a map or a list of them.
package verify

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

const (
	readBufferSize = 1 << 20 // also the longest line checked; longer ones are unparseable
	maxListedGaps  = 20
	maxSamples     = 10
	maxSampleLine  = 80 // bytes of an unparseable line quoted in its sample
)

// Options configures Run.
type Options struct {
	// Path is the sink's output directory, read recursively.
	Path string

	// Field is the JSON field holding the sequence number, e.g. "idx".
	// Empty means each line is the number itself.
	Field string

	// FS, if set, is read instead of os.DirFS(Path); Path then only
	// labels messages. For tests.
	FS fs.FS

	// Store, if set, is the filesystem Path is in (object storage for an
	// s3:// Path); nil: the local one.
	Store vfs.FS
}

// Run reads every finished file under opts.Path and checks its values. It
// returns an error only when the directory or a file cannot be read; problems
// in the data are in the Report.
func Run(opts Options) (*Report, error) {
	fsys, err := opts.open()
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	c := newChecker(opts.Field)
	if c.r.Owner, err = readOwner(fsys); err != nil {
		return nil, fmt.Errorf("verify %s: %w", opts.Path, err)
	}
	err = fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if err := c.countNew(d); err != nil {
			return err
		}
		return c.readFile(fsys, path)
	})
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", opts.Path, err)
	}
	return c.report(), nil
}

// open is the tree to read: FS, or Path in Store or on the local disk.
func (o Options) open() (fs.FS, error) {
	switch {
	case o.FS != nil:
		return o.FS, nil
	case o.Path == "":
		return nil, errors.New("no path")
	case o.Store != nil:
		if err := checkDir(o.Store, o.Path); err != nil {
			return nil, err
		}
		return vfs.IOFS(o.Store, o.Path), nil
	case vfs.IsObject(o.Path):
		return nil, fmt.Errorf("%s is in object storage: pass its store (Options.Store)", o.Path)
	}
	if err := checkDir(vfs.Default, o.Path); err != nil {
		return nil, err
	}
	return os.DirFS(o.Path), nil
}

func checkDir(store vfs.FS, path string) error {
	fi, err := store.Stat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", path)
	}
	return nil
}

// checker accumulates the values of all files.
type checker struct {
	parse  *parser
	values *bitset
	r      Report
}

func newChecker(field string) *checker {
	return &checker{parse: newParser(field), values: newBitset()}
}

func (c *checker) readFile(fsys fs.FS, path string) error {
	f, err := fsys.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	c.r.Files++
	if err := c.readLines(path, bufio.NewReaderSize(f, readBufferSize)); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

func (c *checker) readLines(path string, br *bufio.Reader) error {
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			c.unparseable(path, lineNo, line)
			if err := skipLine(br); err != nil {
				return ignoreEOF(err)
			}
			continue
		case err != nil && len(line) == 0:
			return ignoreEOF(err)
		}
		c.line(path, lineNo, line)
		if err != nil {
			return ignoreEOF(err)
		}
	}
}

func (c *checker) line(path string, lineNo int, line []byte) {
	v, err := c.parse.parse(line)
	if err != nil {
		c.unparseable(path, lineNo, line)
		return
	}
	c.add(v)
}

func (c *checker) add(v int64) {
	if c.r.Records == 0 || v < c.r.First {
		c.r.First = v
	}
	if c.r.Records == 0 || v > c.r.Last {
		c.r.Last = v
	}
	c.r.Records++
	if c.values.add(v) {
		c.r.Duplicates++
		if len(c.r.DuplicateSamples) < maxSamples {
			c.r.DuplicateSamples = append(c.r.DuplicateSamples, v)
		}
	}
}

func (c *checker) unparseable(path string, lineNo int, line []byte) {
	c.r.Unparseable++
	if len(c.r.UnparseableSamples) < maxSamples {
		c.r.UnparseableSamples = append(c.r.UnparseableSamples, sample(path, lineNo, line))
	}
}

// sample names an unparseable line as "path:line: content" with the content
// quoted when it is not plain printable text, and cut short.
func sample(path string, lineNo int, line []byte) string {
	s := strings.TrimRight(string(line), "\r\n")
	cut := len(s) > maxSampleLine
	if cut {
		s = s[:maxSampleLine]
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == '\uFFFD' }) || s == "" {
		s = fmt.Sprintf("%q", s)
	}
	if cut {
		s += "…"
	}
	return fmt.Sprintf("%s:%d: %s", path, lineNo, s)
}

// skipLine discards the rest of an over-long line.
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// report finishes the Report: distinct values and the gaps between runs.
func (c *checker) report() *Report {
	r := c.r
	var prev *Range
	c.values.runs(func(run Range) {
		r.Distinct += run.To - run.From + 1
		if prev != nil {
			r.addGap(Range{From: prev.To + 1, To: run.From - 1})
		}
		prev = &run
	})
	// Empty lists, not null, in -o json.
	r.Gaps = nonNil(r.Gaps)
	r.DuplicateSamples = nonNil(r.DuplicateSamples)
	r.UnparseableSamples = nonNil(r.UnparseableSamples)
	return &r
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
