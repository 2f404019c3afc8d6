package postgrescdc_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOptionErrors: bad options are refused at submit, at their line, with
// what to write instead.
func TestOptionErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ ops, want string }{
		{"{uid: in, type: postgres-cdc, url: 'postgres://h/db', tables: []}", "test.yaml:4:67: operators[0].tables: list at least one table"},
		{"{uid: in, type: postgres-cdc, url: 'postgres://h/db', tables: [a.b.c]}", `operators[0].tables[0]: "a.b.c" is not [schema.]table`},
		{"{uid: in, type: postgres-cdc, url: 'postgres://h/db', tables: [a, public.a]}", "operators[0].tables[1]: table public.a is listed twice"},
		{"{uid: in, type: postgres-cdc, url: 'postgres://h/db', tables: [a], slot: My-Slot}", `operators[0].slot: "My-Slot" is not a replication slot name`},
		{"{uid: in, type: postgres-cdc, url: 'postgres://h/db', tables: [a], snapshot: always}", "operators[0].snapshot: must be initial"},
		{"{uid: in, type: postgres-cdc, url: 'postgres://h/db', tables: [a], parallelism: 2}", "operators[0].parallelism: a replication slot is one ordered stream"},
		{"{uid: in, type: postgres-cdc, tables: [a]}", "url"},
	} {
		_, err := compileSpec("name: x\ncheckpointing: {interval: 1s}\noperators:\n  - " + c.ops + "\n  - {uid: out, type: discard, from: [in]}\n")
		require.Error(t, err, c.ops)
		require.Contains(t, err.Error(), c.want, c.ops)
	}
	_, err := compileSpec("name: x\noperators:\n  - {uid: in, type: postgres-cdc, url: 'postgres://h/db', tables: [a]}\n  - {uid: out, type: discard, from: [in]}\n")
	require.ErrorContains(t, err, "enable checkpointing")
	_, err = compileSpec("name: x\ncheckpointing: {interval: 1s}\noperators:\n  - {uid: in, type: postgres-cdc, url: 'postgres://h/db', tables: [public.a, b]}\n  - {uid: out, type: discard, from: [in]}\n")
	require.NoError(t, err)
}
