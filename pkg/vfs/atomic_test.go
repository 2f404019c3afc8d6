package vfs

import (
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/require"
)

const atomicTarget = "/d/target"

// atomicSetup returns a MemFS with a durable /d and, if old is not empty,
// a durable atomicTarget holding old.
func atomicSetup(t *testing.T, old string) *MemFS {
	m := NewMem()
	durableDir(t, m, "/d")
	if old != "" {
		require.NoError(t, WriteFileAtomic(m, atomicTarget, []byte(old)))
	}
	return m
}

func atomicWorkload(fsys FS) error { return WriteFileAtomic(fsys, atomicTarget, []byte("new content")) }

// TestWriteFileAtomicCrashSweep is the model crash sweep: count the
// workload's mutating ops, crash at each of them under each model, and
// check that the target is the old or the new content, never anything
// else.
func TestWriteFileAtomicCrashSweep(t *testing.T) {
	for _, model := range []CrashModel{ProcessCrash, PowerLoss} {
		for _, old := range []string{"", "old"} {
			t.Run(fmt.Sprintf("%s/old=%q", model, old), func(t *testing.T) {
				counter := Count(atomicSetup(t, old))
				require.NoError(t, atomicWorkload(counter.FS()))
				n := counter.N()
				require.Equal(t, 5, n, "create, write, sync, rename, syncdir: %v", counter.Ops())

				seen := map[string]bool{}
				for k := 1; k <= n; k++ {
					cp := CrashAt(atomicSetup(t, old), k, model)
					require.ErrorIs(t, atomicWorkload(cp.FS()), ErrCrashed)
					require.True(t, cp.Crashed())
					seen[targetState(t, cp.Clone(), old, cp.LastOp())] = true
				}
				if model == ProcessCrash {
					require.True(t, seen["new content"], "crash at SyncDir must see the rename")
				}
				if old != "" {
					require.True(t, seen[old])
				}

				cp := CrashAt(atomicSetup(t, old), n+1, model)
				require.NoError(t, atomicWorkload(cp.FS()))
				require.False(t, cp.Crashed())
				require.Nil(t, cp.Clone())
				c := atomicSetup(t, old)
				require.NoError(t, atomicWorkload(c))
				require.Equal(t, "new content", readString(t, c.CrashClone(model), atomicTarget))
			})
		}
	}
}

// targetState returns the target's content after a crash, or "<missing>",
// failing if it is neither the old nor the new content.
func targetState(t *testing.T, c *MemFS, old string, at Op) string {
	t.Helper()
	data, err := ReadFile(c, atomicTarget)
	if old == "" && err != nil {
		require.ErrorIs(t, err, fs.ErrNotExist, "crash at %v", at)
		return "<missing>"
	}
	require.NoError(t, err, "crash at %v:\n%v", at, c)
	require.Contains(t, []string{old, "new content"}, string(data), "torn target after crash at %v:\n%v", at, c)
	return string(data)
}

// TestWriteFileAtomicFaults fails each mutating op in turn and checks that
// the error surfaces, the target is intact and no temp file is left.
func TestWriteFileAtomicFaults(t *testing.T) {
	counter := Count(atomicSetup(t, "old"))
	require.NoError(t, atomicWorkload(counter.FS()))
	for k, op := range counter.Ops() {
		t.Run(op.Kind.String(), func(t *testing.T) {
			m := atomicSetup(t, "old")
			inj := OnNth(k+1, IsMutating, ErrNoSpace)
			err := atomicWorkload(WithFaults(m, inj))
			require.ErrorIs(t, err, ErrInjected)
			require.True(t, inj.Fired())
			require.Equal(t, op.Kind, inj.Op().Kind)
			require.Equal(t, []string{"target"}, names(t, m, "/d"), "temp file left:\n%v", m)
			want := "old"
			if op.Kind == OpSyncDir {
				want = "new content" // renamed, only durability is in doubt
			}
			require.Equal(t, want, readString(t, m, atomicTarget))
		})
	}
}
