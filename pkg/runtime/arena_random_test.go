package runtime

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// Random sequences of Alloc/Keep, Copy, Append (some outgrowing their
// max) and Rewind: every slice handed out since the last Rewind keeps its
// bytes and overlaps no other, and the blocks kept are distinct.
func TestArenaRandomUse(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		var a Arena
		type live struct {
			v    []byte
			want []byte
		}
		var lives []live
		fill := func(n int) []byte {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			return b
		}
		size := func() int {
			switch r.IntN(10) {
			case 0:
				return arenaBlock + r.IntN(arenaBlock)
			case 1:
				return arenaBlock - r.IntN(64)
			case 2:
				return 0
			}
			return 1 + r.IntN(2000)
		}
		for step := 0; step < 1500; step++ {
			var v []byte
			var want []byte
			switch r.IntN(12) {
			case 0:
				a.Rewind()
				lives = lives[:0]
				continue
			case 1, 2, 3:
				want = fill(size())
				v = a.Copy(want)
			case 4, 5, 6, 7:
				max := size()
				n := r.IntN(max + 1)
				if r.IntN(8) == 0 {
					n = max + 1 + r.IntN(100) // outgrows
				}
				want = fill(n)
				v = a.Append(max, func(d []byte) []byte { return append(d, want...) })
			default:
				n := size()
				dst := a.Alloc(n)
				k := r.IntN(n + 1)
				want = fill(k)
				out := append(dst, want...)
				v = a.Keep(dst, out)
			}
			if !bytes.Equal(v, want) {
				t.Fatalf("seed %d step %d: got a value other than written", seed, step)
			}
			lives = append(lives, live{v, want})
			for i, l := range lives {
				if !bytes.Equal(l.v, l.want) {
					t.Fatalf("seed %d step %d: live value %d of %d overwritten", seed, step, i, len(lives))
				}
			}
			// The new value overlaps no earlier live one (its capacity
			// included: an append to a value must not reach another).
			if cap(v) > 0 {
				s0 := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
				e0 := s0 + uintptr(cap(v))
				for i, l := range lives[:len(lives)-1] {
					if cap(l.v) == 0 {
						continue
					}
					s1 := uintptr(unsafe.Pointer(unsafe.SliceData(l.v)))
					e1 := s1 + uintptr(cap(l.v))
					if s0 < e1 && s1 < e0 {
						t.Fatalf("seed %d step %d: new value [len %d cap %d] overlaps live value %d [len %d cap %d]", seed, step, len(v), cap(v), i, len(l.v), cap(l.v))
					}
				}
			}
			seen := map[*byte]bool{}
			for _, b := range a.blocks {
				p := unsafe.SliceData(b[:1])
				if seen[p] {
					t.Fatalf("seed %d step %d: a block kept twice", seed, step)
				}
				seen[p] = true
				if cap(b) != arenaBlock {
					t.Fatalf("seed %d step %d: kept block of cap %d", seed, step, cap(b))
				}
			}
		}
	}
}
