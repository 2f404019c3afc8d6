package expr

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// dupRecords repeat a member; encoding/json reads the last of each.
var dupRecords = []string{
	`{"a":1,"a":2,"b":3}`,
	`{"b":4,"a":2,"b":3}`,
	`{"a":2,"b":3,"a":1,"a":2}`,
	`{"a":1,"b":3,"\u0061":2}`,
}

// A member that appears twice is read as encoding/json reads it, the
// last one wins, on every path: the native one, the VM's (over the
// scanner's map), a join's rows and a join side's projection. A filter
// `b == 3` on {"a":1,"a":2,"b":3} used to be false where a read a and b.
func TestDuplicateMembersLastWins(t *testing.T) {
	for _, rec := range dupRecords {
		var want struct{ A, B int }
		require.NoError(t, json.Unmarshal([]byte(rec), &want))
		require.Equal(t, want, struct{ A, B int }{2, 3}, "the records are written so")
		for _, src := range []string{`b == 3`, `a == 2 && b == 3`, `b == 3 && a == 2`, `a + b == 5`} {
			p, err := Compile(src, Bool)
			require.NoError(t, err)
			for name, q := range map[string]*Program{"native": p, "vm": vmOnly(p)} {
				got, err := q.EvalBool(&runtime.Record{Value: []byte(rec)})
				require.NoError(t, err)
				require.True(t, got, "%s %s over %s", name, src, rec)
			}
			v, err := p.Eval(&runtime.Record{Value: []byte(rec)})
			require.NoError(t, err)
			require.Equal(t, true, v, "%s over %s", src, rec)
		}
		// The same over a join's rows, whole and projected.
		for _, src := range []string{`left.b == 3`, `left.a == 2 && left.b == 3`, `left.a + left.b == 5`} {
			e, err := CompileRowExpr(src, Bool, []string{"left", "right"})
			require.NoError(t, err)
			s := NewRowSet([]string{"left", "right"}, e)
			require.NoError(t, s.Load([]byte(rec), nil))
			got, err := s.EvalBool(0)
			require.NoError(t, err)
			require.True(t, got, "rows: %s over %s", src, rec)
			row := []byte(rec)
			if out, ok := s.Project(0, nil, []byte(rec)); ok {
				row = out
			}
			require.NoError(t, s.Load(row, nil))
			got, err = s.EvalBool(0)
			require.NoError(t, err)
			require.True(t, got, "projected: %s over %s (projection %s)", src, rec, row)
		}
	}
}
