// Command kafkatxnbench measures Kafka → Kafka throughput of flinkgo (the
// real binary: daemon + job, bounded input, 1 s checkpoints) with the
// exactly-once sink (transactions) against the same job with the
// at-least-once sink, and both against a plain franz-go consume → produce
// loop (no transactions), in the same run against the same embedded
// broker. It prints the rates and the ratios (goals: exactly-once at least
// 0.7 of at-least-once; at least 0.5 of the plain loop).
//
// Run it with `make bench`, or: go run ./scripts/kafkatxnbench -bin bin/flinkgo
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/produce"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/scripts/internal/daemon"
)

func main() {
	bin := flag.String("bin", "bin/flinkgo", "flinkgo binary")
	records := flag.Int64("records", 4_000_000, "records to produce")
	rounds := flag.Int("rounds", 3, "alternating rounds of each")
	flag.Parse()
	if err := run(*bin, *records, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "kafkatxnbench:", err)
		os.Exit(1)
	}
}

const partitions = 2

func run(bin string, n int64, rounds int) error {
	work, err := os.MkdirTemp("", "kafkatxnbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	topics := []kafkabroker.Topic{{Name: "in", Partitions: partitions}}
	for i := range rounds {
		for _, k := range []string{"plain", "alo", "eo"} {
			topics = append(topics, kafkabroker.Topic{Name: fmt.Sprintf("out-%s-%d", k, i), Partitions: partitions})
		}
	}
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", Topics: topics})
	if err != nil {
		return err
	}
	defer b.Close()
	fmt.Printf("producing %d records to the embedded broker at %s...\n", n, b.Addr())
	if _, err := produce.Run(context.Background(), produce.Config{Brokers: []string{b.Addr()}, Topic: "in", Count: n}); err != nil {
		return err
	}
	d, err := daemon.Start(bin, filepath.Join(work, "home"))
	if err != nil {
		return err
	}
	defer d.Stop()
	var plain, alo, eo []float64
	for i := range rounds {
		p, err := plainLoop(b.Addr(), n, fmt.Sprintf("out-plain-%d", i))
		if err != nil {
			return err
		}
		a, err := job(d, work, b.Addr(), n, fmt.Sprintf("out-alo-%d", i), "at-least-once")
		if err != nil {
			return err
		}
		e, err := job(d, work, b.Addr(), n, fmt.Sprintf("out-eo-%d", i), "exactly-once")
		if err != nil {
			return err
		}
		plain, alo, eo = append(plain, p), append(alo, a), append(eo, e)
		fmt.Printf("round %d: plain franz-go loop %.0f records/s, at-least-once %.0f, exactly-once %.0f (eo/alo %.2f, eo/plain %.2f)\n",
			i+1, p, a, e, e/a, e/p)
	}
	p, a, e := daemon.Median(plain), daemon.Median(alo), daemon.Median(eo)
	fmt.Printf("\nKafka -> Kafka, %d records of ~14 bytes, %d partitions, embedded broker, 1s checkpoints, medians of %d rounds:\n", n, partitions, rounds)
	fmt.Printf("  plain franz-go consume -> produce loop (no transactions): %10.0f records/s\n", p)
	fmt.Printf("  flinkgo, kafka sink at-least-once:                        %10.0f records/s\n", a)
	fmt.Printf("  flinkgo, kafka sink exactly-once (transactions):          %10.0f records/s\n", e)
	fmt.Printf("  ratio exactly-once / at-least-once: %.2f (goal >= 0.7)\n", e/a)
	fmt.Printf("  ratio exactly-once / plain loop:    %.2f (goal >= 0.5)\n", e/p)
	fmt.Printf("  ratio at-least-once / plain loop:   %.2f\n", a/p)
	return nil
}

// plainLoop reads the n records of "in" with a franz-go consumer and
// writes them to topic with a franz-go producer (idempotent, acks=all, no
// transactions), waiting for every acknowledgement; it returns records/s.
func plainLoop(broker string, n int64, topic string) (float64, error) {
	parts := map[int32]kgo.Offset{}
	for p := range partitions {
		parts[int32(p)] = kgo.NewOffset().AtStart()
	}
	in, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"in": parts}),
		kgo.FetchMaxWait(250*time.Millisecond))
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.DefaultProduceTopic(topic))
	if err != nil {
		return 0, err
	}
	defer out.Close()
	ctx := context.Background()
	var mu sync.Mutex
	var failed error
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			failed = cmp.Or(failed, err)
			mu.Unlock()
		}
	}
	start := time.Now()
	var got int64
	for got < n {
		fs := in.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			return 0, err
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			out.Produce(ctx, &kgo.Record{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}, promise)
		})
	}
	if err := out.Flush(ctx); err != nil {
		return 0, err
	}
	mu.Lock()
	defer mu.Unlock()
	if failed != nil {
		return 0, failed
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// job runs Kafka → Kafka bounded at the end offsets with the given
// delivery guarantee and returns records/s from submission to FINISHED,
// after checking the output (exactly once, or at least once).
func job(d *daemon.Daemon, work, broker string, n int64, topic, guarantee string) (float64, error) {
	spec := filepath.Join(work, topic+".yaml")
	if err := os.WriteFile(spec, []byte(fmt.Sprintf(`
name: kafka-kafka-bench
checkpointing: {interval: 1s, mode: exactly-once, timeout: 1m}
operators:
  - {uid: in, type: kafka, brokers: [%[1]s], topic: in, startingOffsets: earliest, format: raw, bounded: latest}
  - {uid: out, type: kafka, from: [in], brokers: [%[1]s], topic: %[2]s, deliveryGuarantee: %[3]s}
`, broker, topic, guarantee)), 0o600); err != nil {
		return 0, err
	}
	elapsed, err := d.RunBounded(spec)
	if err != nil {
		return 0, err
	}
	rate := float64(n) / elapsed.Seconds()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := verify.Kafka(ctx, verify.KafkaOptions{Brokers: []string{broker}, Topic: topic, Field: "idx"})
	if err != nil {
		return 0, err
	}
	exact := rep.OK() && rep.Records == n
	if guarantee == "at-least-once" {
		exact = rep.Distinct == n && rep.GapCount == 0
	}
	if !exact {
		return 0, fmt.Errorf("%s output in %s: %d records, %d distinct, %d missing, %d duplicates", guarantee, topic, rep.Records, rep.Distinct, rep.GapCount, rep.Duplicates)
	}
	return rate, nil
}
