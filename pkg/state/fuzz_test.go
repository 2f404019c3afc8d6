package state

import (
	"testing"
)

// FuzzDecode: no input makes Decode, a restore or a declaration panic, and
// whatever decodes can be restored, snapshotted again and decoded again.
// With fix set the checksum is recomputed first, so the fuzzer gets past
// it into the parser (a checksum collision or a buggy writer could).
// The seed corpus in testdata/fuzz/FuzzDecode runs with every `go test`:
//
//	go test ./pkg/state -run '^$' -fuzz FuzzDecode -fuzztime 1m
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix {
			data = fixChecksum(data)
		}
		s, err := Decode(data)
		if err != nil {
			if s != nil {
				t.Fatalf("Decode returned a snapshot and an error %v", err)
			}
			return
		}
		// Operator state redistributes at any parallelism.
		for _, par := range []int{1, 2, 3} {
			for i := 0; i < par; i++ {
				RestoreOperatorState([]*Snapshot{s, nil}, i, par)
			}
		}
		if !s.keyed || s.maxParallelism < 1 || s.maxParallelism > 1<<15 {
			return
		}
		b := NewKeyedBackend(s.maxParallelism, RangeForSubtask(s.maxParallelism, 1, 0))
		b.Restore([]*Snapshot{s})
		for _, tb := range s.tables {
			// Errors are fine (wrong kind, bad values); panics are not.
			if tb.Kind == kindMap {
				_, _ = NewMap(b, tb.Name, Codec[string](StringCodec{}), Codec[[]byte](BytesCodec{}))
			} else {
				_, _ = NewValue(b, tb.Name, Codec[int64](Int64Codec{}))
			}
		}
		again, _ := Encode(NewOperatorState(), b)
		if _, err := Decode(again); err != nil {
			t.Fatalf("state restored from a valid file does not encode to a valid file: %v", err)
		}
	})
}
