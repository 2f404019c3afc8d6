package daemon_test

import (
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

const tinyJob = `
name: tiny
operators:
  - {uid: gen, type: datagen, count: 5}
  - {uid: out, type: discard, from: [gen]}
`

func heapInuse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// submitAndWait submits n tiny bounded jobs and waits until none is active.
func (x *dash) submitAndWait(n int) {
	x.t.Helper()
	for range n {
		_, err := x.d.Submit(api.SubmitRequest{Spec: tinyJob, File: "tiny.yaml"})
		require.NoError(x.t, err)
	}
	require.Eventually(x.t, func() bool {
		for _, j := range x.d.List(true) {
			if j.State.Active() {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond)
}

// series counts the Prometheus series /metrics serves.
func (x *dash) series() int {
	_, _, body := x.do(http.MethodGet, "/metrics")
	return strings.Count(body, "\nflinkgo_")
}

// A daemon that runs many short jobs holds a bounded number of them:
// ended jobs serve no metrics, the job store keeps jobstore.max-capacity
// of them (in memory and in the registry), and what it keeps is small.
func TestEndedJobsAreBounded(t *testing.T) {
	const capacity, jobs = 40, 200
	x := startDashWith(t, "jobstore.max-capacity: 40\nrest.submit-rate-limit: 0\n")
	x.submitAndWait(capacity) // the store full, the heap warm
	baseSeries, baseHeap := x.series(), heapInuse()
	x.submitAndWait(jobs)
	heap := heapInuse()

	// The last jobs' watchers trim just after their jobs end; a dropped
	// job leaves the list first and its directory just after.
	home := filepath.Dir(x.sp)
	var dirs []os.DirEntry
	require.Eventually(t, func() bool {
		var err error
		dirs, err = os.ReadDir(filepath.Join(home, "jobs"))
		require.NoError(t, err)
		return len(x.d.List(true)) == capacity && len(dirs) == capacity
	}, 10*time.Second, 10*time.Millisecond, "ended jobs past jobstore.max-capacity are dropped, and their registry directories with them")
	require.Equal(t, baseSeries, x.series(), "ended jobs serve no series")
	require.LessOrEqual(t, baseSeries, 60, "only the daemon's own series remain")
	// 200 more jobs ended, the store holds as many as before: the heap
	// stays where it was, within 2 MB (it grew by ~120 KB a job before).
	require.Less(t, heap-baseHeap, int64(2<<20), "heap grew by %d bytes over %d ended jobs", heap-baseHeap, jobs)
}

// Submissions beyond rest.submit-rate-limit are refused with 429 and a
// message that names the key; other clients' are not.
func TestSubmissionsAreRateLimited(t *testing.T) {
	x := startDashWith(t, "rest.submit-rate-limit: 2\n")
	var refused int
	var msg string
	for range 8 {
		code, _, body := x.do(http.MethodPost, "/v1/jobs", "Authorization: Bearer "+x.d.Token())
		if code == http.StatusTooManyRequests {
			refused++
			msg = body
		}
	}
	require.GreaterOrEqual(t, refused, 3, "a burst of 8 against 2 a second (bursts of 4)")
	require.Contains(t, msg, "too many job submissions")
	require.Contains(t, msg, "rest.submit-rate-limit")
	require.Contains(t, msg, `"code": "too_many_requests"`)
}
