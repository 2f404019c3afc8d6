package chaos

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/fault"
)

// elsewhere names, for each fault point no suite of this package crashes
// at, the test that injects a fault there: connector points, reached by
// jobs against the connector's embedded broker.
var elsewhere = []struct {
	point string
	file  string // from the module root
	test  string
}{
	{"kafka.poll", "pkg/connectors/kafka/faults_test.go", "TestFaultPoints"},
	{"kafka.snapshot", "pkg/connectors/kafka/faults_test.go", "TestFaultPoints"},
	{"kafka.commit-offsets", "pkg/connectors/kafka/source_test.go", "TestCommitFailureIsOnlyLogged"},
	{"kafka.sink.flush", "pkg/connectors/kafka/sink_test.go", "TestSinkFlushFaultFailsCheckpoint"},
	{"kafka.txn.write", "pkg/connectors/kafka/txfaults_test.go", "TestExactlyOnceThroughTaskFailures"},
	{"kafka.txn.precommit", "pkg/connectors/kafka/txfaults_test.go", "TestExactlyOnceThroughTaskFailures"},
	{"kafka.txn.commit", "pkg/connectors/kafka/txfaults_test.go", "TestExactlyOnceThroughTaskFailures"},
	{"kafka.txn.committed", "pkg/connectors/kafka/txfaults_test.go", "TestExactlyOnceThroughTaskFailures"},
	{"kafka.txn.recover", "pkg/connectors/kafka/txfaults_test.go", "TestExactlyOnceThroughTaskFailures"},
	{"postgres.write", "pkg/connectors/postgres/faults_test.go", "TestExactlyOnceThroughTaskFailures"},
	{"postgres.prepare", "pkg/connectors/postgres/faults_test.go", "TestExactlyOnceThroughTaskFailures"},
	{"postgres.commit", "pkg/connectors/postgres/faults_test.go", "TestExactlyOnceThroughTaskFailures"},
	{"postgres.committed", "pkg/connectors/postgres/faults_test.go", "TestExactlyOnceThroughTaskFailures"},
	{"postgres.recover", "pkg/connectors/postgres/faults_test.go", "TestExactlyOnceThroughTaskFailures"},
	{"file.read", "pkg/connectors/filesource/job_test.go", "TestExactlyOnceAcrossFailures"},
	{"nats.poll", "pkg/connectors/nats/queue_test.go", "TestQueueFaultsAtPollAndSnapshot"},
	{"nats.snapshot", "pkg/connectors/nats/queue_test.go", "TestQueueFaultsAtPollAndSnapshot"},
	{"nats.ack", "pkg/connectors/nats/queue_test.go", "TestQueueAckFailureAfterCheckpointCompleted"},
	{"nats.nak", "pkg/connectors/nats/queue_test.go", "TestQueueNakFailureFallsBackToAckWait"},
	{"nats.publish", "internal/chaos/nats_test.go", "TestNATSSinkPublishFaults"},
	{"checkpoint.metadata-published", "e2e/leftover_test.go", "TestCrashedStopLeavesAnAbandonedSavepoint"},
}

// TestEveryFaultPointIsCovered: each registered point is crashed at by
// TestCrashAtEveryFaultPoint or listed in elsewhere, and each listed test
// exists and names its point, so a new point cannot be forgotten.
func TestEveryFaultPointIsCovered(t *testing.T) {
	here := map[string]bool{}
	for _, p := range crashPoints {
		here[p] = true
	}
	listed := map[string]bool{}
	for _, e := range elsewhere {
		require.False(t, here[e.point], "%s is crashed at here and listed as covered elsewhere", e.point)
		listed[e.point] = true
		data, err := os.ReadFile(filepath.Join("..", "..", e.file))
		require.NoError(t, err, "%s is covered by %s", e.point, e.file)
		src := string(data)
		body := testBody(src, e.test)
		require.NotEmpty(t, body, "%s has no %s", e.file, e.test)
		require.Contains(t, body, `"`+e.point+`"`, "%s in %s does not inject %s", e.test, e.file, e.point)
	}
	for _, p := range fault.Points {
		require.True(t, here[p.Name] || listed[p.Name], "fault point %s is covered by no fault test: crash at it in crash_test.go or name its test in elsewhere", p.Name)
	}
	for p := range here {
		require.True(t, fault.Known(p), "%s is not a registered fault point", p)
	}
	require.Equal(t, len(fault.Points), len(here)+len(listed))
}

// testBody returns the source of func name up to the next top-level
// declaration.
func testBody(src, name string) string {
	i := strings.Index(src, "func "+name+"(")
	if i < 0 {
		return ""
	}
	rest := src[i:]
	if j := regexp.MustCompile(`\n(func|type|var|const) `).FindStringIndex(rest[1:]); j != nil {
		rest = rest[:j[0]+1]
	}
	return rest
}
