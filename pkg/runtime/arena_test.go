package runtime

import (
	goruntime "runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// Keep returns the unused room of an Alloc to the arena, and leaves a
// result that outgrew it as it is: later slices never overlap earlier ones.
func TestArenaKeep(t *testing.T) {
	var a Arena
	dst := a.Alloc(16)
	got := a.Keep(dst, append(dst, "abc"...))
	require.Equal(t, "abc", string(got))
	require.Equal(t, 3, cap(got), "the result cannot grow into the next slice")

	next := a.Alloc(4)
	next = a.Keep(next, append(next, "defghijk"...)) // outgrew its room
	require.Equal(t, "defghijk", string(next))
	after := a.Copy([]byte("xyz"))
	require.Equal(t, "abc", string(got))
	require.Equal(t, "defghijk", string(next))
	require.Equal(t, "xyz", string(after))
	require.Equal(t, &got[:cap(got)][2], &got[2])
	require.Equal(t, &dst[:4][3], &after[:1][0], "the room the outgrown result did not use was given back")
}

// A block comes from memory the runtime does not clear, yet it is an
// ordinary heap object: what is written stays, through collections and the
// allocations of other blocks, for as long as a slice of it is held.
func TestArenaBlocksOutliveCollections(t *testing.T) {
	var a Arena
	var held [][]byte
	for i := 0; i < 4*arenaBlock/100; i++ {
		v := a.Alloc(100)
		for j := 0; j < 100; j++ {
			v = append(v, byte(i+j))
		}
		held = append(held, v)
		if i%97 == 0 {
			goruntime.GC()
		}
	}
	goruntime.GC()
	for i, v := range held {
		require.Len(t, v, 100)
		for j, c := range v {
			if c != byte(i+j) {
				t.Fatalf("record %d byte %d is %d, want %d", i, j, c, byte(i+j))
			}
		}
	}
	b := makeNoZero(arenaBlock)
	require.Equal(t, 0, len(b))
	require.Equal(t, arenaBlock, cap(b))
}

// After Rewind the arena hands out the bytes of its blocks again, in the
// order it filled them, keeping no more blocks than it filled between two
// Rewinds; a value bigger than a block gets memory of its own, never kept.
func TestArenaRewindReusesItsBlocks(t *testing.T) {
	var a Arena
	first := a.Copy([]byte("before any rewind"))
	a.Rewind()
	require.Equal(t, &first[0], &a.Alloc(1)[:1][0], "the block in use when reuse starts is reused")
	const n = 3*arenaBlock/1000 + 2               // values of 1000 bytes: 4 blocks
	round := func() (addrs []*byte, big []byte) { // big stays referenced
		a.Rewind()
		for i := range n {
			v := a.Copy(make([]byte, 1000))
			addrs = append(addrs, &v[0])
			if i == n/2 {
				big = a.Copy(make([]byte, 2*arenaBlock))
			}
		}
		return addrs, big
	}
	want, big := round()
	require.Len(t, a.blocks, 4)
	for r := range 3 {
		got, b := round()
		require.Equal(t, want, got, "round %d: the same bytes, in the same order", r)
		require.NotSame(t, &big[0], &b[0], "a value bigger than a block is not reused")
		require.Len(t, a.blocks, 4, "no block more")
	}
}
