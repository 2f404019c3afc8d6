package engine

import (
	"sync"
	"testing"
	"time"
)

// Readings taken while the subtask begins and ends waits never count a
// wait twice: the three figures never add up to more than the time since
// the subtask started; and none is lost: once the subtask stops waiting
// they add up to that time exactly. A figure may step back only by the
// instant between a clock read and its publication (end reads the clock,
// then clears the wait in progress).
func TestTaskTimesReadingsAreConsistent(t *testing.T) {
	m := &taskTimes{started: monoNow()}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the subtask
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k := waitKind(i % 3)
			start := m.begin(k)
			for spin := monoNow(); monoNow()-spin < 20_000; {
			}
			m.end(k, start, i%2 == 0)
		}
	}()
	var last [3]int64
	deadline := time.Now().Add(200 * time.Millisecond)
	readings := 0
	for time.Now().Before(deadline) {
		b, bp, idle := m.spent()
		now := monoNow()
		cur := [3]int64{b, bp, idle}
		for k := range cur {
			if cur[k] < last[k]-int64(50*time.Millisecond) {
				t.Fatalf("figure %d went down: %d after %d", k, cur[k], last[k])
			}
		}
		if sum := b + bp + idle; sum > now-m.started {
			t.Fatalf("%d ns counted in %d ns: a wait counted twice", sum, now-m.started)
		}
		last = cur
		readings++
	}
	close(stop)
	wg.Wait()
	before := monoNow()
	b, bp, idle := m.spent()
	after := monoNow()
	if sum := b + bp + idle; sum < before-m.started || sum > after-m.started {
		t.Fatalf("%d + %d + %d ns counted in %d to %d ns: a wait lost", b, bp, idle, before-m.started, after-m.started)
	}
	if readings < 100 || bp == 0 || idle == 0 {
		t.Fatalf("%d readings, %d ns backpressured, %d idle: the test did not exercise the waits", readings, bp, idle)
	}
}
