package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	kgo "github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
)

func TestProbe(t *testing.T) {
	const n = 1_000_000
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", Topics: []kafkabroker.Topic{{Name: "t", Partitions: 1}}})
	require.NoError(t, err)
	defer b.Close()
	tr := &kgo.Transport{}
	w := &kgo.Writer{Addr: kgo.TCP(b.Addr()), Topic: "t", Transport: tr, BatchSize: 10000, BatchBytes: 16 << 20, BatchTimeout: time.Millisecond}
	msgs := make([]kgo.Message, 10000)
	for i := 0; i < n; i += len(msgs) {
		for j := range msgs {
			msgs[j].Value = fmt.Appendf(nil, `{"idx": %d}`, i+j+1)
		}
		require.NoError(t, w.WriteMessages(context.Background(), msgs...))
	}
	w.Close()
	tr.CloseIdleConnections()

	for round := 0; round < 2; round++ {
		r := kgo.NewReader(kgo.ReaderConfig{Brokers: []string{b.Addr()}, Topic: "t", MaxWait: 200 * time.Millisecond, MinBytes: 1, MaxBytes: 10 << 20, QueueCapacity: 100000})
		require.NoError(t, r.SetOffset(0))
		start := time.Now()
		for range n {
			_, err := r.FetchMessage(context.Background())
			require.NoError(t, err)
		}
		el := time.Since(start)
		r.Close()
		t.Logf("reader: %.0f/s", n/el.Seconds())

		for _, mb := range []int{1 << 20, 4 << 20} {
			conn, err := kgo.DialLeader(context.Background(), "tcp", b.Addr(), "t", 0)
			require.NoError(t, err)
			start = time.Now()
			got := 0
			var sink []byte
			_, err = conn.Seek(0, kgo.SeekAbsolute|kgo.SeekDontCheck)
			require.NoError(t, err)
			fetches := 0
			for got < n {
				conn.SetReadDeadline(time.Now().Add(10 * time.Second))
				batch := conn.ReadBatchWith(kgo.ReadBatchConfig{MinBytes: 1, MaxBytes: mb, MaxWait: 200 * time.Millisecond})
				fetches++
				for {
					m, err := batch.ReadMessage()
					if err != nil {
						break
					}
					sink = m.Value
					got++
				}
				require.NoError(t, batch.Close())
			}
			el = time.Since(start)
			conn.Close()
			_ = sink
			t.Logf("conn maxbytes=%d: %.0f/s fetches %d", mb, n/el.Seconds(), fetches)
		}
	}
}
