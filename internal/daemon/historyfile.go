package daemon

import (
	"bytes"
	"compress/gzip"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// An ended job's charts outlive the daemon that drew them: the sampler's
// last look at a job that ended writes its history (history.gob.gz, next to
// its record and events) and the job's page reads it back only when it is
// opened, so a daemon that restarts with a full job store holds no more
// than before. Display only: nothing decides anything from it, and a file
// that cannot be read shows empty charts and a logged warning.

// historyFileVersion is the format of a job's history.gob.gz.
const historyFileVersion = 1

// historyIdle is how long a history read back from disk stays in memory
// after the page that asked for it last did (pages poll every few
// seconds): an ended job costs its history only while someone looks.
const historyIdle = time.Minute

// savedHistory is a history's samples in order, the oldest first (gob,
// gzipped: a job sampled for 15 minutes with three operators takes a few
// tens of KB; TestEndedHistoryFileIsSmall).
type savedHistory struct {
	Version int
	// Start is the first sample's time (ms since the epoch); Steps are the
	// ms from each sample to the next (one fewer than the samples): all
	// about sampleEvery, so they compress to almost nothing.
	Start       int64
	Steps       []int64
	In, Out     []float32
	Ops         []savedOpSeries
	Checkpoints []api.CheckpointPoint
}

type savedOpSeries struct {
	UID            string
	In, Out, Lag   []float32 // Lag: NaN before the first watermark
	Busy, BP, Idle []int16
	EventTime      bool
}

// save returns h's samples in order.
func (h *history) save() savedHistory {
	s := savedHistory{Version: historyFileVersion, In: make([]float32, h.n), Out: make([]float32, h.n)}
	at := func(k int) int { return (h.head + k) % historyPoints }
	for k := 0; k < h.n; k++ {
		i := at(k)
		if k == 0 {
			s.Start = h.times[i]
		} else {
			s.Steps = append(s.Steps, h.times[i]-h.times[at(k-1)])
		}
		s.In[k], s.Out[k] = h.jobIn[i], h.jobOut[i]
	}
	for _, o := range h.ops {
		so := savedOpSeries{UID: o.uid, EventTime: o.eventTime, In: make([]float32, h.n), Out: make([]float32, h.n), Lag: make([]float32, h.n),
			Busy: make([]int16, h.n), BP: make([]int16, h.n), Idle: make([]int16, h.n)}
		for k := 0; k < h.n; k++ {
			i := at(k)
			so.In[k], so.Out[k], so.Lag[k] = o.in[i], o.out[i], o.lag[i]
			so.Busy[k], so.BP[k], so.Idle[k] = o.busy[i], o.bp[i], o.idle[i]
		}
		s.Ops = append(s.Ops, so)
	}
	for k := 0; k < h.cpN; k++ {
		s.Checkpoints = append(s.Checkpoints, h.cps[(h.cpHead+k)%historyCheckpoints])
	}
	return s
}

// historyOf builds the history s holds, sized to its samples (an ended
// job's history takes no more than compact leaves), or says what is wrong
// with it.
func historyOf(s savedHistory) (*history, error) {
	n := len(s.In)
	switch {
	case s.Version != historyFileVersion:
		return nil, fmt.Errorf("history format version %d is not supported by this flinkgo (written by a newer one?)", s.Version)
	case n > historyPoints || len(s.Checkpoints) > historyCheckpoints:
		return nil, fmt.Errorf("%d samples and %d checkpoints: more than a history holds (%d, %d)", n, len(s.Checkpoints), historyPoints, historyCheckpoints)
	case len(s.Out) != n || n > 0 && len(s.Steps) != n-1:
		return nil, errors.New("the job's series have different lengths")
	}
	h := &history{n: n, times: make([]int64, n), jobIn: s.In, jobOut: s.Out, cpN: len(s.Checkpoints), cps: s.Checkpoints}
	for k := range n {
		if k == 0 {
			h.times[k] = s.Start
		} else {
			h.times[k] = h.times[k-1] + s.Steps[k-1]
		}
	}
	for _, o := range s.Ops {
		for _, l := range []int{len(o.In), len(o.Out), len(o.Lag), len(o.Busy), len(o.BP), len(o.Idle)} {
			if l != n {
				return nil, fmt.Errorf("operator %s: its series have %d samples, the job's %d", o.UID, l, n)
			}
		}
		h.ops = append(h.ops, opSeries{uid: o.UID, in: o.In, out: o.Out, lag: o.Lag, busy: o.Busy, bp: o.BP, idle: o.Idle, eventTime: o.EventTime})
	}
	return h, nil
}

func (r *registry) historyPath(id string) string {
	return filepath.Join(r.jobDir(id), "history.gob.gz")
}

// saveHistory writes job id's history atomically. In HA mode nothing is
// written, as for the journal: the job's page shows what this daemon saw.
func (r *registry) saveHistory(id string, s savedHistory) error {
	if r.cluster != nil {
		return nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := gob.NewEncoder(zw).Encode(&s); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := vfs.MkdirAllDurable(r.fs, r.jobDir(id), 0o700); err != nil {
		return err
	}
	return vfs.WriteFileAtomic(r.fs, r.historyPath(id), buf.Bytes())
}

// loadHistory reads job id's history: nil when there is none (a job that
// never ended here, one that ended before its last sample, HA mode), an
// error naming the file when it cannot be read.
func (r *registry) loadHistory(id string) (*history, error) {
	if r.cluster != nil {
		return nil, nil
	}
	path := r.historyPath(id)
	data, err := vfs.ReadFile(r.fs, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var s savedHistory
	if err := gob.NewDecoder(zr).Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := io.Copy(io.Discard, zr); err != nil { // the gzip checksum
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	h, err := historyOf(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}
