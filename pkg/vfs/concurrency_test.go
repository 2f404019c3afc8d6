package vfs

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMemConcurrent is a smoke test for -race: writers, readers and crash
// clones on one MemFS (through a counting, logging wrapper) at once.
func TestMemConcurrent(t *testing.T) {
	m := NewMem()
	c := Count(WithLog(m, func(Op) {}))
	fsys := c.FS()
	shared, err := fsys.Create("/shared")
	require.NoError(t, err)

	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 8 {
		wg.Go(func() {
			dir := fmt.Sprintf("/w%d", w)
			for i := range 20 {
				if err := concurrentStep(fsys, shared, dir, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			_ = m.CrashClone(PowerLoss).Dump()
			_ = m.CrashClone(ProcessCrash).String()
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, shared.Close())
	fi, err := m.Stat("/shared")
	require.NoError(t, err)
	require.EqualValues(t, 8*20, fi.Size())
	require.Greater(t, c.N(), 8*20)
}

func concurrentStep(fsys FS, shared File, dir string, i int) error {
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	name := fmt.Sprintf("%s/f%d", dir, i%3)
	if err := WriteFileAtomic(fsys, name, []byte(name)); err != nil {
		return err
	}
	if _, err := ReadFile(fsys, name); err != nil {
		return err
	}
	if _, err := fsys.ReadDir("/"); err != nil {
		return err
	}
	_, err := shared.Write([]byte{'x'})
	return err
}
