package engine_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/engine"
)

// decisionString renders an aligner decision in the order the task carries
// it out: decline the abandoned checkpoint, unblock all, block one channel,
// snapshot. "-" is no decision.
func decisionString(d engine.Decision) string {
	var parts []string
	if d.Abandon != 0 {
		parts = append(parts, fmt.Sprintf("abandon=%d", d.Abandon))
	}
	if d.UnblockAll {
		parts = append(parts, "unblock")
	}
	if d.Block >= 0 {
		parts = append(parts, fmt.Sprintf("block=%d", d.Block))
	}
	if d.Snapshot {
		parts = append(parts, fmt.Sprintf("snapshot=%d", d.Barrier.ID))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// alignerStep is "barrier <ch> <id>", "end <ch>" or "abort <id>", and the
// decision it must produce.
type alignerStep struct{ ev, want string }

func applyStep(t *testing.T, a *engine.Aligner, ev string) engine.Decision {
	t.Helper()
	f := strings.Fields(ev)
	num := func(i int) int {
		n, err := strconv.Atoi(f[i])
		require.NoError(t, err, ev)
		return n
	}
	switch f[0] {
	case "barrier":
		id := int64(num(2))
		d := engine.Decision{}
		d = a.OnBarrier(num(1), engine.Barrier{ID: id, Kind: checkpoint.Periodic, Dir: fmt.Sprint("/chk-", id)})
		if d.Snapshot {
			assert.Equal(t, fmt.Sprint("/chk-", d.Barrier.ID), d.Barrier.Dir, "the snapshot carries the whole barrier")
		}
		return d
	case "end":
		return a.OnEndOfPartition(num(1))
	case "abort":
		return a.OnAbort(int64(num(1)))
	}
	t.Fatalf("bad step %q", ev)
	return engine.Decision{}
}

func TestAligner(t *testing.T) {
	for _, tc := range []struct {
		name        string
		channels    int
		exactlyOnce bool
		steps       []alignerStep
		pending     int64 // Pending() after the last step
		allEnded    bool
	}{
		{name: "single input fast path, exactly-once", channels: 1, exactlyOnce: true, steps: []alignerStep{
			{"barrier 0 1", "unblock snapshot=1"},
			{"barrier 0 2", "unblock snapshot=2"},
		}},
		{name: "single input fast path, at-least-once", channels: 1, steps: []alignerStep{
			{"barrier 0 1", "snapshot=1"},
		}},
		{name: "exactly-once blocks each channel until all delivered", channels: 3, exactlyOnce: true, steps: []alignerStep{
			{"barrier 1 1", "block=1"},
			{"barrier 0 1", "block=0"},
			{"barrier 2 1", "unblock snapshot=1"},
			// The next checkpoint aligns from scratch.
			{"barrier 2 2", "block=2"},
		}, pending: 2},
		{name: "at-least-once never blocks, snapshots on the last barrier", channels: 3, steps: []alignerStep{
			{"barrier 0 1", "-"},
			{"barrier 2 1", "-"},
			{"barrier 1 1", "snapshot=1"},
		}},
		{name: "same id on all channels, several checkpoints", channels: 2, exactlyOnce: true, steps: []alignerStep{
			{"barrier 0 1", "block=0"},
			{"barrier 1 1", "unblock snapshot=1"},
			{"barrier 1 2", "block=1"},
			{"barrier 0 2", "unblock snapshot=2"},
			{"barrier 0 3", "block=0"},
			{"barrier 1 3", "unblock snapshot=3"},
		}},
		{name: "newer id subsumes the pending one, exactly-once", channels: 2, exactlyOnce: true, steps: []alignerStep{
			{"barrier 0 1", "block=0"},
			// Channel 1 never delivered 1 (its upstream abandoned it).
			{"barrier 1 2", "abandon=1 unblock block=1"},
			{"barrier 0 2", "unblock snapshot=2"},
		}},
		{name: "newer id subsumes the pending one, at-least-once", channels: 2, steps: []alignerStep{
			{"barrier 0 1", "-"},
			{"barrier 1 2", "abandon=1"},
			{"barrier 0 2", "snapshot=2"},
		}},
		{name: "late barrier of an abandoned checkpoint is ignored", channels: 2, exactlyOnce: true, steps: []alignerStep{
			{"barrier 0 1", "block=0"},
			{"barrier 1 2", "abandon=1 unblock block=1"},
			{"barrier 0 1", "-"},
			{"barrier 0 2", "unblock snapshot=2"},
		}},
		{name: "older id than a completed one is ignored", channels: 2, exactlyOnce: true, steps: []alignerStep{
			{"barrier 0 5", "block=0"},
			{"barrier 1 5", "unblock snapshot=5"},
			{"barrier 0 4", "-"},
			{"barrier 1 5", "-"},
		}},
		// A barrier older than the one being aligned must not count for it:
		// channel 1's cut for checkpoint 3 is its barrier 3, not 2. (Seen
		// when an abort of 2 reaches this subtask after barrier 3 did.)
		{name: "older id than the one being aligned is ignored", channels: 2, exactlyOnce: true, steps: []alignerStep{
			{"barrier 0 3", "block=0"},
			{"barrier 1 2", "-"},
			{"barrier 1 3", "unblock snapshot=3"},
		}},
		{name: "older id than the one being aligned is ignored, at-least-once", channels: 3, steps: []alignerStep{
			{"barrier 0 3", "-"},
			{"barrier 1 2", "-"},
			{"barrier 2 3", "-"},
			{"barrier 1 3", "snapshot=3"},
		}},
		{name: "duplicate barrier on a channel is ignored", channels: 3, exactlyOnce: true, steps: []alignerStep{
			{"barrier 0 1", "block=0"},
			{"barrier 0 1", "-"},
			{"barrier 1 1", "block=1"},
			{"barrier 1 1", "-"},
			{"barrier 2 1", "unblock snapshot=1"},
		}},
		{name: "end of partition during alignment completes it", channels: 3, exactlyOnce: true, steps: []alignerStep{
			{"barrier 0 1", "block=0"},
			{"barrier 1 1", "block=1"},
			{"end 2", "unblock snapshot=1"},
			// Later checkpoints align over the live channels only.
			{"barrier 1 2", "block=1"},
			{"barrier 0 2", "unblock snapshot=2"},
			{"end 0", "-"},
			{"end 0", "-"},
			{"barrier 1 3", "unblock snapshot=3"},
			{"end 1", "-"},
		}, allEnded: true},
		{name: "end of partition of a channel that delivered the barrier does not complete", channels: 3, steps: []alignerStep{
			{"barrier 0 1", "-"},
			{"end 0", "-"},
			{"barrier 1 1", "-"},
			{"barrier 2 1", "snapshot=1"},
		}},
		{name: "end of partition without alignment", channels: 2, exactlyOnce: true, steps: []alignerStep{
			{"end 0", "-"},
			{"barrier 1 1", "unblock snapshot=1"},
		}},
		{name: "abort releases the blocked channels", channels: 3, exactlyOnce: true, steps: []alignerStep{
			{"barrier 0 1", "block=0"},
			{"barrier 2 1", "block=2"},
			{"abort 1", "unblock"},
			// Its last barrier, arriving late, is ignored.
			{"barrier 1 1", "-"},
			{"barrier 1 2", "block=1"},
		}, pending: 2},
		{name: "abort at-least-once resets without unblocking", channels: 2, steps: []alignerStep{
			{"barrier 0 1", "-"},
			{"abort 1", "-"},
			{"barrier 1 1", "-"},
		}},
		{name: "abort of a newer checkpoint also ends the one being aligned", channels: 2, exactlyOnce: true, steps: []alignerStep{
			{"barrier 0 1", "block=0"},
			{"abort 2", "unblock"},
			{"barrier 1 1", "-"},
			{"barrier 1 2", "-"},
			{"barrier 0 3", "block=0"},
		}, pending: 3},
		{name: "abort of an older checkpoint leaves the alignment alone", channels: 2, exactlyOnce: true, steps: []alignerStep{
			{"barrier 0 3", "block=0"},
			{"abort 2", "-"},
			{"barrier 1 2", "-"},
			{"barrier 1 3", "unblock snapshot=3"},
		}},
		{name: "abort with nothing pending", channels: 2, exactlyOnce: true, steps: []alignerStep{
			{"abort 4", "-"},
			{"barrier 0 4", "-"},
			{"barrier 0 5", "block=0"},
		}, pending: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := engine.NewAligner(tc.channels, tc.exactlyOnce)
			assert.Zero(t, a.Pending())
			for i, s := range tc.steps {
				got := decisionString(applyStep(t, a, s.ev))
				assert.Equal(t, s.want, got, "step %d: %s", i, s.ev)
			}
			assert.Equal(t, tc.pending, a.Pending())
			assert.Equal(t, tc.allEnded, a.AllEnded())
		})
	}
}

// TestAlignerTotal drives the aligner with every short sequence of events
// over two channels and checks its invariants: a checkpoint is snapshotted
// at most once, ids snapshotted only grow, an exactly-once aligner never
// blocks more than the channels that delivered the pending barrier, and a
// snapshot happens only once every live channel delivered that barrier.
func TestAlignerTotal(t *testing.T) {
	events := []string{"barrier 0 1", "barrier 1 1", "barrier 0 2", "barrier 1 2", "end 0", "end 1", "abort 1", "abort 2"}
	var seq []int
	var walk func(depth int)
	runs := 0
	walk = func(depth int) {
		if depth == 0 {
			runs++
			for _, eo := range []bool{true, false} {
				checkSequence(t, eo, events, seq)
			}
			return
		}
		for i := range events {
			seq = append(seq, i)
			walk(depth - 1)
			seq = seq[:len(seq)-1]
		}
	}
	walk(5)
	require.Equal(t, 32768, runs)
}

func checkSequence(t *testing.T, exactlyOnce bool, events []string, seq []int) {
	a := engine.NewAligner(2, exactlyOnce)
	blocked := map[int]bool{}
	ended := map[int]bool{}
	delivered := map[int64]map[int]bool{} // barrier id -> channels that delivered it since it became pending
	var lastSnap int64
	var trace []string
	for _, i := range seq {
		ev := events[i]
		f := strings.Fields(ev)
		if f[0] == "barrier" || f[0] == "end" {
			ch, _ := strconv.Atoi(f[1])
			if blocked[ch] || ended[ch] {
				continue // the gate would not deliver it
			}
			if f[0] == "end" {
				ended[ch] = true
			} else {
				id, _ := strconv.ParseInt(f[2], 10, 64)
				if delivered[id] == nil {
					delivered[id] = map[int]bool{}
				}
				delivered[id][ch] = true
			}
		}
		trace = append(trace, ev)
		d := applyStep(t, a, ev)
		if d.UnblockAll {
			clear(blocked)
		}
		if d.Block >= 0 {
			if !exactlyOnce {
				t.Fatalf("at-least-once blocked a channel: %v", trace)
			}
			blocked[d.Block] = true
		}
		if d.Snapshot {
			id := d.Barrier.ID
			if id <= lastSnap {
				t.Fatalf("snapshot %d after %d: %v", id, lastSnap, trace)
			}
			for ch := 0; ch < 2; ch++ {
				if !ended[ch] && !delivered[id][ch] {
					t.Fatalf("snapshot %d before channel %d delivered it: %v", id, ch, trace)
				}
			}
			lastSnap = id
		}
		if len(blocked) > 0 && a.Pending() == 0 {
			t.Fatalf("channels %v stay blocked with nothing pending: %v", blocked, trace)
		}
	}
}

func TestAlignerAllEnded(t *testing.T) {
	a := engine.NewAligner(2, true)
	assert.False(t, a.AllEnded())
	a.OnEndOfPartition(1)
	assert.False(t, a.AllEnded())
	a.OnEndOfPartition(1)
	assert.False(t, a.AllEnded(), "the same channel twice counts once")
	a.OnEndOfPartition(0)
	assert.True(t, a.AllEnded())
}
