package file

import (
	"fmt"
	"io/fs"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/verify"
)

// faultRule fails every `every`-th call of point (by operator uid when
// uid is set), at most `times` times.
type faultRule struct {
	point string
	uid   string
	every int
	times int

	seen, fired int
}

// faultHook is a runtime.FaultHook driven by rules; safe for concurrent use.
type faultHook struct {
	mu    sync.Mutex
	rules []*faultRule
	// onFire, if set, runs (without the lock) after a rule fired.
	onFire func()
}

func (h *faultHook) Fire(point string, attrs ...any) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.rules {
		if r.point != point || r.uid != "" && (len(attrs) == 0 || attrs[0] != r.uid) {
			continue
		}
		r.seen++
		if r.seen%r.every == 0 && r.fired < r.times {
			r.fired++
			if h.onFire != nil {
				defer h.onFire() // runs with the lock held: it must not call back
			}
			return fmt.Errorf("injected fault %d/%d at %s %v", r.fired, r.times, point, attrs)
		}
	}
	return nil
}

// fired reports how often each rule fired, by point.
func (h *faultHook) fired() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for _, r := range h.rules {
		out[r.point] += r.fired
	}
	return out
}

// requireExactlyOnce checks, with the independent checker reading only
// finished files, that the output holds 1..n exactly once.
func requireExactlyOnce(t testing.TB, dir string, fsys fs.FS, n int64) *verify.Report {
	t.Helper()
	r, err := verify.Run(verify.Options{Path: dir, Field: "idx", FS: fsys})
	require.NoError(t, err)
	require.Truef(t, r.OK() && r.Records == n && r.First == 1 && r.Last == n,
		"output of %s: %d records, %d distinct, %d..%d, gaps %v, duplicates %d (e.g. %v), unparseable %v",
		dir, r.Records, r.Distinct, r.First, r.Last, r.Gaps, r.Duplicates, r.DuplicateSamples, r.UnparseableSamples)
	return r
}

func verifyRun(dir string) (*verify.Report, error) {
	return verify.Run(verify.Options{Path: dir, Field: "idx"})
}
