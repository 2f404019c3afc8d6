package window

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// topOf keeps the ties at the greatest result; a null never is the
// greatest; results it cannot order (a string and a number) are all kept.
func TestTopOfKeepsTheGreatest(t *testing.T) {
	sum := aggregate{Name: "s", Func: aggSum, Args: []string{"x"}}
	mx := aggregate{Name: "m", Func: aggMax, Args: []string{"x"}}
	aggs := []aggregate{{Name: "n", Func: aggCount}, sum, mx}
	acc := func(vals ...any) *accum {
		a := newAcc(aggs)
		for _, v := range vals {
			n := v
			if _, ok := v.(string); ok {
				n = nil // no sum of strings
			}
			require.NoError(t, a.Add(aggs, []any{n, v}, 1))
		}
		return a
	}
	pick := func(k int, accs ...*accum) (kept []int) {
		top := newTopOf(aggs, k+1)
		for _, a := range accs {
			top.see(a)
		}
		for i, a := range accs {
			if top.keeps(a) {
				kept = append(kept, i)
			}
		}
		return kept
	}
	ints := []*accum{acc(int64(1)), acc(int64(2), int64(3)), acc(int64(4), int64(1)), acc(nil)}
	require.Equal(t, []int{1, 2}, pick(0, ints...), "count(): the ties at 2 records")
	require.Equal(t, []int{1, 2}, pick(1, ints...), "sum: 5 twice; a sum of nulls is null")
	require.Equal(t, []int{2}, pick(2, ints...), "max")
	floats := []*accum{acc(1.5), acc(int64(2)), acc(2.0), acc(0.5, 0.5)}
	require.Equal(t, []int{1, 2}, pick(1, floats...), "an integer sum against float sums")
	strs := []*accum{acc("b"), acc("a"), acc("b")}
	require.Equal(t, []int{0, 2}, pick(2, strs...), "strings order as strings")
	require.Equal(t, []int{0, 1, 2}, pick(2, acc("b"), acc(int64(7)), acc("a")), "a string and a number: all kept")
	require.Equal(t, []int{0, 1}, pick(1, acc(nil), acc(nil)), "all null: nothing to order by")
	big := []*accum{acc(int64(1 << 53)), acc(int64(1<<53 + 1)), acc(int64(5))}
	require.Equal(t, []int{0, 1}, pick(1, big...), "integers a float cannot tell apart tie, as max() sees them")
	var none *topOf
	require.True(t, none.keeps(acc(int64(1))), "no keepMax keeps every result")
}
