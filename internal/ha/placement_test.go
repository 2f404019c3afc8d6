package ha

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPlace(t *testing.T) {
	a, b, c := Member{Name: "a"}, Member{Name: "b"}, Member{Name: "c"}
	for _, tc := range []struct {
		name    string
		members []Member
		owned   map[string]int
		want    string
	}{
		{"no members", nil, nil, ""},
		{"one", []Member{b}, nil, "b"},
		{"ties by name", []Member{c, b, a}, nil, "a"},
		{"fewest jobs", []Member{a, b, c}, map[string]int{"a": 2, "b": 1, "c": 1}, "b"},
		{"owners that left do not count", []Member{b, c}, map[string]int{"a": 0, "b": 3, "c": 4}, "b"},
		{"draining is skipped", []Member{{Name: "a", Draining: true}, b}, map[string]int{"b": 9}, "b"},
		{"all draining", []Member{{Name: "a", Draining: true}}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Place(tc.members, tc.owned))
		})
	}
}

func TestAssign(t *testing.T) {
	a, b, c := Member{Name: "a"}, Member{Name: "b"}, Member{Name: "c"}
	for _, tc := range []struct {
		name    string
		orphans []string
		members []Member
		owned   map[string]int
		want    map[string]string
	}{
		{"nothing orphaned", nil, []Member{a}, nil, map[string]string{}},
		{"spread over the survivors", []string{"j3", "j1", "j2"}, []Member{b, c}, nil,
			map[string]string{"j1": "b", "j2": "c", "j3": "b"}},
		{"fill the least loaded first", []string{"j1", "j2", "j3"}, []Member{a, b, c}, map[string]int{"a": 2, "b": 1},
			map[string]string{"j1": "c", "j2": "b", "j3": "c"}},
		{"nobody may take them", []string{"j1"}, []Member{{Name: "a", Draining: true}}, nil, map[string]string{}},
		{"a draining owner's jobs go elsewhere", []string{"j1", "j2"}, []Member{{Name: "a", Draining: true}, b}, map[string]int{"a": 0},
			map[string]string{"j1": "b", "j2": "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owned := map[string]int{}
			for k, v := range tc.owned {
				owned[k] = v
			}
			assert.Equal(t, tc.want, Assign(tc.orphans, tc.members, tc.owned))
			if tc.owned != nil {
				assert.Equal(t, owned, tc.owned, "Assign must not change its input")
			}
		})
	}
}
