package daemon

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"unicode/utf8"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// Reading a job's print output back (the dashboard's output pane, `flinkgo
// logs`). Positions count bytes of the output stream since the daemon
// opened job.out: the current file holds [start, start+size), job.out.1
// (rotated by this daemon) [prevStart, start). Only complete lines are
// returned, so a follower gets a line once it is whole.
const (
	outputLineMax  = 4 << 10  // longer lines are cut
	outputReadMax  = 1 << 20  // bytes read for one answer
	outputTailStep = 64 << 10 // the tail is read backwards in steps
	outputLinesMax = api.LogsLinesMax
)

// outputRead is what a read of the output returned.
type outputRead struct {
	lines   []string
	next    int64
	skipped int64 // bytes rotated away before they were read
}

// outputOf reads a job's print output that no jobOut of this daemon
// writes (a job that ended before it started): positions are offsets in
// job.out.
func outputOf(path string) *jobOut { return &jobOut{path: path, prevStart: -1, readOnly: true} }

// view returns the stream positions of the output's files. Must be called
// with mu held.
func (o *jobOut) view() (start, size, prevStart int64) {
	if o.readOnly {
		if fi, err := os.Stat(o.path); err == nil {
			return 0, fi.Size(), -1
		}
		return 0, 0, -1
	}
	return o.start, o.size, o.prevStart
}

// Tail returns the last n complete lines (job.out, then job.out.1 when
// job.out holds fewer) and the position after them.
func (o *jobOut) Tail(n int) (outputRead, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	start, size, _ := o.view()
	cur, end, err := tailFile(o.path, size, n)
	if err != nil {
		return outputRead{}, err
	}
	lines := cur
	if len(cur) < n {
		fi, err := os.Stat(o.path + ".1")
		if err == nil {
			older, _, err := tailFile(o.path+".1", fi.Size(), n-len(cur))
			if err != nil {
				return outputRead{}, err
			}
			lines = append(older, cur...)
		}
	}
	return outputRead{lines: lines, next: start + end}, nil
}

// ReadFrom returns the complete lines after position pos (at most
// outputLinesMax, about outputReadMax bytes) and the position to read next.
func (o *jobOut) ReadFrom(pos int64) (outputRead, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	start, size, prevStart := o.view()
	if pos > start+size {
		return outputRead{next: start + size}, nil // a position of another daemon's life
	}
	var r outputRead
	kept := start
	if prevStart >= 0 {
		kept = prevStart
	}
	if pos < kept {
		r.skipped, pos = kept-pos, kept
	}
	if pos < start {
		lines, n, err := readLines(o.path+".1", pos-prevStart, start-prevStart, outputLinesMax)
		if err != nil {
			return outputRead{}, err
		}
		r.lines, pos = lines, pos+n
		if rest := start - pos; rest >= outputReadMax || len(lines) == outputLinesMax {
			r.next = pos // more of job.out.1 to read next time
			return r, nil
		}
		pos = start // what is left of job.out.1 is no complete line: it never will be
	}
	lines, n, err := readLines(o.path, pos-start, size, outputLinesMax-len(r.lines))
	if err != nil {
		return outputRead{}, err
	}
	r.lines, r.next = append(r.lines, lines...), pos+n
	return r, nil
}

// readLines reads the complete lines of path from off (up to size, or the
// end when size < 0), at most max of them and about outputReadMax bytes,
// and returns them with the bytes they took. A line longer than
// outputReadMax is returned cut, so reading goes on past it.
func readLines(path string, off, size int64, max int) ([]string, int64, error) {
	f, err := openOutput(path)
	if f == nil {
		return nil, 0, err
	}
	defer f.Close()
	want := int64(outputReadMax)
	if size >= 0 {
		want = min(want, size-off)
	}
	if want <= 0 || max <= 0 {
		return nil, 0, nil
	}
	buf := make([]byte, want)
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	buf = buf[:n]
	last := bytes.LastIndexByte(buf, '\n')
	if last < 0 {
		if n < outputReadMax {
			return nil, 0, nil // a line still being written
		}
		return []string{cutLine(buf)}, int64(n), nil
	}
	var lines []string
	used := 0
	for used <= last && len(lines) < max {
		i := bytes.IndexByte(buf[used:], '\n')
		lines = append(lines, cutLine(buf[used:used+i]))
		used += i + 1
	}
	return lines, int64(used), nil
}

// tailFile returns the last n complete lines of path's first size bytes
// and the offset after the last of them, reading backwards at most about
// outputReadMax bytes.
func tailFile(path string, size int64, n int) ([]string, int64, error) {
	f, err := openOutput(path)
	if f == nil {
		return nil, 0, err
	}
	defer f.Close()
	var buf []byte
	off := size
	for off > 0 && len(buf) < outputReadMax && bytes.Count(buf, []byte{'\n'}) <= n {
		step := min(int64(outputTailStep), off)
		off -= step
		chunk := make([]byte, step)
		if _, err := f.ReadAt(chunk, off); err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		buf = append(chunk, buf...)
	}
	last := bytes.LastIndexByte(buf, '\n')
	if last < 0 {
		return nil, off, nil
	}
	end := off + int64(last) + 1
	body := buf[:last]
	if off > 0 {
		// the first line may have begun before what was read
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			body = body[i+1:]
		} else {
			return nil, end, nil
		}
	}
	parts := bytes.Split(body, []byte{'\n'})
	if len(parts) > n {
		parts = parts[len(parts)-n:]
	}
	lines := make([]string, len(parts))
	for i, p := range parts {
		lines[i] = cutLine(p)
	}
	return lines, end, nil
}

// openOutput opens an output file for reading; a missing one is no output
// (nil file, nil error).
func openOutput(path string) (*os.File, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return f, err
}

// cutLine makes a line of output a string of at most outputLineMax bytes,
// cut at a character boundary.
func cutLine(b []byte) string {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if len(b) <= outputLineMax {
		return string(b)
	}
	cut := outputLineMax
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut]) + "…"
}
