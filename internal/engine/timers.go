package engine

import (
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// Names of the timer tables in a subtask's keyed state. "__" starts no name
// an operator declares (see runtime.NewValue).
const (
	eventTimersTable      = "__timers.event"
	processingTimersTable = "__timers.processing"
)

// timerService implements runtime.Timers over two timer tables of the
// subtask's keyed state; the subtask fires them (on its goroutine).
type timerService struct {
	kb          *state.KeyedBackend
	event, proc *state.Timers
}

var (
	_ runtime.Timers      = (*timerService)(nil)
	_ runtime.TimerLister = (*timerService)(nil)
)

func newTimerService(kb *state.KeyedBackend) (*timerService, error) {
	ev, err := state.NewTimers(kb, eventTimersTable)
	if err != nil {
		return nil, err
	}
	pt, err := state.NewTimers(kb, processingTimersTable)
	if err != nil {
		return nil, err
	}
	return &timerService{kb: kb, event: ev, proc: pt}, nil
}

func (s *timerService) RegisterEventTime(ts int64)      { s.event.Register(ts) }
func (s *timerService) RegisterProcessingTime(ts int64) { s.proc.Register(ts) }
func (s *timerService) DeleteEventTime(ts int64)        { s.event.Delete(ts) }
func (s *timerService) DeleteProcessingTime(ts int64)   { s.proc.Delete(ts) }

// EachTimer lists the timers of domain d by key.
func (s *timerService) EachTimer(d runtime.TimeDomain, fn func(key string, ts []int64)) {
	if d == runtime.ProcessingTime {
		s.proc.Each(fn)
	} else {
		s.event.Each(fn)
	}
}

// len counts the timers of both domains.
func (s *timerService) len() int { return s.event.Len() + s.proc.Len() }

// nextProcessing is the earliest processing-time timer (ok false: none).
func (s *timerService) nextProcessing() (int64, bool) { return s.proc.Next() }

// fire pops every timer of domain d at or before limit, in order, making
// its key current before calling fn. Timers that fn registers at or before
// limit fire in the same call.
func (s *timerService) fire(d runtime.TimeDomain, limit int64, fn func(ts int64) error) error {
	t := s.event
	if d == runtime.ProcessingTime {
		t = s.proc
	}
	for {
		ts, ok := t.PopCurrent(limit)
		if !ok {
			return nil
		}
		if err := fn(ts); err != nil {
			return err
		}
	}
}
