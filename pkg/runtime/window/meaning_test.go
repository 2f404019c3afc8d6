package window

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

func TestAssignerMeaning(t *testing.T) {
	cases := []struct {
		kind                     Kind
		size, slide, gap, offset int64
		want                     map[string]string
	}{
		{Tumbling, 10_000, 0, 0, 0, map[string]string{"window.type": "tumbling", "window.size": "10s"}},
		{Tumbling, 60_000, 0, 0, 5_000, map[string]string{"window.type": "tumbling", "window.size": "1m0s", "window.offset": "5s"}},
		{Sliding, 60_000, 10_000, 0, 0, map[string]string{"window.type": "sliding", "window.size": "1m0s", "window.slide": "10s"}},
		{Session, 0, 0, 30_000, 0, map[string]string{"window.type": "session", "window.gap": "30s"}},
	}
	for _, c := range cases {
		a, err := newAssigner(c.kind, c.size, c.slide, c.gap, c.offset)
		require.NoError(t, err)
		got := map[string]string{}
		a.AddMeaning(got)
		require.Equal(t, c.want, got)
	}
}

// Every change of a window's meaning is refused, each with its reason,
// but renaming an aggregate, which is safe and said so.
func TestWindowMeaningChanges(t *testing.T) {
	was := config{assigner: mustAssigner(t, Tumbling, 10_000), aggs: []aggregate{{Name: "n", Func: aggCount}, {Name: "s", Func: aggSum, Args: []string{"amount"}}}}
	cases := []struct {
		name string
		now  config
		want []string // names refused
		why  string   // in the first reason
	}{
		{"same", was, nil, ""},
		{"renamed", config{assigner: was.assigner, aggs: []aggregate{{Name: "count", Func: aggCount}, {Name: "total", Func: aggSum, Args: []string{" amount "}}}}, nil, "read by its position"},
		{"size", config{assigner: mustAssigner(t, Tumbling, 60_000), aggs: was.aggs}, []string{"window.size"}, "misaligned"},
		{"processing", config{assigner: was.assigner, aggs: was.aggs, processing: true}, []string{"time"}, "would not fire in processing time"},
		{"added", config{assigner: was.assigner, aggs: append(append([]aggregate{}, was.aggs...), aggregate{Name: "m", Func: aggMax, Args: []string{"x"}})},
			[]string{"aggregate"}, "adding an aggregate is not supported"},
		{"argument", config{assigner: was.assigner, aggs: []aggregate{was.aggs[0], {Name: "s", Func: aggSum, Args: []string{"price"}}}},
			[]string{"aggregate"}, "sum(amount)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := was.meaning()
			changes := runtime.CompareMeaning(old.Version, old.Values, c.now.meaning())
			var names []string
			for _, ch := range changes {
				if ch.Safe {
					require.Equal(t, "aggregate.names", ch.Name)
					continue
				}
				names = append(names, ch.Name)
			}
			require.Equal(t, c.want, names)
			if c.why != "" {
				require.Contains(t, changes[0].Why, c.why)
			}
		})
	}
}

func mustAssigner(t *testing.T, k Kind, size int64) Assigner {
	a, err := newAssigner(k, size, 0, 0, 0)
	require.NoError(t, err)
	return a
}
