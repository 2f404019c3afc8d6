package daemon

import (
	"sync"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// rateWindow is the shortest span a rate is computed over; a request
// sooner than that gets the previous rate. Requests drive the sampling, so
// an idle daemon does no work for figures nobody reads.
const rateWindow = time.Second

// rateMeter turns the operators' record counters into per-second rates.
type rateMeter struct {
	now func() time.Time

	mu   sync.Mutex
	jobs map[string]*rateSample
}

type rateSample struct {
	at        time.Time
	in, out   []int64
	inR, outR []float64
}

func newRateMeter(now func() time.Time) *rateMeter {
	if now == nil {
		now = time.Now
	}
	return &rateMeter{now: now, jobs: map[string]*rateSample{}}
}

// apply fills the operators' rates of info from the counters seen at the
// previous sample.
func (m *rateMeter) apply(info *api.JobInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	n := len(info.Operators)
	in, out := make([]int64, n), make([]int64, n)
	for i, op := range info.Operators {
		in[i], out[i] = op.RecordsIn, op.RecordsOut
	}
	s := m.jobs[info.ID]
	switch {
	case s == nil || len(s.in) != n:
		m.jobs[info.ID] = &rateSample{at: now, in: in, out: out, inR: make([]float64, n), outR: make([]float64, n)}
		return
	case now.Sub(s.at) >= rateWindow:
		dt := now.Sub(s.at).Seconds()
		for i := range n {
			// A restart may reset a live counter below the last sample.
			s.inR[i] = max(0, float64(in[i]-s.in[i])/dt)
			s.outR[i] = max(0, float64(out[i]-s.out[i])/dt)
		}
		s.at, s.in, s.out = now, in, out
	}
	if !info.State.Active() {
		clear(s.inR)
		clear(s.outR)
	}
	for i := range info.Operators {
		info.Operators[i].RecordsInPerSec = s.inR[i]
		info.Operators[i].RecordsOutPerSec = s.outR[i]
	}
}
