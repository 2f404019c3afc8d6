package pebblefs_test

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/pebblefs"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func open(t *testing.T, fsys vfs.FS, wal bool) *pebble.DB {
	t.Helper()
	db, err := pebble.Open("/db", &pebble.Options{FS: pebblefs.New(fsys), DisableWAL: !wal})
	require.NoError(t, err)
	return db
}

// Pebble runs on a vfs.MemFS through the adapter, and what it made durable
// (a flush: SSTs synced, the manifest synced, the directory synced)
// survives a simulated power loss, while what it did not (writes after
// the flush, without a WAL) is gone: the adapter passes pebble's syncs to
// the vfs, file and directory.
func TestPowerLossKeepsWhatPebbleSynced(t *testing.T) {
	mem := vfs.NewMem()
	db := open(t, mem, false)
	for i := 0; i < 1000; i++ {
		require.NoError(t, db.Set([]byte(fmt.Sprintf("k%04d", i)), []byte("v1"), pebble.NoSync))
	}
	require.NoError(t, db.Flush())
	require.NoError(t, db.Set([]byte("k0000"), []byte("after the flush"), pebble.NoSync))
	crashed := mem.CrashClone(vfs.PowerLoss)
	require.NoError(t, db.Close())

	db = open(t, crashed, false)
	defer func() { require.NoError(t, db.Close()) }()
	for _, k := range []string{"k0000", "k0999"} {
		v, closer, err := db.Get([]byte(k))
		require.NoError(t, err, k)
		require.Equal(t, "v1", string(v), k)
		require.NoError(t, closer.Close())
	}
}

// With the WAL and synced writes, a power loss keeps every write: the
// adapter's Sync reaches the MemFS.
func TestPowerLossKeepsSyncedWALWrites(t *testing.T) {
	mem := vfs.NewMem()
	db := open(t, mem, true)
	require.NoError(t, db.Set([]byte("a"), []byte("1"), pebble.Sync))
	crashed := mem.CrashClone(vfs.PowerLoss)
	require.NoError(t, db.Close())
	db = open(t, crashed, true)
	defer func() { require.NoError(t, db.Close()) }()
	v, closer, err := db.Get([]byte("a"))
	require.NoError(t, err)
	require.Equal(t, "1", string(v))
	require.NoError(t, closer.Close())
}

// A second DB on the same directory in this process is refused.
func TestLockRefusesASecondOpen(t *testing.T) {
	mem := vfs.NewMem()
	db := open(t, mem, false)
	defer func() { require.NoError(t, db.Close()) }()
	_, err := pebble.Open("/db", &pebble.Options{FS: pebblefs.New(mem)})
	require.ErrorContains(t, err, "locked")
}
