package join

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// A join's state is its buffered rows per key and side: a change of
// either side's key or input, of the kind of join, of its bounds or its
// window is refused with its reason.
func TestJoinMeaningChanges(t *testing.T) {
	base := commonOptions{Left: sideSpec{From: "orders", Key: "customer"}, Right: sideSpec{From: "payments", Key: "customer"}}
	interval := func(o commonOptions, lower, upper int64) *runtime.StateMeaning {
		m := commonMeaning(o)
		m.Values["lower"], m.Values["upper"] = boundMeaning(lower), boundMeaning(upper)
		return m
	}
	was := interval(base, -5000, 5000)
	cases := []struct {
		name string
		now  *runtime.StateMeaning
		want []string
		why  string
	}{
		{"same", interval(base, -5000, 5000), nil, ""},
		{"inner written out", interval(commonOptions{Left: base.Left, Right: base.Right, How: "inner"}, -5000, 5000), nil, ""},
		{"key reformatted", interval(commonOptions{Left: sideSpec{From: "orders", Key: " customer"}, Right: base.Right}, -5000, 5000), nil, ""},
		{"left key", interval(commonOptions{Left: sideSpec{From: "orders", Key: "account"}, Right: base.Right}, -5000, 5000), []string{"left.key"}, "stored under the key customer"},
		{"sides swapped", interval(commonOptions{Left: sideSpec{From: "payments", Key: "customer"}, Right: sideSpec{From: "orders", Key: "customer"}}, -5000, 5000),
			[]string{"left.from", "right.from"}, "swapping the sides"},
		{"how", interval(commonOptions{Left: base.Left, Right: base.Right, How: "left"}, -5000, 5000), []string{"how"}, "inner join, not a left join"},
		{"upper", interval(base, -5000, 10000), []string{"upper"}, "upper 5s"},
		{"until instead of upper", interval(base, -5000, unbounded), []string{"upper"}, "upper (none)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			changes := runtime.CompareMeaning(was.Version, was.Values, c.now)
			var names []string
			for _, ch := range changes {
				require.False(t, ch.Safe)
				names = append(names, ch.Name)
			}
			require.Equal(t, c.want, names)
			if c.why != "" {
				require.Contains(t, changes[0].Why, c.why)
			}
		})
	}
}
