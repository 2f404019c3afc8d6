package api

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A job is addressed by its id, a unique id prefix or its unique name.
func TestFindJob(t *testing.T) {
	jobs := []JobRef{
		{ID: "3f2a1c9e", Name: "user-windows", State: StateRunning},
		{ID: "3f9b0d12", Name: "clicks", State: StateCanceled},
		{ID: "7c1d4e55", Name: "clicks", State: StateRunning},
		{ID: "8a0b1c2d", Name: "twice", State: StateCanceled},
		{ID: "9e8d7c6b", Name: "twice", State: StateFailed},
		{ID: "aa", Name: "aab", State: StateRunning},
		{ID: "aab00000", Name: "other", State: StateRunning},
	}
	for _, c := range []struct{ ref, want, err string }{
		{"3f2a1c9e", "3f2a1c9e", ""},
		{"3f2", "3f2a1c9e", ""},
		{"user-windows", "3f2a1c9e", ""},
		{"clicks", "7c1d4e55", ""}, // the earlier run has ended
		{"aa", "aa", ""},           // an exact id wins over prefixes
		{"3f", "", `job "3f" is ambiguous: it matches 3f2a1c9e ("user-windows", RUNNING), 3f9b0d12 ("clicks", CANCELED)`},
		{"twice", "", `job "twice" is ambiguous: it matches 8a0b1c2d ("twice", CANCELED), 9e8d7c6b ("twice", FAILED)`},
		{"aab", "", `job "aab" is ambiguous: it matches aa ("aab", RUNNING), aab00000 ("other", RUNNING)`},
		{"nope", "", `no job with id, id prefix or name "nope"`},
		{"", "", "no job id or name given"},
	} {
		got, err := FindJob(c.ref, jobs)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, c.ref)
			continue
		}
		require.NoError(t, err, c.ref)
		require.Equal(t, c.want, got, c.ref)
	}
}
