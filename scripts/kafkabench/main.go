// Command kafkabench measures Kafka → file throughput of flinkgo (the real
// binary: daemon + job, exactly-once, 1 s checkpoints, line format) against
// a plain kafka-go Reader loop writing the same records to a buffered file,
// in the same run and against the same embedded broker. It prints both
// rates and their ratio (goal: flinkgo at least 0.85 of the plain loop).
//
// Run it with scripts/bench-kafka.sh.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/produce"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/scripts/internal/benchd"
)

func main() {
	bin := flag.String("bin", "bin/flinkgo", "flinkgo binary")
	records := flag.Int64("records", 2_000_000, "records to produce")
	rounds := flag.Int("rounds", 3, "alternating rounds of each")
	flag.Parse()
	if err := run(*bin, *records, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "kafkabench:", err)
		os.Exit(1)
	}
}

func run(bin string, n int64, rounds int) error {
	work, err := os.MkdirTemp("", "kafkabench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", Topics: []kafkabroker.Topic{{Name: "bench", Partitions: 1}}})
	if err != nil {
		return err
	}
	defer b.Close()
	fmt.Printf("producing %d records to the embedded broker at %s...\n", n, b.Addr())
	if _, err := produce.Run(context.Background(), produce.Config{Brokers: []string{b.Addr()}, Topic: "bench", Count: n}); err != nil {
		return err
	}
	d, err := startDaemon(bin, filepath.Join(work, "home"))
	if err != nil {
		return err
	}
	defer d.stop()
	var plain, flink []float64
	for i := 0; i < rounds; i++ {
		r, err := plainLoop(b.Addr(), n, filepath.Join(work, fmt.Sprintf("plain-%d.txt", i)))
		if err != nil {
			return err
		}
		plain = append(plain, r)
		f, err := d.job(b.Addr(), n, filepath.Join(work, fmt.Sprintf("out-%d", i)))
		if err != nil {
			return err
		}
		flink = append(flink, f)
		fmt.Printf("round %d: plain kafka-go Reader loop %.0f records/s, flinkgo %.0f records/s (ratio %.2f)\n", i+1, r, f, f/r)
	}
	p, f := median(plain), median(flink)
	fmt.Printf("\nKafka -> file, %d records of ~14 bytes, embedded broker, medians of %d rounds:\n", n, rounds)
	fmt.Printf("  plain kafka-go Reader loop -> bufio file: %10.0f records/s\n", p)
	fmt.Printf("  flinkgo (exactly-once, 1s checkpoints):  %10.0f records/s\n", f)
	fmt.Printf("  ratio flinkgo / plain: %.2f (goal >= 0.85)\n", f/p)
	return nil
}

// plainLoop reads n records with a kafka-go Reader and writes their values
// as lines to a buffered file.
func plainLoop(broker string, n int64, path string) (float64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 64<<10)
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{broker}, Topic: "bench", Partition: 0,
		MinBytes: 1, MaxBytes: 10 << 20, MaxWait: 250 * time.Millisecond, QueueCapacity: 10000, Dialer: &kafka.Dialer{}})
	defer r.Close()
	start := time.Now()
	var got int64
	ctx := context.Background()
	for got < n {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return 0, err
		}
		_, _ = w.Write(m.Value)
		_ = w.WriteByte('\n')
		got++
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

type daemon struct{ *benchd.Daemon }

func startDaemon(bin, home string) (*daemon, error) {
	d, err := benchd.Start(bin, home)
	if err != nil {
		return nil, err
	}
	return &daemon{d}, nil
}

func (d *daemon) stop()                              { d.Stop() }
func (d *daemon) cli(args ...string) (string, error) { return d.CLI(args...) }

// job runs Kafka → file bounded at the end offsets and returns records/s
// from submission to FINISHED, after checking the output is exact.
func (d *daemon) job(broker string, n int64, out string) (float64, error) {
	spec := filepath.Join(filepath.Dir(out), filepath.Base(out)+".yaml")
	if err := os.WriteFile(spec, []byte(fmt.Sprintf(`
name: kafka-bench
checkpointing: {interval: 1s, mode: exactly-once}
operators:
  - {uid: in, type: kafka, brokers: [%s], topic: bench, startingOffsets: earliest, format: raw, bounded: latest}
  - {uid: out, type: file, from: [in], path: %s, bucket: none, format: line}
`, broker, out)), 0o600); err != nil {
		return 0, err
	}
	start := time.Now()
	id, err := d.cli("run", spec)
	if err != nil {
		return 0, err
	}
	for {
		raw, err := d.cli("info", id, "-o", "json")
		if err != nil {
			return 0, err
		}
		var info struct{ State, Error string }
		if err := json.Unmarshal([]byte(raw), &info); err != nil {
			return 0, err
		}
		if info.State == "FINISHED" {
			break
		}
		if info.State == "FAILED" || info.State == "CANCELED" {
			return 0, fmt.Errorf("job %s: %s", info.State, info.Error)
		}
		time.Sleep(10 * time.Millisecond)
	}
	rate := float64(n) / time.Since(start).Seconds()
	rep, err := verify.Run(verify.Options{Path: out, Field: "idx"})
	if err != nil {
		return 0, err
	}
	if !rep.OK() || rep.Records != n {
		return 0, fmt.Errorf("flinkgo output: %d records, %d missing, %d duplicates", rep.Records, rep.GapCount, rep.Duplicates)
	}
	return rate, nil
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
