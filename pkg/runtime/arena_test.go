package runtime

import (
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
