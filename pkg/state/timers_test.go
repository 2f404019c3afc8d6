package state

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTimersOrderDedupeDelete(t *testing.T) {
	b := NewKeyedBackend(128, AllKeyGroups(128))
	tm, err := NewTimers(b, "t")
	require.NoError(t, err)
	at := func(key string, ts ...int64) {
		b.SetCurrentKey([]byte(key))
		for _, v := range ts {
			tm.Register(v)
		}
	}
	at("a", 30, 10, 10)
	at("b", 20, 10)
	require.Equal(t, 4, tm.Len())
	b.SetCurrentKey([]byte("a"))
	tm.Delete(30)
	tm.Delete(99) // none
	require.Equal(t, 3, tm.Len())
	next, ok := tm.Next()
	require.True(t, ok)
	require.Equal(t, int64(10), next)
	var fired []string
	for {
		k, ts, ok := tm.Pop(20)
		if !ok {
			break
		}
		fired = append(fired, k+"@"+itoa(ts))
	}
	require.Equal(t, []string{"a@10", "b@10", "b@20"}, fired, "timestamp order, then key")
	require.Equal(t, 0, tm.Len())
	_, ok = tm.Next()
	require.False(t, ok)
	// Registered again after firing: a new timer.
	at("a", 10)
	require.Equal(t, 1, tm.Len())
}

func TestTimersCompactAfterChurn(t *testing.T) {
	b := NewKeyedBackend(128, AllKeyGroups(128))
	tm, err := NewTimers(b, "t")
	require.NoError(t, err)
	b.SetCurrentKey([]byte("k"))
	for i := int64(0); i < 10000; i++ {
		tm.Register(i)
		tm.Delete(i)
	}
	tm.Register(5)
	require.Less(t, tm.q.len(), 1000, "deleted entries do not pile up")
	_, ts, ok := tm.Pop(100)
	require.True(t, ok)
	require.Equal(t, int64(5), ts)
}

// Timers are keyed state: a snapshot restored at another parallelism gives
// each subtask the timers of its key groups.
func TestTimersSnapshotAndRescale(t *testing.T) {
	b := NewKeyedBackend(128, AllKeyGroups(128))
	tm, err := NewTimers(b, "t")
	require.NoError(t, err)
	want := map[string]int64{}
	for i := 0; i < 200; i++ {
		k := "key" + itoa(int64(i))
		b.SetCurrentKey([]byte(k))
		tm.Register(int64(1000 + i))
		tm.Register(int64(5000 + i))
		want[k] = int64(1000 + i)
	}
	snap := snapshotAll(t, nil, []*KeyedBackend{b})[0]
	got := map[string][]int64{}
	total := 0
	for sub := 0; sub < 3; sub++ {
		nb := NewKeyedBackend(128, RangeForSubtask(128, 3, sub))
		nb.Restore([]*Snapshot{snap})
		rt, err := NewTimers(nb, "t")
		require.NoError(t, err)
		total += rt.Len()
		for {
			k, ts, ok := rt.Pop(1 << 62)
			if !ok {
				break
			}
			require.True(t, nb.Range().Contains(KeyGroup([]byte(k), 128)), "key %s on subtask %d", k, sub)
			got[k] = append(got[k], ts)
		}
	}
	require.Equal(t, 400, total)
	for k, first := range want {
		require.Equal(t, []int64{first, first + 4000}, got[k], k)
	}
	require.Equal(t, int64(200), b.NumTimerKeys())
	require.Equal(t, int64(0), b.NumKeys())
}

func itoa(v int64) string {
	return string(appendInt(nil, v))
}

func appendInt(b []byte, v int64) []byte {
	if v >= 10 {
		b = appendInt(b, v/10)
	}
	return append(b, byte('0'+v%10))
}
