package state

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// states is the keyed state an operator in these tests declares: one of
// each kind.
type states struct {
	counts *Value[int64]        // value
	sums   *Reducing[int64]     // value, by reduction
	tags   *Map[string, []byte] // map
}

func declareStates(t testing.TB, b *KeyedBackend) states {
	t.Helper()
	counts, err := NewValue(b, "counts", Codec[int64](Int64Codec{}))
	require.NoError(t, err)
	sums, err := NewReducing(b, "sums", Codec[int64](Int64Codec{}), func(acc, v int64) (int64, error) { return acc + v, nil })
	require.NoError(t, err)
	tags, err := NewMap(b, "tags", Codec[string](StringCodec{}), Codec[[]byte](BytesCodec{}))
	require.NoError(t, err)
	return states{counts: counts, sums: sums, tags: tags}
}

// keyValues is what a test writes for key i and expects back after a restore.
type keyValues struct {
	count int64
	sum   int64
	tags  map[string]string // nil: no map entry for the key
}

func valuesFor(i int) keyValues {
	kv := keyValues{count: int64(i)*7 - 1000, sum: int64(i) * 3}
	if i%3 != 0 {
		kv.tags = map[string]string{"first": fmt.Sprint("f", i), "empty": ""}
		if i%2 == 0 {
			kv.tags["bin"] = "\x00\xff"
		}
	}
	return kv
}

// write stores kv for key through the declared states.
func (s states) write(t testing.TB, key []byte, kv keyValues) {
	t.Helper()
	s.counts.SetKey(key)
	s.counts.Put(kv.count)
	// Two additions so the reduce function is exercised.
	_, err := s.sums.Add(kv.sum - 1)
	require.NoError(t, err)
	_, err = s.sums.Add(1)
	require.NoError(t, err)
	for k, v := range kv.tags {
		s.tags.Put(k, []byte(v))
	}
}

// check asserts key holds kv.
func (s states) check(t testing.TB, key []byte, kv keyValues) {
	t.Helper()
	s.counts.SetKey(key)
	c, ok := s.counts.Get()
	require.True(t, ok, "key %q has no count", key)
	require.Equal(t, kv.count, c, "count of %q", key)
	sum, ok := s.sums.Get()
	require.True(t, ok, "key %q has no sum", key)
	require.Equal(t, kv.sum, sum, "sum of %q", key)
	got := map[string]string{}
	s.tags.Range(func(k string, v []byte) bool { got[k] = string(v); return true })
	if kv.tags == nil {
		require.Empty(t, got, "tags of %q", key)
	} else {
		require.Equal(t, kv.tags, got, "tags of %q", key)
	}
}

// keyedSubtasks builds the backends of an operator of parallelism par.
func keyedSubtasks(maxPar, par int) []*KeyedBackend {
	out := make([]*KeyedBackend, par)
	for i := range out {
		out[i] = NewKeyedBackend(maxPar, RangeForSubtask(maxPar, par, i))
	}
	return out
}

// snapshotAll encodes and decodes every subtask's state, as a checkpoint
// followed by a restore does.
func snapshotAll(t testing.TB, ops []*OperatorState, kbs []*KeyedBackend) []*Snapshot {
	t.Helper()
	n := max(len(ops), len(kbs))
	out := make([]*Snapshot, n)
	for i := range out {
		o := NewOperatorState()
		if i < len(ops) && ops[i] != nil {
			o = ops[i]
		}
		var kb *KeyedBackend
		if i < len(kbs) {
			kb = kbs[i]
		}
		data, _ := Encode(o, kb)
		s, err := Decode(data)
		require.NoError(t, err)
		out[i] = s
	}
	return out
}

// owner returns the backend among kbs whose range holds key.
func owner(kbs []*KeyedBackend, key []byte) *KeyedBackend {
	kg := KeyGroup(key, kbs[0].MaxParallelism())
	return kbs[SubtaskForKeyGroup(kbs[0].MaxParallelism(), len(kbs), kg)]
}

// listOf is a list of string items, for readable expectations.
func listOf(items ...string) [][]byte {
	out := make([][]byte, len(items))
	for i, s := range items {
		out[i] = []byte(s)
	}
	return out
}

func strs(items [][]byte) []string {
	out := make([]string, len(items))
	for i, b := range items {
		out[i] = string(b)
	}
	return out
}

var errReduce = errors.New("reduce failed")
