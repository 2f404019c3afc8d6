package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// modes lists the permission bits of every file and directory under root.
func modes(t *testing.T, root string) map[string]fs.FileMode {
	t.Helper()
	out := map[string]fs.FileMode{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSocket == 0 {
			out[p] = fi.Mode()
		}
		return nil
	}))
	return out
}

// requireModes: every directory under root has dir's bits, every file
// file's.
func requireModes(t *testing.T, root string, file, dir fs.FileMode) {
	t.Helper()
	for p, m := range modes(t, root) {
		want := file
		if m.IsDir() {
			want = dir
		}
		require.Equal(t, want, m.Perm(), "%s is %s", p, m)
	}
}

// What the daemon writes is private to its user whatever the umask it was
// started with (the state holds keyed state and the job spec): checkpoint,
// savepoint and registry files 0600 in 0700 directories, file sink output
// too; daemon.umask widens that on purpose.
func TestFilesArePrivate(t *testing.T) {
	parallel(t)
	old := syscall.Umask(0o022) // the usual umask, which the daemon inherits
	defer syscall.Umask(old)
	for _, tc := range []struct {
		conf      string
		file, dir fs.FileMode
	}{{"", 0o600, 0o700}, {"daemon.umask: 0027\n", 0o640, 0o750}} {
		e := newEnv(t)
		conf := filepath.Join(t.TempDir(), "daemon.yaml")
		require.NoError(t, os.WriteFile(conf, []byte(tc.conf), 0o600))
		e.startDaemon("--config", conf)
		out, sp := filepath.Join(e.home, "out"), filepath.Join(e.home, "sp")
		id := e.mustRun("run", e.writeSpec("f.yaml", fmt.Sprintf(`
name: modes
checkpointing: {interval: 100ms, externalized: retain-on-cancellation}
operators:
  - {uid: gen, type: datagen, rate: 2000}
  - {uid: key, type: keyBy, from: [gen], expr: "idx %% 7"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: files, type: file, from: [cnt], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, out)))
		e.waitCheckpoint(id) // a retained checkpoint's files to check
		e.mustRun("savepoint", id, sp)
		e.mustRun("cancel", id)
		e.waitState(id, api.StateCanceled, 10*time.Second)
		for _, root := range []string{filepath.Join(e.home, "checkpoints", id), sp, out} {
			requireModes(t, root, tc.file, tc.dir)
		}
		requireModes(t, filepath.Join(e.home, "jobs", id), tc.file, 0o700) // the registry's directories are private always
		_, err := os.Stat(filepath.Join(e.home, "jobs", id, "job.json"))
		require.NoError(t, err)
	}
}

// A print job's job.out is rotated at daemon.job-out.max-size, keeping
// one previous file: the home holds at most about twice the cap per job.
func TestJobOutIsCapped(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	conf := filepath.Join(t.TempDir(), "daemon.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("daemon.job-out.max-size: 64KiB\n"), 0o600))
	e.startDaemon("--config", conf)
	id := e.mustRun("run", e.writeSpec("p.yaml", `
name: printer
operators:
  - {uid: gen, type: datagen, count: 50000}
  - {uid: out, type: print, from: [gen]}
`))
	e.waitState(id, api.StateFinished, 30*time.Second)
	dir := filepath.Join(e.home, "jobs", id)
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(dir, "history.gob.gz")); return err == nil }, 10*time.Second,
		20*time.Millisecond, "the sampler's last look at the ended job writes its charts")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
		if strings.HasPrefix(en.Name(), "job.out") {
			fi, err := en.Info()
			require.NoError(t, err)
			require.LessOrEqual(t, fi.Size(), int64(64<<10), en.Name())
		}
	}
	// events.json: the job's state-change journal; history.gob.gz: its charts.
	require.Equal(t, []string{"events.json", "history.gob.gz", "job.json", "job.out", "job.out.1"}, names)
	last, err := os.ReadFile(filepath.Join(dir, "job.out"))
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(last), "{\"idx\": 50000}\n"), "job.out holds the latest lines")
	require.Equal(t, 50000, strings.Count(e.stdout.String(), "\n"), "the daemon's stdout gets every line")
}
