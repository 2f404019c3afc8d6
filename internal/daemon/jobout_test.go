package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// job.out never grows past its cap: the write that would rotates it to
// job.out.1, replacing the previous one, so at most two files of about
// the cap are kept; an existing job.out is appended to and counted.
func TestJobOutRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.out")
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("old\n", 10)), 0o600))
	o, err := openJobOut(path, 100)
	require.NoError(t, err)
	line := []byte(strings.Repeat("x", 19) + "\n") // 20 bytes
	for i := 0; i < 50; i++ {
		n, err := o.Write(line)
		require.NoError(t, err)
		require.Equal(t, len(line), n)
		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.LessOrEqual(t, fi.Size(), int64(100))
	}
	require.NoError(t, o.Close())
	cur, err := os.ReadFile(path)
	require.NoError(t, err)
	prev, err := os.ReadFile(path + ".1")
	require.NoError(t, err)
	require.Equal(t, strings.Repeat(string(line), 5), string(prev), "job.out.1 holds the previous full file")
	require.Equal(t, 0, len(cur)%len(line))
	files, err := filepath.Glob(path + "*")
	require.NoError(t, err)
	require.Len(t, files, 2, "one previous file is kept")
	_, err = o.Write(line)
	require.ErrorIs(t, err, os.ErrClosed)

	big, err := openJobOut(filepath.Join(t.TempDir(), "job.out"), 10)
	require.NoError(t, err)
	n, err := big.Write(line)
	require.NoError(t, err, "a write larger than the cap goes whole into a fresh file")
	require.Equal(t, len(line), n)
	require.NoError(t, big.Close())
}
