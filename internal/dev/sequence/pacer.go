package sequence

import (
	"context"
	"time"
)

// maxPacerLag is how far behind its schedule the pacer may fall (a slow
// broker) before it forgets the debt: the producer then resumes at the
// configured rate instead of bursting to catch up.
const maxPacerLag = 100 * time.Millisecond

// pacer spaces sends so that record k goes out no earlier than
// start + k/rate. The schedule is absolute, so rounding does not drift.
type pacer struct {
	rate  float64 // records per second, > 0
	start time.Time
	sent  int64 // records scheduled so far
}

func newPacer(rate float64, now time.Time) *pacer {
	return &pacer{rate: rate, start: now}
}

// due returns when the next record may go out, given the time now. It moves
// the schedule forward if now is more than maxPacerLag behind it.
func (p *pacer) due(now time.Time) time.Time {
	at := p.start.Add(time.Duration(float64(p.sent) / p.rate * float64(time.Second)))
	if now.Sub(at) > maxPacerLag {
		p.start = p.start.Add(now.Sub(at))
		return now
	}
	return at
}

// wait blocks until n more records may be sent, or ctx is done.
func (p *pacer) wait(ctx context.Context, n int64) error {
	d := time.Until(p.due(time.Now()))
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.sent += n
	return nil
}
