package eocheck

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"path"
	"strings"

	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
)

const (
	maxSamples = 12
	maxRanges  = 8
	maxLine    = 64 << 10 // a longer line is corrupt
)

// Checker accumulates the lines of an output and judges them against an
// Expectation. Feed it with File and Line (or use Expectation.Check for a
// file sink's directory). Not safe for concurrent use.
type Checker struct {
	exp   Expectation
	seen  [][]uint64 // per split: bit i set when position i was seen
	last  map[int]int64
	file  string
	line  int
	files map[string]bool
	r     Report
}

// NewChecker returns a Checker for input e.
func (e Expectation) NewChecker() *Checker {
	c := &Checker{exp: e, seen: make([][]uint64, len(e.splits)), last: map[int]int64{}, files: map[string]bool{}}
	c.r.Expected = e.Records()
	c.r.Splits = make([]SplitReport, len(e.splits))
	for s, p := range e.splits {
		c.seen[s] = make([]uint64, (p.n+63)/64)
		c.r.Splits[s] = SplitReport{Split: s, Expected: p.n}
	}
	return c
}

// File starts a new file (or any unit within which order is checked,
// such as a stream); the lines that follow belong to it.
func (c *Checker) File(name string) {
	c.file, c.line = name, 0
	clear(c.last)
	if !c.files[name] {
		c.files[name] = true
		c.r.Files++
	}
}

// Line checks one line of the current file.
func (c *Checker) Line(line []byte) {
	c.line++
	c.r.Lines++
	split, seq, err := datagen.ParseChecked(line)
	if err != nil {
		c.r.Corrupt++
		c.sample("corrupt (%v): %s", err, quote(line))
		return
	}
	c.r.Records++
	if split < 0 || split >= len(c.exp.splits) {
		c.r.Unexpected++
		c.sample("unexpected split %d (input has %d) seq %d", split, len(c.exp.splits), seq)
		return
	}
	sr := &c.r.Splits[split]
	sr.Records++
	i, ok := c.exp.splits[split].index(seq)
	if !ok {
		sr.Unexpected++
		c.r.Unexpected++
		c.sample("unexpected seq %d in split %d (not in the input)", seq, split)
		return
	}
	w, m := &c.seen[split][i/64], uint64(1)<<(i%64)
	if *w&m != 0 {
		sr.Duplicated++
		c.r.Duplicated++
		c.sample("duplicate split %d seq %d", split, seq)
	}
	*w |= m
	if prev, ok := c.last[split]; ok && seq < prev {
		sr.OutOfOrder++
		c.r.OutOfOrder++
		c.sample("out of order: split %d seq %d after seq %d in the same file", split, seq, prev)
	}
	c.last[split] = seq
}

func (c *Checker) sample(format string, args ...any) {
	if len(c.r.Samples) < maxSamples {
		c.r.Samples = append(c.r.Samples, fmt.Sprintf("%s:%d: ", c.file, c.line)+fmt.Sprintf(format, args...))
	}
}

func quote(line []byte) string {
	s := strings.TrimRight(string(line), "\r\n")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// Report finishes the check: it counts what was never seen.
func (c *Checker) Report() *Report {
	r := c.r
	r.Splits = append([]SplitReport(nil), c.r.Splits...)
	for s, p := range c.exp.splits {
		sr := &r.Splits[s]
		sr.Lost, sr.Missing = 0, nil
		var run *Range
		for i := int64(0); i < p.n; i++ {
			if c.seen[s][i/64]&(1<<(i%64)) != 0 {
				run = nil
				continue
			}
			sr.Lost++
			switch {
			case run != nil:
				run.To, run.N = p.seq(i), run.N+1
			case len(sr.Missing) < maxRanges:
				sr.Missing = append(sr.Missing, Range{From: p.seq(i), To: p.seq(i), N: 1})
				run = &sr.Missing[len(sr.Missing)-1]
			}
		}
		r.Lost += sr.Lost
		for _, w := range c.seen[s] {
			r.Distinct += int64(bits.OnesCount64(w))
		}
	}
	r.Samples = append([]string(nil), c.r.Samples...)
	return &r
}

// Check reads the committed output of a file sink under root in fsys:
// every regular file, recursively, in lexical order, except files and
// directories whose names start with "." (not yet committed). Each line
// is one record. It returns an error only when the output cannot be read;
// problems with the data are in the Report.
func (e Expectation) Check(fsys fs.FS, root string) (*Report, error) {
	c := e.NewChecker()
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return c.readFile(fsys, p)
	})
	if err != nil {
		return nil, fmt.Errorf("eocheck %s: %w", root, err)
	}
	return c.Report(), nil
}

func (c *Checker) readFile(fsys fs.FS, name string) error {
	f, err := fsys.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	c.File(path.Clean(name))
	br := bufio.NewReaderSize(f, maxLine)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			c.Line(line) // too long: corrupt
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		} else if len(line) > 0 {
			c.Line(line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("read %s: %w", name, err)
		}
	}
}
