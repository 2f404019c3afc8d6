package kafka

import (
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// inflight counts the sink's records written but not yet acknowledged, and
// keeps the first write error. add and wait are called by the subtask,
// done by kafka-go's writer goroutines.
type inflight struct {
	mu      sync.Mutex
	n       int64
	err     error
	changed chan struct{} // closed and replaced whenever n drops or err is set
}

func newInflight() *inflight { return &inflight{changed: make(chan struct{})} }

func (f *inflight) add(n int) {
	f.mu.Lock()
	f.n += int64(n)
	f.mu.Unlock()
}

// done is the Writer's Completion callback.
func (f *inflight) done(msgs []kafka.Message, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n -= int64(len(msgs))
	if err != nil && f.err == nil {
		f.err = err
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

// fail records err as the first error unless there is one.
func (f *inflight) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

// wait blocks until at most limit records are unacknowledged and returns
// nil, or returns the first write error, or an error after timeout.
func (f *inflight) wait(limit int64, timeout time.Duration) error {
	var deadline <-chan time.Time
	for {
		f.mu.Lock()
		n, err, changed := f.n, f.err, f.changed
		f.mu.Unlock()
		switch {
		case err != nil:
			return err
		case n <= limit:
			return nil
		}
		if deadline == nil {
			t := time.NewTimer(timeout)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-changed:
		case <-deadline:
			return fmt.Errorf("%d records not acknowledged within %s (deliveryTimeout)", n, timeout)
		}
	}
}
