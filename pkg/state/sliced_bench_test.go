package state

import (
	"fmt"
	"testing"
)

// Snapshot cost of Sliced against Map when each key is in one slice of
// many (a long sliding window, keys that come and go): encodeGroup finds
// each key's values through its list of starts, not by probing every
// slice (that was 13 times Map's time here).
func BenchmarkSlicedEncodeSparse(b *testing.B) {
	const keys, slices = 100_000, 60
	for _, layout := range []string{"map", "sliced"} {
		b.Run(layout, func(b *testing.B) {
			kb := NewKeyedBackend(128, AllKeyGroups(128))
			var m *Map[int64, int64]
			var s *Sliced[int64]
			if layout == "map" {
				m, _ = NewMap[int64, int64](kb, "panes", Int64Codec{}, Int64Codec{})
			} else {
				s, _ = NewSliced[int64](kb, "panes", Int64Codec{})
			}
			for i := 0; i < keys; i++ {
				kb.SetCurrentKey([]byte(fmt.Sprint("key", i)))
				start := int64(i%slices) * 1000
				if m != nil {
					m.Put(start, 1)
				} else {
					s.Put(start, 1)
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

// BenchmarkSlicedEncodeDense: every key in every slice.
func BenchmarkSlicedEncodeDense(b *testing.B) {
	const keys, slices = 10_000, 60
	for _, layout := range []string{"map", "sliced"} {
		b.Run(layout, func(b *testing.B) {
			kb := NewKeyedBackend(128, AllKeyGroups(128))
			var m *Map[int64, int64]
			var s *Sliced[int64]
			if layout == "map" {
				m, _ = NewMap[int64, int64](kb, "panes", Int64Codec{}, Int64Codec{})
			} else {
				s, _ = NewSliced[int64](kb, "panes", Int64Codec{})
			}
			for i := 0; i < keys; i++ {
				kb.SetCurrentKey([]byte(fmt.Sprint("key", i)))
				for j := 0; j < slices; j++ {
					if m != nil {
						m.Put(int64(j)*1000, 1)
					} else {
						s.Put(int64(j)*1000, 1)
					}
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
