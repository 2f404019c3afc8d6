package daemon

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// The exception history keeps the last exceptionsKept failures, each once
// however often the job is seen, and says when older ones were dropped.
func TestExceptionLogIsBoundedAndCountsEachFailureOnce(t *testing.T) {
	var l exceptionLog
	t0 := time.Unix(1000, 0)
	for i := range exceptionsKept + 4 {
		at := t0.Add(time.Duration(i) * time.Second)
		info := api.JobInfo{State: api.StateFailing, Error: fmt.Sprintf("failure %d", i), ErrorTime: &at, Restarts: i}
		l.note(&info)
		info.State = api.StateRestarting
		l.note(&info) // seen again: the same failure
	}
	got := l.newestFirst()
	require.True(t, got.Truncated)
	require.Len(t, got.Entries, exceptionsKept)
	require.Equal(t, fmt.Sprintf("failure %d", exceptionsKept+3), got.Entries[0].Exception)
	require.Equal(t, exceptionsKept+3, got.Entries[0].Attempt)
	require.Equal(t, "failure 4", got.Entries[exceptionsKept-1].Exception)

	var back exceptionLog
	back.restore(l.entries, l.truncated)
	require.Equal(t, got, back.newestFirst())
	at := t0.Add(time.Hour)
	back.note(&api.JobInfo{State: api.StateRunning, Error: "later", ErrorTime: &at, Restarts: 30})
	require.Equal(t, 29, back.newestFirst().Entries[0].Attempt, "seen only once the next attempt ran")
}
