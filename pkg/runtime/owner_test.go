package runtime_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// The ownership rule, case by case.
func TestOutputClaimCheck(t *testing.T) {
	a := &runtime.OutputOwner{Job: "a", Operator: "files"}
	for _, c := range []struct {
		name  string
		claim runtime.OutputClaim
		owner *runtime.OutputOwner
		empty bool
		want  error
	}{
		{"own directory", runtime.OutputClaim{Job: "a"}, a, false, nil},
		{"another job's", runtime.OutputClaim{Job: "b"}, a, false, runtime.ErrOutputOwned},
		{"another job's, even empty", runtime.OutputClaim{Job: "b"}, a, true, runtime.ErrOutputOwned},
		{"restoring another job's snapshot", runtime.OutputClaim{Job: "b", Restoring: true, RestoredJob: "c"}, a, false, runtime.ErrOutputOwned},
		{"continuing the owner from its snapshot", runtime.OutputClaim{Job: "b", Restoring: true, RestoredJob: "a"}, a, false, nil},
		{"taking it over, allowed", runtime.OutputClaim{Job: "b", AllowNonEmpty: true}, a, false, nil},
		{"empty, no marker", runtime.OutputClaim{Job: "b"}, nil, true, nil},
		{"files, no marker", runtime.OutputClaim{Job: "b"}, nil, false, runtime.ErrOutputNotEmpty},
		{"files, no marker, restoring", runtime.OutputClaim{Job: "b", Restoring: true}, nil, false, nil},
		{"files, no marker, allowed", runtime.OutputClaim{Job: "b", AllowNonEmpty: true}, nil, false, nil},
		// Free to take: the owner has ended and left nothing but its marker.
		{"ended owner, marker only", runtime.OutputClaim{Job: "b", OwnerEnded: ended("a")}, a, true, nil},
		{"ended owner, marker only, restoring another's snapshot", runtime.OutputClaim{Job: "b", Restoring: true, RestoredJob: "c", OwnerEnded: ended("a")}, a, true, nil},
		{"ended owner with files (committed or part files)", runtime.OutputClaim{Job: "b", OwnerEnded: ended("a")}, a, false, runtime.ErrOutputOwned},
		{"live owner, marker only", runtime.OutputClaim{Job: "b", OwnerEnded: ended("z")}, a, true, runtime.ErrOutputOwned},
		{"owner of unknown state, marker only", runtime.OutputClaim{Job: "b"}, a, true, runtime.ErrOutputOwned},
	} {
		err := c.claim.Check("/out", c.owner, c.empty)
		if c.want == nil {
			require.NoError(t, err, c.name)
		} else {
			require.ErrorIs(t, err, c.want, c.name)
		}
	}
}

// ended says that only the named jobs have ended.
func ended(jobs ...string) func(string) bool {
	return func(job string) bool { return slices.Contains(jobs, job) }
}

// A directory an ended job left with its marker alone is taken over: the
// marker names the new job. One with a part file of that job is refused.
func TestClaimOutputOfAnEndedJobThatCommittedNothing(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, runtime.ClaimOutput(mem, "/out", runtime.OutputClaim{Job: "a", Operator: "files"}))
	require.NoError(t, runtime.ClaimOutput(mem, "/out", runtime.OutputClaim{Job: "b", Operator: "files", OwnerEnded: ended("a")}))
	owner, _, err := runtime.InspectOutput(mem, "/out")
	require.NoError(t, err)
	require.Equal(t, "b", owner.Job)

	require.NoError(t, vfs.WriteFileAtomic(mem, "/out/.part-0-0.inprogress.x", []byte("pending\n")))
	err = runtime.ClaimOutput(mem, "/out", runtime.OutputClaim{Job: "c", Operator: "files", OwnerEnded: ended("a", "b")})
	require.ErrorIs(t, err, runtime.ErrOutputOwned)
	require.ErrorContains(t, err, "which has ended but left files there")
	require.ErrorContains(t, err, "flinkgo run -s")
}

// ClaimOutput writes the marker on first use, through the vfs, and only
// the first of concurrent claimants of an unowned directory wins it.
func TestClaimOutput(t *testing.T) {
	mem := vfs.NewMem()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			job := "a"
			if i%2 == 1 {
				job = "b"
			}
			errs[i] = runtime.ClaimOutput(mem, "/out", runtime.OutputClaim{Job: job, Operator: "files"})
		}()
	}
	wg.Wait()
	owner, empty, err := runtime.InspectOutput(mem, "/out")
	require.NoError(t, err)
	require.True(t, empty, "the marker alone")
	for i, err := range errs {
		job := map[bool]string{true: "a", false: "b"}[i%2 == 0]
		if job == owner.Job {
			require.NoError(t, err, "the winner's subtasks find their own marker")
		} else {
			require.ErrorIs(t, err, runtime.ErrOutputOwned)
		}
	}

	// A job continuing the owner from its snapshot takes the directory over.
	other := map[string]string{"a": "b", "b": "a"}[owner.Job]
	require.NoError(t, runtime.ClaimOutput(mem, "/out", runtime.OutputClaim{Job: "c", Restoring: true, RestoredJob: owner.Job}))
	now, _, err := runtime.InspectOutput(mem, "/out")
	require.NoError(t, err)
	require.Equal(t, "c", now.Job)
	require.ErrorIs(t, runtime.ClaimOutput(mem, "/out", runtime.OutputClaim{Job: other}), runtime.ErrOutputOwned)

	// A damaged marker is an error, not an owner to override.
	require.NoError(t, vfs.WriteFileAtomic(mem, "/out/"+runtime.OwnerFile, []byte("{")))
	err = runtime.ClaimOutput(mem, "/out", runtime.OutputClaim{Job: "c"})
	require.Error(t, err)
	require.False(t, errors.Is(err, runtime.ErrOutputOwned))
	require.ErrorContains(t, err, "is not a flinkgo ownership marker")
}
