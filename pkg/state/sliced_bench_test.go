package state

import (
	"fmt"
	"testing"
)

// BenchmarkSlicedEncode: the snapshot cost of Sliced against Map, in the
// same run, when each key is in one slice of many (sparse: a long sliding
// window, keys that come and go) and when every key is in every slice
// (dense). encodeGroup finds each key's values through its list of
// starts; probing every slice for every key was 13 times Map's time when
// sparse.
func BenchmarkSlicedEncode(b *testing.B) {
	const slices = 60
	for _, c := range []struct {
		name   string
		keys   int
		starts func(i int) []int64
	}{
		{"sparse", 100_000, func(i int) []int64 { return []int64{int64(i%slices) * 1000} }},
		{"dense", 10_000, func(int) []int64 {
			all := make([]int64, slices)
			for j := range all {
				all[j] = int64(j) * 1000
			}
			return all
		}},
	} {
		for _, layout := range []string{"map", "sliced"} {
			b.Run(c.name+"/"+layout, func(b *testing.B) {
				kb := NewKeyedBackend(128, AllKeyGroups(128))
				var put func(start int64)
				if layout == "map" {
					m, _ := NewMap[int64, int64](kb, "panes", Int64Codec{}, Int64Codec{})
					put = func(start int64) { m.Put(start, 1) }
				} else {
					s, _ := NewSliced[int64](kb, "panes", Int64Codec{})
					put = func(start int64) { s.Put(start, 1) }
				}
				for i := 0; i < c.keys; i++ {
					kb.SetCurrentKey([]byte(fmt.Sprint("key", i)))
					for _, start := range c.starts(i) {
						put(start)
					}
				}
				ops := NewOperatorState()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					Encode(ops, kb)
				}
			})
		}
	}
}
