package runtime_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

func TestCompareMeaning(t *testing.T) {
	safeRename := func(name, was, now string) (bool, string) {
		if name == "label" {
			return true, "only a label"
		}
		return false, ""
	}
	cases := []struct {
		name       string
		wasVersion int
		was        map[string]string
		now        *runtime.StateMeaning
		want       []runtime.MeaningChange
	}{
		{"equal", 1, map[string]string{"size": "10s"}, &runtime.StateMeaning{Version: 1, Values: map[string]string{"size": "10s"}}, nil},
		{"nothing on either side", 0, nil, nil, nil},
		{"changed value, no judge", 1, map[string]string{"size": "10s"}, &runtime.StateMeaning{Version: 1, Values: map[string]string{"size": "1m"}},
			[]runtime.MeaningChange{{Name: "size", Was: "10s", Now: "1m", Why: "the restored state is only valid with the value it was written with"}}},
		{"value only now", 1, nil, &runtime.StateMeaning{Version: 1, Values: map[string]string{"slide": "5s"}},
			[]runtime.MeaningChange{{Name: "slide", Now: "5s", Why: "the restored state is only valid with the value it was written with"}}},
		{"value only before", 1, map[string]string{"slide": "5s"}, &runtime.StateMeaning{Version: 1},
			[]runtime.MeaningChange{{Name: "slide", Was: "5s", Why: "the restored state is only valid with the value it was written with"}}},
		{"judged safe", 1, map[string]string{"label": "a", "size": "1s"}, &runtime.StateMeaning{Version: 1, Values: map[string]string{"label": "b", "size": "2s"}, Judge: safeRename},
			[]runtime.MeaningChange{{Name: "label", Was: "a", Now: "b", Safe: true, Why: "only a label"},
				{Name: "size", Was: "1s", Now: "2s", Why: "the restored state is only valid with the value it was written with"}}},
		{"safe without a reason is refused", 1, map[string]string{"x": "a"}, &runtime.StateMeaning{Version: 1, Values: map[string]string{"x": "b"},
			Judge: func(string, string, string) (bool, string) { return true, "" }},
			[]runtime.MeaningChange{{Name: "x", Was: "a", Now: "b", Why: "the restored state is only valid with the value it was written with"}}},
		{"version", 1, nil, &runtime.StateMeaning{Version: 2, Judge: func(string, string, string) (bool, string) { return true, "judge not asked" }},
			[]runtime.MeaningChange{{Name: "version", Was: "1", Now: "2", Why: "the operator's state layout changed between the flinkgo that wrote the snapshot and this one"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, runtime.CompareMeaning(c.wasVersion, c.was, c.now))
		})
	}
}

func TestStateMeaningWith(t *testing.T) {
	var none *runtime.StateMeaning
	require.Equal(t, map[string]string{"key": "k"}, none.With("key", "k").Values)
	m := &runtime.StateMeaning{Version: 3, Values: map[string]string{"a": "1"}}
	w := m.With("key", "k")
	require.Equal(t, 3, w.Version)
	require.Equal(t, map[string]string{"a": "1", "key": "k"}, w.Values)
	require.Equal(t, map[string]string{"a": "1"}, m.Values, "With copies")
}
