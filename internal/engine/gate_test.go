package engine_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seq is an event carrying a sequence number (in the barrier id, which the
// gate does not look at).
func seq(n int) engine.Event {
	return engine.Event{Kind: engine.EventBarrier, Barrier: engine.Barrier{ID: int64(n)}}
}

func mustPush(t *testing.T, g *engine.Gate, ch, n int) {
	t.Helper()
	require.NoError(t, g.Push(ch, seq(n), nil))
}

// next takes an item without blocking and renders it: "ch:n", "ctrl:id" or
// "none".
func next(g *engine.Gate) string {
	it, ok := g.TryNext()
	return itemString(it, ok)
}

func itemString(it engine.Item, ok bool) string {
	switch {
	case !ok:
		return "none"
	case it.Control != nil:
		return fmt.Sprintf("ctrl:%d", it.Control.ID)
	}
	return fmt.Sprintf("%d:%d", it.Channel, it.Event.Barrier.ID)
}

// TestGateOrderPerChannel: concurrent producers, a small capacity (so
// producers block and are released many times), and every channel's events
// come out in the order they went in, none lost or repeated.
func TestGateOrderPerChannel(t *testing.T) {
	const channels, perChannel = 4, 5000
	g := engine.NewGate(channels, 3)
	assert.Equal(t, channels, g.NumChannels())
	done := make(chan struct{})
	defer close(done)
	var wg sync.WaitGroup
	for ch := 0; ch < channels; ch++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= perChannel; i++ {
				if err := g.Push(ch, seq(i), done); err != nil {
					t.Errorf("push: %v", err)
					return
				}
			}
		}()
	}
	last := make([]int64, channels)
	for n := 0; n < channels*perChannel; n++ {
		it, err := g.Next(done)
		require.NoError(t, err)
		require.Nil(t, it.Control)
		id := it.Event.Barrier.ID
		require.Equal(t, last[it.Channel]+1, id, "channel %d out of order", it.Channel)
		last[it.Channel] = id
	}
	wg.Wait()
	for ch := range last {
		assert.Equal(t, int64(perChannel), last[ch])
	}
	assert.Zero(t, g.Buffered())
	assert.Equal(t, "none", next(g))
}

func TestGateRoundRobin(t *testing.T) {
	g := engine.NewGate(3, 4)
	for i := 1; i <= 3; i++ {
		mustPush(t, g, 0, i)
		mustPush(t, g, 2, i)
	}
	mustPush(t, g, 1, 1)
	var got []string
	for range 7 {
		got = append(got, next(g))
	}
	assert.Equal(t, []string{"0:1", "1:1", "2:1", "0:2", "2:2", "0:3", "2:3"}, got, "channels take turns")
	assert.Equal(t, "none", next(g))
}

// TestGateBlockedChannel: a blocked channel delivers nothing (alignment),
// the others go on, and UnblockAll releases it in order.
func TestGateBlockedChannel(t *testing.T) {
	g := engine.NewGate(2, 4)
	for i := 1; i <= 3; i++ {
		mustPush(t, g, 0, i)
	}
	mustPush(t, g, 1, 1)
	assert.Equal(t, "0:1", next(g))
	g.Block(0)
	assert.Equal(t, "1:1", next(g))
	assert.Equal(t, "none", next(g), "channel 0 is blocked")
	assert.Equal(t, 2, g.Buffered(), "its events wait")
	mustPush(t, g, 1, 2)
	assert.Equal(t, "1:2", next(g))
	g.Block(1)
	mustPush(t, g, 1, 3)
	assert.Equal(t, "none", next(g), "both blocked")
	g.UnblockAll()
	var got []string
	for range 3 {
		got = append(got, next(g))
	}
	assert.ElementsMatch(t, []string{"0:2", "0:3", "1:3"}, got)
	assert.Equal(t, "none", next(g))
}

// TestGateControlFirst: control messages overtake queued events (and are
// delivered in their own order), even when every channel is blocked.
func TestGateControlFirst(t *testing.T) {
	g := engine.NewGate(2, 4)
	mustPush(t, g, 0, 1)
	mustPush(t, g, 1, 1)
	g.PushControl(engine.Control{Kind: engine.CtrlComplete, ID: 7})
	g.PushControl(engine.Control{Kind: engine.CtrlAbort, ID: 8})
	assert.Equal(t, "ctrl:7", next(g))
	g.Block(0)
	g.Block(1)
	g.PushControl(engine.Control{Kind: engine.CtrlTrigger, ID: 9})
	assert.Equal(t, "ctrl:8", next(g))
	assert.Equal(t, "ctrl:9", next(g))
	assert.Equal(t, "none", next(g))
	g.UnblockAll()
	assert.Equal(t, "0:1", next(g))
	g.PushControl(engine.Control{Kind: engine.CtrlComplete, ID: 10})
	assert.Equal(t, "ctrl:10", next(g), "before channel 1's queued event")
	assert.Equal(t, "1:1", next(g))
}

