package kafkabroker

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSeveralNodes: three nodes, each on its own address, leaders spread
// over them; a node stops (its address refuses connections, its partitions
// move) and starts again; the cluster restarts on its data and ports.
func TestSeveralNodes(t *testing.T) {
	dir := t.TempDir()
	b, err := Start(Config{Listen: "127.0.0.1:0", Nodes: 3, DataDir: dir, Topics: []Topic{{Name: "t", Partitions: 6}}})
	require.NoError(t, err)
	addrs := b.Addrs()
	require.Len(t, addrs, 3)
	assert.Equal(t, b.Addr(), addrs[0])
	leaders := map[string]bool{}
	for _, p := range readPartitions(t, addrs[0], "t") {
		leaders[net.JoinHostPort(p.Leader.Host, strconv.Itoa(p.Leader.Port))] = true
	}
	for l := range leaders {
		assert.Contains(t, addrs, l, "leaders are advertised at the nodes' addresses")
	}
	produce(t, addrs[0], "t", 0, 0, 10)

	require.NoError(t, b.StopNode(1))
	_, err = net.DialTimeout("tcp", addrs[1], time.Second)
	require.Error(t, err, "a stopped node refuses connections")
	for _, p := range readPartitions(t, addrs[0], "t") {
		assert.NotEqual(t, addrs[1], net.JoinHostPort(p.Leader.Host, strconv.Itoa(p.Leader.Port)), "no partition led by the stopped node")
	}
	produce(t, addrs[0], "t", 0, 10, 10)
	require.NoError(t, b.StartNode(1))
	conn, err := net.DialTimeout("tcp", addrs[1], time.Second)
	require.NoError(t, err)
	require.NoError(t, conn.Close())
	require.NoError(t, b.Close())

	b = startBroker(t, Config{Listen: addrs[0], Nodes: 3, NodeListen: addrs[1:], DataDir: dir})
	assert.Equal(t, addrs, b.Addrs())
	first, last := partitionOffsets(t, addrs[0], "t", 0)
	assert.Equal(t, int64(0), first)
	assert.Equal(t, int64(20), last, "records survive the restart")
	_, err = Start(Config{Listen: "127.0.0.1:0", Nodes: 2, NodeListen: []string{"127.0.0.1:0", "127.0.0.1:0"}})
	require.ErrorContains(t, err, "2 node addresses for 2 nodes")
}
