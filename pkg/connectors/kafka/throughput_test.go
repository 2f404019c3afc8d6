package kafka_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// BenchmarkSourceVsReaderLoop compares the kafka source (→ discard, bounded) with
// a plain kafka-go Reader loop over the same records of the same broker, in
// the same run (DESIGN §11: report ratios against the raw library loop).
// Run it with: go test -run '^$' -bench SourceVsReaderLoop -benchtime 1x ./pkg/connectors/kafka/
func BenchmarkSourceVsReaderLoop(b *testing.B) {
	if raceEnabled {
		b.Skip("throughput measurement: not under -race")
	}
	const n = 1_000_000
	br := startBroker(b, "one:1", "four:4")
	for _, topic := range []string{"one", "four"} {
		produceIdx(b, br.Addr(), topic, 1, n)
	}
	for _, tc := range []struct {
		topic string
		par   int
	}{{"one", 1}, {"four", 1}, {"four", 2}} {
		var reader, tuned, source, json float64
		for range 3 { // best of three, alternating
			reader = max(reader, readerLoop(b, br.Addr(), tc.topic, n, kafka.ReaderConfig{}))
			tuned = max(tuned, readerLoop(b, br.Addr(), tc.topic, n, kafka.ReaderConfig{MinBytes: 1, MaxBytes: 10 << 20, QueueCapacity: 100_000}))
			source = max(source, sourceRun(b, br.Addr(), tc.topic, n, tc.par, "raw"))
			json = max(json, sourceRun(b, br.Addr(), tc.topic, n, tc.par, "json"))
		}
		b.Logf("topic %s (%d records of ~14 bytes), source parallelism %d:", tc.topic, n, tc.par)
		b.Logf("  kafka-go Reader loop (defaults):          %9.0f records/s", reader)
		b.Logf("  kafka-go Reader loop (MaxBytes 10MB, queue 100k): %9.0f records/s", tuned)
		b.Logf("  kafka source → discard (format raw):      %9.0f records/s  ratio %.2f / %.2f", source, source/reader, source/tuned)
		b.Logf("  kafka source → discard (format json):     %9.0f records/s  ratio %.2f / %.2f", json, json/reader, json/tuned)
	}
}

// readerLoop reads the n records of topic with a plain FetchMessage loop,
// one partition after the other (a Reader over a whole topic needs a
// consumer group); it returns records/s.
func readerLoop(t testing.TB, addr, topic string, n int, rc kafka.ReaderConfig) float64 {
	t.Helper()
	conn, err := kafka.Dial("tcp", addr)
	require.NoError(t, err)
	parts, err := conn.ReadPartitions(topic)
	require.NoError(t, err)
	require.NoError(t, conn.Close())
	per := n / len(parts)
	var elapsed time.Duration
	for _, p := range parts {
		cfg := rc
		cfg.Brokers, cfg.Topic, cfg.Partition, cfg.MaxWait = []string{addr}, topic, p.ID, 200*time.Millisecond
		r := kafka.NewReader(cfg)
		require.NoError(t, r.SetOffset(0))
		start := time.Now()
		for range per {
			_, err := r.FetchMessage(context.Background())
			require.NoError(t, err)
		}
		elapsed += time.Since(start)
		require.NoError(t, r.Close())
	}
	return float64(per*len(parts)) / elapsed.Seconds()
}

func sourceRun(t testing.TB, addr, topic string, n, par int, format string) float64 {
	t.Helper()
	start := time.Now()
	j := runtimetest.Start(t, fmt.Sprintf(`
name: throughput
parallelism: %d
operators:
  - {uid: in, type: kafka, brokers: [%s], topic: %s, bounded: latest, format: %s}
  - {uid: out, type: discard, from: [in]}
`, par, addr, topic, format), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, time.Minute), j.Info().Error)
	elapsed := time.Since(start)
	require.Equal(t, int64(n), operator(t, j, "out").RecordsIn)
	return float64(n) / elapsed.Seconds()
}