// The tests below run in a synctest bubble: synctest.Wait returns once
// every goroutine of the bubble is durably blocked, so "it is blocked" is
// checked exactly, without sleeps.

// TestGatePushBlocksWhenFull: a full channel blocks its producer (only it:
// other channels and the consumer go on) until Next makes room.
func TestGatePushBlocksWhenFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := engine.NewGate(2, 2)
		mustPush(t, g, 0, 1)
		mustPush(t, g, 0, 2)
		pushed := make(chan error, 1)
		go func() { pushed <- g.Push(0, seq(3), nil) }()
		synctest.Wait()
		select {
		case err := <-pushed:
			t.Fatalf("Push into a full channel returned %v", err)
		default:
		}
		mustPush(t, g, 1, 1) // another channel is not affected
		assert.Equal(t, 3, g.Buffered())

		it, err := g.Next(nil)
		require.NoError(t, err)
		assert.Equal(t, "0:1", itemString(it, true))
		require.NoError(t, <-pushed, "Next made room")
		var got []string
		for range 3 {
			got = append(got, next(g))
		}
		assert.ElementsMatch(t, []string{"0:2", "0:3", "1:1"}, got)
	})
}

// TestGatePushBlockedWhileChannelBlocked: a producer stays blocked while
// its full channel is blocked for alignment, and is released when it is
// unblocked and read.
func TestGatePushBlockedWhileChannelBlocked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := engine.NewGate(2, 1)
		mustPush(t, g, 0, 1)
		g.Block(0)
		pushed := make(chan error, 1)
		go func() { pushed <- g.Push(0, seq(2), nil) }()
		mustPush(t, g, 1, 1)
		assert.Equal(t, "1:1", next(g))
		synctest.Wait()
		assert.Empty(t, pushed)
		g.UnblockAll()
		assert.Equal(t, "0:1", next(g))
		require.NoError(t, <-pushed)
		assert.Equal(t, "0:2", next(g))
	})
}

// TestGateNextWakes: Next blocks while there is nothing to deliver and
// wakes for an event, a control message or an unblock.
func TestGateNextWakes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := engine.NewGate(2, 4)
		items := make(chan string)
		go func() {
			for range 4 {
				it, err := g.Next(nil)
				if err != nil {
					t.Errorf("Next: %v", err)
					return
				}
				items <- itemString(it, true)
			}
		}()
		synctest.Wait() // Next is parked on an empty gate
		mustPush(t, g, 1, 1)
		assert.Equal(t, "1:1", <-items)

		g.PushControl(engine.Control{Kind: engine.CtrlAbort, ID: 3})
		assert.Equal(t, "ctrl:3", <-items)

		g.Block(0)
		mustPush(t, g, 0, 1)
		synctest.Wait() // the only event is on a blocked channel
		select {
		case it := <-items:
			t.Fatalf("Next delivered %s from a blocked channel", it)
		default:
		}
		g.UnblockAll()
		assert.Equal(t, "0:1", <-items)

		mustPush(t, g, 0, 2)
		assert.Equal(t, "0:2", <-items)
	})
}

// TestGateCancel: closing done releases a producer blocked on a full
// channel and a consumer blocked on an empty gate with ErrCanceled, and
// leaves no goroutine behind (synctest.Test fails on a goroutine that is
// still blocked when the test ends; goleak checks the package).
func TestGateCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		full := engine.NewGate(1, 1)
		mustPush(t, full, 0, 1)
		empty := engine.NewGate(1, 1)
		done := make(chan struct{})
		errs := make(chan error, 2)
		go func() { errs <- full.Push(0, seq(2), done) }()
		go func() {
			_, err := empty.Next(done)
			errs <- err
		}()
		synctest.Wait()
		assert.Empty(t, errs, "both are blocked")
		close(done)
		for range 2 {
			assert.True(t, errors.Is(<-errs, engine.ErrCanceled))
		}
		// The canceled Push added nothing.
		assert.Equal(t, 1, full.Buffered())
		// A canceled done does not stop what does not block.
		it, err := full.Next(done)
		require.NoError(t, err)
		assert.Equal(t, "0:1", itemString(it, true))
		require.NoError(t, full.Push(0, seq(3), done))
	})
}

// TestGateCancelManyProducers: with many producers blocked on full
// channels, one close of done releases them all.
func TestGateCancelManyProducers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const channels = 8
		g := engine.NewGate(channels, 1)
		done := make(chan struct{})
		var wg sync.WaitGroup
		canceled := make(chan error, channels)
		for ch := 0; ch < channels; ch++ {
			mustPush(t, g, ch, 1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				canceled <- g.Push(ch, seq(2), done)
			}()
		}
		synctest.Wait()
		close(done)
		wg.Wait()
		close(canceled)
		for err := range canceled {
			assert.ErrorIs(t, err, engine.ErrCanceled)
		}
		assert.Equal(t, channels, g.Buffered())
	})
}
