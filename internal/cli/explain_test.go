package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// validate and explain read a Flink SQL script (by its .sql extension):
// valid, its plan printed as the spec run would submit; invalid, every
// problem at the script's line:column, exit 3.
func TestValidateAndExplainSQL(t *testing.T) {
	t.Setenv("FLINKGO_HOME", t.TempDir())
	q1 := filepath.Join("..", "..", "configs", "jobs", "nexmark-sql", "q1.sql")
	r := run(t, "validate", q1)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, q1+": valid\n", r.stdout)

	r = run(t, "explain", q1)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `{uid: "datagen", type: nexmark,`)
	require.Contains(t, r.stdout, `expr: "{auction: auction, bidder: bidder, price: round((0.908 * price), 3), dateTime: dateTime, extra: extra}"`)

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.sql")
	require.NoError(t, os.WriteFile(bad, []byte("CREATE TABLE s (a BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');\n"+
		"CREATE TABLE o (a BIGINT) WITH ('connector' = 'blackhole');\n"+
		"INSERT INTO o SELECT b FROM s;\n"+
		"INSERT INTO o SELECT a FROM s CROSS JOIN t;\n"), 0o600))
	r = run(t, "validate", bad)
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stderr, bad+":1:17: datagen makes records with one column, idx BIGINT")
	require.Contains(t, r.stderr, bad+":3:22: unknown column b")
	require.Contains(t, r.stderr, bad+":4:31: CROSS JOIN is not supported")
	r = run(t, "explain", bad)
	require.Equal(t, 3, r.code)

	// A value only the connector judges: at the WITH option, by its name.
	opt := filepath.Join(dir, "opt.sql")
	require.NoError(t, os.WriteFile(opt, []byte("CREATE TABLE n (event_type INT, bid ROW<auction BIGINT>)\n"+
		"  WITH ('connector' = 'nexmark', 'events.num' = '-5');\n"+
		"CREATE TABLE o (a BIGINT) WITH ('connector' = 'blackhole');\n"+
		"INSERT INTO o SELECT bid.auction FROM n;\n"), 0o600))
	r = run(t, "validate", opt)
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stderr, opt+":2:34: 'events.num': must be 0 or more, got -5 (in the generated spec: flinkgo explain "+opt+")")

	// What the spec would say in YAML, the script's error says in SQL.
	eo := filepath.Join(dir, "eo.sql")
	require.NoError(t, os.WriteFile(eo, []byte("CREATE TABLE s (idx BIGINT) WITH ('connector' = 'datagen');\n"+
		"CREATE TABLE k (idx BIGINT) WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'localhost:9092',\n"+
		"  'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'x');\n"+
		"INSERT INTO k SELECT idx FROM s;\n"), 0o600))
	r = run(t, "validate", eo)
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stderr, eo+":3:22: 'sink.delivery-guarantee': exactly-once commits its Kafka transactions when checkpoints complete; enable checkpointing (SET 'execution.checkpointing.interval' = '10s';)")

	r = run(t, "explain", filepath.Join("..", "..", "configs", "jobs", "nexmark", "q1.yaml"))
	require.Equal(t, 2, r.code, r.stderr)
}
