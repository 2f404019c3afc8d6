// Package sequence drives the development producers of the demo sequence
// {"idx": N}, N = Start, Start+1, …: chunking, pacing to a rate and progress
// reports, independent of the broker a producer writes to.
package sequence

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

const (
	// DefaultStart is the first idx when Options.Start is zero.
	DefaultStart = 1
	// MaxChunk bounds the records handed to one write.
	MaxChunk = 10_000
	// chunkPeriod is the time worth of records one chunk holds when the
	// rate is limited: bursts last at most this long.
	chunkPeriod = 10 * time.Millisecond
	// progressEvery is how often Options.Progress is called.
	progressEvery = time.Second
)

// Options of a sequence.
type Options struct {
	// Start is the first idx, DefaultStart when zero.
	Start int64
	// Count is how many records to send; 0 means until ctx is done.
	Count int64
	// Rate is records per second; 0 means as fast as possible. Records go
	// out in chunks of at most 10ms worth, never in bursts of a second.
	Rate float64
	// Chunk caps the records per write (0: MaxChunk).
	Chunk int64
	// Progress, if set, is called about once a second and once at the end,
	// with the records acknowledged so far and the last idx acknowledged
	// (Start-1 before the first).
	Progress func(sent int64, last int64)
}

// Validate reports the first invalid field.
func (o Options) Validate() error {
	switch {
	case o.Start < 0:
		return fmt.Errorf("start %d: must not be negative", o.Start)
	case o.Count < 0:
		return fmt.Errorf("count %d: must not be negative (0 means unbounded)", o.Count)
	case o.Rate < 0:
		return fmt.Errorf("rate %v: must not be negative (0 means unlimited)", o.Rate)
	}
	return nil
}

// ChunkSize is the records per write: chunkPeriod worth at a limited rate
// (at least one), MaxChunk when unlimited.
func ChunkSize(rate float64) int64 {
	if rate <= 0 {
		return MaxChunk
	}
	return min(max(int64(rate*chunkPeriod.Seconds()), 1), MaxChunk)
}

// Write sends records first … first+n-1 and waits until the broker has
// them; acked counts those it acknowledged (all of them when err is nil).
// It is not interrupted by ctx, so that the count stays exact.
type Write func(first, n int64) (acked int64, err error)

// Run writes the sequence in chunks of ChunkSize(o.Rate) until Count is
// reached or ctx is done (then with a nil error). It returns how many
// records were acknowledged: idx Start … Start+sent-1, so a new Run with
// Start = Start+sent continues without gap or duplicate.
func Run(ctx context.Context, o Options, write Write) (sent int64, err error) {
	if o.Start == 0 {
		o.Start = DefaultStart
	}
	chunk := ChunkSize(o.Rate)
	if o.Chunk > 0 {
		chunk = min(chunk, o.Chunk)
	}
	var pace *pacer
	if o.Rate > 0 {
		pace = newPacer(o.Rate, time.Now())
	}
	next := time.Now().Add(progressEvery)
	progress := func() {
		next = time.Now().Add(progressEvery)
		if o.Progress != nil {
			o.Progress(sent, o.Start+sent-1)
		}
	}
	defer progress()
	for o.Count == 0 || sent < o.Count {
		n := chunk
		if o.Count > 0 {
			n = min(n, o.Count-sent)
		}
		if pace != nil && pace.wait(ctx, n) != nil {
			return sent, nil
		}
		if ctx.Err() != nil {
			return sent, nil
		}
		acked, err := write(o.Start+sent, n)
		sent += acked
		if err != nil {
			return sent, err
		}
		if acked != n {
			return sent, errors.New("sequence: write acknowledged fewer records than sent without an error (bug)")
		}
		if time.Now().After(next) {
			progress()
		}
	}
	return sent, nil
}

// AppendRecord appends the demo record for idx, {"idx": idx}, to dst.
func AppendRecord(dst []byte, idx int64) []byte {
	dst = append(dst, `{"idx": `...)
	dst = strconv.AppendInt(dst, idx, 10)
	return append(dst, '}')
}
