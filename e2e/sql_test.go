package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// A Flink SQL script through the real binary: run job.sql, stop it with a
// savepoint mid-run, run -s the same script: the daemon plans it again,
// its operators (uids from the tables) take their state back, and the
// files hold every row exactly once.
func TestSQLScriptStopAndRestore(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	script := e.writeSpec("job.sql", fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '200ms';
SET 'parallelism.default' = '2';
CREATE TABLE gen (idx BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '40000', 'rows-per-second' = '8000');
CREATE TABLE files (idx BIGINT, twice BIGINT, kind VARCHAR)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO files
SELECT idx, idx * 2, CASE WHEN MOD(idx, 2) = 0 THEN 'even' ELSE 'odd' END AS kind FROM gen WHERE idx > 0;
`, out))
	id := e.mustRun("run", script)
	e.waitCheckpointCompleted(id)
	sp := strings.TrimSpace(e.mustRun("stop", id, "--savepoint-path", filepath.Join(e.home, "sp")))
	id = e.mustRun("run", "-s", sp, script)
	info := e.waitState(id, api.StateFinished, 30*time.Second)
	require.NotEmpty(t, info.RestoredFrom)
	requireExactly(t, out, 40000)
}
