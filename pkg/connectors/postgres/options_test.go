package postgres_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
)

func TestOptionsErrorsAtTheirLines(t *testing.T) {
	_, err := engine.Compile(runtimetest.Registry(t, testTypes), "job.yaml", []byte(`name: bad
checkpointing: {interval: 1s}
operators:
  - {uid: gen, type: datagen}
  - uid: out
    type: postgres
    from: [gen]
    url: "postgres://u:secret@h:notaport/db"
    table: a.b.c
    columns: {id: "idx +", name: user}
    mode: merge
    primaryKey: [id]
    deliveryGuarantee: twice
    batchSize: 0
    lockTimeout: 0s
  - uid: out2
    type: postgres
    from: [gen]
    url: postgres://localhost/db
    table: t
    mode: upsert
    deliveryGuarantee: at-least-once
    transactionPrefix: x
`), engine.Defaults{})
	require.Error(t, err)
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{
		"job.yaml:8:10: operators[1].url: not a PostgreSQL connection string",
		`job.yaml:9:12: operators[1].table: must be a table name or schema.table, got "a.b.c"`,
		"job.yaml:10:19: operators[1].columns.id: idx +",
		`job.yaml:11:11: operators[1].mode: must be append or upsert, got "merge"`,
		"job.yaml:12:17: operators[1].primaryKey: applies only with mode: upsert",
		`job.yaml:13:24: operators[1].deliveryGuarantee: must be exactly-once or at-least-once, got "twice"`,
		"job.yaml:14:16: operators[1].batchSize: must be 1 to 1000000 rows, got 0",
		"job.yaml:15:18: operators[1].lockTimeout: must be at least 1ms, got 0s",
		"job.yaml:16:8: operators[2].primaryKey: mode: upsert needs primaryKey",
		"job.yaml:23:24: operators[2].transactionPrefix: applies only with mode: append and deliveryGuarantee: exactly-once",
	} {
		require.Contains(t, msg, want)
	}
	require.NotContains(t, msg, "secret", "the password is not echoed")
}
