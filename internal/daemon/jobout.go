package daemon

import (
	"os"
	"path/filepath"
	"sync"
)

// jobOut is a job's job.out (the print sink's lines) with a size cap: a
// write that would take it past max first renames it to job.out.1
// (replacing the previous one) and starts a new job.out, so a job keeps at
// most about twice max on disk (a single write larger than max still goes
// whole into a fresh file). A print job at 20k records/s used to fill the
// home in seconds and fail the other jobs' checkpoints. Safe for
// concurrent use.
type jobOut struct {
	mu   sync.Mutex
	path string
	max  int64
	f    *os.File
	size int64
	// start and prevStart are the stream positions of the first bytes of
	// job.out and job.out.1 (-1: not rotated by this daemon), for reading
	// back (joboutread.go).
	start, prevStart int64
	readOnly         bool // outputOf: nothing writes it here
}

// openJobOut opens (appending) or creates path; max 0 means no cap.
func openJobOut(path string, max int64) (*jobOut, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil { // HA mode keeps no registry here
		return nil, err
	}
	o := &jobOut{path: path, max: max, prevStart: -1}
	if err := o.open(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *jobOut) open() error {
	f, err := os.OpenFile(o.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666) // daemon.umask decides
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return err
	}
	o.f, o.size = f, fi.Size()
	return nil
}

func (o *jobOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return 0, os.ErrClosed
	}
	if o.max > 0 && o.size > 0 && o.size+int64(len(p)) > o.max {
		if err := o.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := o.f.Write(p)
	o.size += int64(n)
	return n, err
}

// rotate moves job.out to job.out.1 and opens a new job.out.
func (o *jobOut) rotate() error {
	if err := o.f.Close(); err != nil {
		return err
	}
	o.f = nil
	if err := os.Rename(o.path, o.path+".1"); err != nil {
		return err
	}
	o.prevStart, o.start = o.start, o.start+o.size
	return o.open()
}

// Close closes the file; later writes fail.
func (o *jobOut) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return nil
	}
	err := o.f.Close()
	o.f = nil
	return err
}
