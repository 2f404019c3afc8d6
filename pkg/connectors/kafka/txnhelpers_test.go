package kafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// readTopicWithControl reads every record of topic read_uncommitted, with
// control records as "commit" or "abort".
func readTopicWithControl(t testing.TB, addr, topic string) []string {
	t.Helper()
	n, err := kafkaPartitions(addr, topic)
	require.NoError(t, err)
	parts := map[int32]kgo.Offset{}
	for p := range n {
		parts[int32(p)] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}), kgo.FetchMaxWait(100*time.Millisecond))
	require.NoError(t, err)
	defer cl.Close()
	var out []string
	idle := time.Now()
	for time.Since(idle) < time.Second {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			idle = time.Now()
			if !r.Attrs.IsControl() {
				out = append(out, string(r.Value))
				return
			}
			var k kmsg.ControlRecordKey
			require.NoError(t, k.ReadFrom(r.Key))
			if k.Type == kmsg.ControlRecordKeyTypeCommit {
				out = append(out, "commit")
			} else {
				out = append(out, "abort")
			}
		})
	}
	return out
}

func kafkaPartitions(addr, topic string) (int, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, err
	}
	return len(resp.Topics[0].Partitions), nil
}
