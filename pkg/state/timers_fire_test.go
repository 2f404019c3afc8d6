package state

import (
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// Equal timestamps fire in key order, also for keys that share their first
// 8 bytes or are prefixes of each other (the queue compares prefixes
// first).
func TestTimersKeyOrderLongAndShortKeys(t *testing.T) {
	b := NewKeyedBackend(128, AllKeyGroups(128))
	tm, err := NewTimers(b, "t")
	require.NoError(t, err)
	keys := []string{"", "a", "a\x00", "abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefghz", "abcdefg", "b", "\xff\xff", "12345678901"}
	r := rand.New(rand.NewSource(1))
	for _, i := range r.Perm(len(keys)) {
		b.SetCurrentKey([]byte(keys[i]))
		tm.Register(7)
	}
	var got []string
	for {
		ts, ok := tm.PopCurrent(10)
		if !ok {
			break
		}
		require.Equal(t, int64(7), ts)
		got = append(got, string(b.CurrentKey()))
		require.Equal(t, KeyGroup(b.CurrentKey(), 128), b.curKG, "PopCurrent sets the key's group")
	}
	want := append([]string(nil), keys...)
	sort.Strings(want)
	require.Equal(t, want, got)
}

// A timer registered from the firing of the key's last one (the next
// window) reuses its set; a key left without timers is gone from the table
// (and its snapshot) though the set is dropped lazily; deleted and re-added
// timers fire once.
func TestTimersFireRegisterNextAndEmptyKeys(t *testing.T) {
	b := NewKeyedBackend(128, AllKeyGroups(128))
	tm, err := NewTimers(b, "t")
	require.NoError(t, err)
	for i := 0; i < 3000; i++ {
		b.SetCurrentKey([]byte(itoa(int64(i))))
		tm.Register(10)
	}
	fired := map[string][]int64{}
	for {
		ts, ok := tm.PopCurrent(1 << 40)
		if !ok {
			break
		}
		k := string(b.CurrentKey())
		fired[k] = append(fired[k], ts)
		if ts < 30 && k[0] != '1' { // keys starting with 1 stop after their first timer
			tm.Register(ts + 10)
			tm.Register(ts + 10) // once
			tm.Delete(ts + 10)
			tm.Register(ts + 10) // deleted and added again: fires once
		}
	}
	require.Equal(t, 0, tm.Len())
	require.Equal(t, int64(0), b.NumTimerKeys())
	for i := 0; i < 3000; i++ {
		k := itoa(int64(i))
		if k[0] == '1' {
			require.Equal(t, []int64{10}, fired[k], k)
		} else {
			require.Equal(t, []int64{10, 20, 30}, fired[k], k)
		}
	}
	// Keys emptied by Delete: not in the snapshot, and a restore sees none.
	for i := 0; i < 50; i++ {
		b.SetCurrentKey([]byte(itoa(int64(i))))
		tm.Register(100)
		if i%2 == 0 {
			tm.Delete(100)
		}
	}
	require.Equal(t, int64(25), b.NumTimerKeys())
	snap := snapshotAll(t, nil, []*KeyedBackend{b})[0]
	nb := NewKeyedBackend(128, AllKeyGroups(128))
	nb.Restore([]*Snapshot{snap})
	rt, err := NewTimers(nb, "t")
	require.NoError(t, err)
	require.Equal(t, 25, rt.Len())
	require.Equal(t, int64(25), nb.NumTimerKeys())
	n := 0
	for {
		k, ts, ok := rt.Pop(1 << 40)
		if !ok {
			break
		}
		require.Equal(t, int64(100), ts)
		require.Equal(t, byte(1), k[len(k)-1]%2, k) // the odd ones
		n++
	}
	require.Equal(t, 25, n)
}

// Random registers, deletes and pops (some registering timers at the
// timestamp being fired, or before it) against a plain model: timers fire
// in (timestamp, key) order, each once, and Len, Next agree.
func TestTimersQueueMatchesModel(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewSource(seed))
		b := NewKeyedBackend(16, AllKeyGroups(16))
		tm, err := NewTimers(b, "t")
		require.NoError(t, err)
		type timer struct {
			ts  int64
			key string
		}
		model := map[timer]bool{}
		first := func() (timer, bool) {
			var best timer
			ok := false
			for m := range model {
				if !ok || m.ts < best.ts || (m.ts == best.ts && m.key < best.key) {
					best, ok = m, true
				}
			}
			return best, ok
		}
		key := func() string { return "k" + itoa(int64(r.Intn(40))) + string(make([]byte, r.Intn(9))) }
		for step := 0; step < 3000; step++ {
			switch op := r.Intn(10); {
			case op < 5:
				k, ts := key(), int64(r.Intn(60))
				b.SetCurrentKey([]byte(k))
				tm.Register(ts)
				model[timer{ts, k}] = true
			case op < 7:
				k, ts := key(), int64(r.Intn(60))
				b.SetCurrentKey([]byte(k))
				tm.Delete(ts)
				delete(model, timer{ts, k})
			default:
				limit := int64(r.Intn(60))
				for {
					want, ok := first()
					if ok && want.ts > limit {
						ok = false
					}
					ts, got := tm.PopCurrent(limit)
					require.Equal(t, ok, got, "seed %d step %d", seed, step)
					if !ok {
						break
					}
					require.Equal(t, want, timer{ts, string(b.CurrentKey())}, "seed %d step %d", seed, step)
					delete(model, want)
					if r.Intn(4) == 0 { // from the firing: another timer at or before ts
						at := ts - int64(r.Intn(2))
						tm.Register(at)
						model[timer{at, want.key}] = true
					}
				}
			}
			require.Equal(t, len(model), tm.Len())
			want, ok := first()
			next, got := tm.Next()
			require.Equal(t, ok, got)
			if ok {
				require.Equal(t, want.ts, next)
			}
		}
	}
}
