package state

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parallelismPairs returns (maxParallelism, parallelism) pairs worth
// checking: small, prime, powers of two and their neighbours, Flink's
// default 128 and its upper bound 32768.
func parallelismPairs() [][2]int {
	var out [][2]int
	for _, maxPar := range []int{1, 2, 3, 7, 10, 64, 127, 128, 129, 1000, 4096, 32768} {
		for _, par := range []int{1, 2, 3, 4, 5, 7, 8, 16, 31, 100, 127, 128, 129, 999, 1000, 4096, 32768} {
			if par <= maxPar {
				out = append(out, [2]int{maxPar, par})
			}
		}
	}
	return out
}

// TestRangeForSubtaskPartitions: the ranges of all subtasks cover every key
// group exactly once, in order, with sizes differing by at most one, and
// SubtaskForKeyGroup names the subtask whose range holds the group.
func TestRangeForSubtaskPartitions(t *testing.T) {
	pairs := parallelismPairs()
	require.Greater(t, len(pairs), 100)
	for _, p := range pairs {
		maxPar, par := p[0], p[1]
		t.Run(fmt.Sprintf("max%d/par%d", maxPar, par), func(t *testing.T) {
			owner := make([]int, maxPar)
			for i := range owner {
				owner[i] = -1
			}
			next, minLen, maxLen := 0, maxPar+1, -1
			for s := 0; s < par; s++ {
				r := RangeForSubtask(maxPar, par, s)
				require.Equal(t, next, r.Start, "subtask %d starts where %d ended", s, s-1)
				require.Positive(t, r.Len(), "subtask %d owns no key group", s)
				for kg := r.Start; kg < r.End; kg++ {
					require.Equal(t, -1, owner[kg], "key group %d owned twice", kg)
					owner[kg] = s
				}
				next = r.End
				minLen, maxLen = min(minLen, r.Len()), max(maxLen, r.Len())
			}
			require.Equal(t, maxPar, next, "the last range ends at maxParallelism")
			require.LessOrEqual(t, maxLen-minLen, 1, "ranges are balanced")
			for kg, s := range owner {
				if SubtaskForKeyGroup(maxPar, par, kg) != s {
					require.Failf(t, "wrong owner", "SubtaskForKeyGroup(%d, %d, %d) = %d, range says %d",
						maxPar, par, kg, SubtaskForKeyGroup(maxPar, par, kg), s)
				}
			}
		})
	}
}

// TestRangeForSubtaskFlink pins a few ranges against Flink's
// KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex.
func TestRangeForSubtaskFlink(t *testing.T) {
	for _, tc := range []struct {
		maxPar, par, subtask int
		want                 KeyGroupRange
	}{
		{128, 1, 0, KeyGroupRange{0, 128}},
		{128, 2, 0, KeyGroupRange{0, 64}},
		{128, 2, 1, KeyGroupRange{64, 128}},
		{128, 3, 0, KeyGroupRange{0, 43}},
		{128, 3, 1, KeyGroupRange{43, 86}},
		{128, 3, 2, KeyGroupRange{86, 128}},
		{10, 4, 0, KeyGroupRange{0, 3}},
		{10, 4, 1, KeyGroupRange{3, 5}},
		{10, 4, 2, KeyGroupRange{5, 8}},
		{10, 4, 3, KeyGroupRange{8, 10}},
		{7, 7, 6, KeyGroupRange{6, 7}},
	} {
		assert.Equal(t, tc.want, RangeForSubtask(tc.maxPar, tc.par, tc.subtask), "%+v", tc)
	}
}

func TestKeyGroupRange(t *testing.T) {
	r := KeyGroupRange{Start: 3, End: 7}
	assert.Equal(t, 4, r.Len())
	assert.Equal(t, "[3,7)", r.String())
	for kg, want := range map[int]bool{2: false, 3: true, 6: true, 7: false, -1: false} {
		assert.Equal(t, want, r.Contains(kg), "Contains(%d)", kg)
	}
	for _, tc := range []struct {
		o    KeyGroupRange
		want bool
	}{
		{KeyGroupRange{0, 3}, false}, // touches at 3, half-open
		{KeyGroupRange{0, 4}, true},
		{KeyGroupRange{6, 10}, true},
		{KeyGroupRange{7, 10}, false},
		{KeyGroupRange{4, 5}, true}, // inside
		{KeyGroupRange{0, 100}, true},
	} {
		assert.Equal(t, tc.want, r.Overlaps(tc.o), "%s overlaps %s", r, tc.o)
		assert.Equal(t, tc.want, tc.o.Overlaps(r), "%s overlaps %s", tc.o, r)
	}
	assert.Zero(t, KeyGroupRange{}.Len())
}

// TestKeyGroupGolden pins the hash. It must NEVER change: the key group of a
// key decides which subtask owns it and under which group its state is
// stored in every checkpoint and savepoint ever written. A job restored by a
// build with another hash would look its keys up in the wrong groups (and
// route them to subtasks that were never given their state): counts would
// silently restart from zero. If this test fails, revert the hash; a new
// hash needs a new state file version and a migration.
func TestKeyGroupGolden(t *testing.T) {
	for _, tc := range []struct {
		key            string
		hash           uint32
		kg128, kg32768 int
		kg7            int
	}{
		// FNV-1a (32 bit) then murmur3's fmix32, checked by hand.
		{"", 0xab3e7c0b, 11, 31755, 4},
		{"a", 0x1a80b1b3, 51, 12723, 0},
		{"b", 0x82c46232, 50, 25138, 5},
		{"key-1", 0x63e4d497, 23, 21655, 0},
		{"user:42", 0x23bf9c12, 18, 7186, 2},
		{"hello world", 0xb90456ec, 108, 22252, 3},
		{"\x00", 0x0578ab1b, 27, 11035, 4},
		{"idx-1000", 0x2faa1e12, 18, 7698, 0},
	} {
		k := []byte(tc.key)
		assert.Equal(t, tc.hash, keyHash(k), "Hash(%q)", tc.key)
		assert.Equal(t, tc.kg128, KeyGroup(k, 128), "KeyGroup(%q, 128)", tc.key)
		assert.Equal(t, tc.kg32768, KeyGroup(k, 32768), "KeyGroup(%q, 32768)", tc.key)
		assert.Equal(t, tc.kg7, KeyGroup(k, 7), "KeyGroup(%q, 7)", tc.key)
		assert.Zero(t, KeyGroup(k, 1))
	}
}

// TestKeyGroupSpread: keys land in range and spread over every group.
func TestKeyGroupSpread(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, maxPar := range []int{1, 2, 7, 128, 300} {
		counts := make([]int, maxPar)
		n := max(200*maxPar, 20_000) // about 200 keys per group or more
		for i := 0; i < n; i++ {
			var k []byte
			if i%2 == 0 {
				k = []byte(fmt.Sprintf("key-%d", i)) // sequential keys, the common case
			} else {
				k = make([]byte, 4+rnd.IntN(16)) // distinct random keys
				for j := range k {
					k[j] = byte(rnd.Uint32())
				}
			}
			kg := KeyGroup(k, maxPar)
			require.True(t, kg >= 0 && kg < maxPar, "KeyGroup out of range: %d", kg)
			counts[kg]++
		}
		want := float64(n) / float64(maxPar)
		for kg, c := range counts {
			assert.InDelta(t, want, float64(c), want*0.25, "max %d: key group %d got %d keys, expected about %.0f", maxPar, kg, c, want)
		}
	}
}
