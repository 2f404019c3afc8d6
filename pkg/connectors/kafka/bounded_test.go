package kafka_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func TestBoundedLatestFinishesWithRecordsPresentAtStart(t *testing.T) {
	b := startBroker(t, "in:3")
	produceIdx(t, b.Addr(), "in", 1, 3000)
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: bounded
parallelism: 2
operators:
  - {uid: in, type: kafka, brokers: [%s], topic: in, format: json, bounded: latest}
  - {uid: out, type: test-collect, from: [in], name: %s}
`, b.Addr(), name), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
	requireExactly(t, idxs(t, runtimetest.Values(name)), 1, 3000)
}
