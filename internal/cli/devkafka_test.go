package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/topics"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
)

// freeAddr is a loopback address nothing listens on (for a moment).
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// A topic can be added to a running flinkgo dev kafka: by a producer
// writing to it (auto-create, Kafka's default) or with dev kafka topics
// create; topics list shows them. It says that its data is in memory.
func TestDevKafkaCreatesTopicsAfterStart(t *testing.T) {
	addr := freeAddr(t)
	ctx, stop := context.WithCancel(context.Background())
	root := NewRoot(all.Registry())
	var log bytes.Buffer
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&log)
	root.SetArgs([]string{"dev", "kafka", "--listen", addr, "--topic", "flink-test:1"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	defer func() {
		stop()
		require.NoError(t, <-done)
		require.Contains(t, log.String(), "data IN MEMORY: topics, records and offsets are lost when it stops; --data-dir DIR keeps them")
	}()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)

	out, err := flinkgo(t, "dev", "produce", "--brokers", addr, "--topic", "new", "--count", "5", "--rate", "0")
	require.NoError(t, err)
	require.Contains(t, out, "5 records sent, idx 1..5")

	out, err = flinkgo(t, "dev", "kafka", "topics", "create", "clicks:3", "--brokers", addr)
	require.NoError(t, err)
	require.Equal(t, "clicks:3\n", out)
	_, err = flinkgo(t, "dev", "kafka", "topics", "create", "clicks", "--brokers", addr)
	require.ErrorContains(t, err, "topic already exists")
	_, err = flinkgo(t, "dev", "kafka", "topics", "create", "bad/name", "--brokers", addr)
	require.Error(t, err)

	out, err = flinkgo(t, "dev", "kafka", "topics", "list", "--brokers", addr, "-o", "json")
	require.NoError(t, err)
	var ts []topics.Info
	require.NoError(t, json.Unmarshal([]byte(out), &ts))
	require.Equal(t, []topics.Info{{Name: "clicks", Partitions: 3}, {Name: "flink-test", Partitions: 1}, {Name: "new", Partitions: 1}}, ts)

	_, err = flinkgo(t, "dev", "produce", "--brokers", addr, "--topic", "other", "--count", "1", "--auto-create-topic=false")
	require.ErrorContains(t, err, "Unknown Topic Or Partition", "without auto-create a missing topic is an error")
	// A client that does not ask (flinkgo's Kafka connectors never do)
	// creates nothing: a misspelt topic in a job stays an error.
	out, err = flinkgo(t, "dev", "kafka", "topics", "list", "--brokers", addr)
	require.NoError(t, err)
	require.Equal(t, "clicks:3\nflink-test:1\nnew:1\n", out)
}
