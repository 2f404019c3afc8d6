package engine_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

func keyedPipeline(count int, checkpointing string) string {
	return fmt.Sprintf(`
name: keyed
%s
operators:
  - {uid: gen, type: datagen, count: %d, format: raw}
  - {uid: key, type: keyBy, from: [gen], expr: "int(value) %% 100000"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: discard, from: [cnt]}
`, checkpointing, count)
}

// BenchmarkCheckpointOverhead runs the same keyed pipeline with 1 s
// checkpoints and without checkpointing, alternately in the same run, and
// reports the throughput ratio (goal: at least 0.95).
func BenchmarkCheckpointOverhead(b *testing.B) {
	const n = 3_000_000
	var with, without time.Duration
	for i := 0; i < b.N; i++ {
		for _, on := range []bool{false, true} {
			cp := ""
			if on {
				cp = "checkpointing: {interval: 1s}"
			}
			start := time.Now()
			j := runtimetest.Start(b, keyedPipeline(n, cp), runtimetest.Options{Types: testTypes, CheckpointsDir: b.TempDir()})
			if s := runtimetest.Wait(b, j, 5*time.Minute); s != api.StateFinished {
				b.Fatalf("job %s: %s", s, j.Info().Error)
			}
			if on {
				with += time.Since(start)
				if j.Info().Checkpoints.Completed == 0 {
					b.Fatal("no checkpoint completed: make the run longer")
				}
			} else {
				without += time.Since(start)
			}
		}
	}
	b.ReportMetric(float64(n*b.N)/with.Seconds(), "records/s(1s-checkpoints)")
	b.ReportMetric(float64(n*b.N)/without.Seconds(), "records/s(no-checkpoints)")
	b.ReportMetric(without.Seconds()/with.Seconds(), "throughput-ratio")
}

// BenchmarkKeyedStateSnapshotRestore writes and reads back 256 MB of keyed
// state through the real disk (encode, write, fsync, rename; read, verify,
// decode, restore into a backend) and reports MB/s each way (goal: 200).
func BenchmarkKeyedStateSnapshotRestore(b *testing.B) {
	const keys, valueSize = 2_450_000, 100 // keys x (100 B value + 8 B key + framing) ≈ 256 MB
	rng := state.KeyGroupRange{Start: 0, End: 128}
	kb := state.NewKeyedBackend(128, rng)
	vs, err := state.NewValue(kb, "v", state.BytesCodec{})
	if err != nil {
		b.Fatal(err)
	}
	val := make([]byte, valueSize)
	for i := 0; i < keys; i++ {
		vs.SetKey([]byte(fmt.Sprintf("k%07d", i)))
		vs.Put(val)
	}
	ops := state.NewOperatorState()
	var bytes int64
	var snap, restore time.Duration
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		start := time.Now()
		data, _ := state.EncodeChunks(ops, kb)
		if err := checkpoint.WriteState(vfs.Default, dir, "s.state", data); err != nil {
			b.Fatal(err)
		}
		snap += time.Since(start)
		bytes = data.Size
		h := checkpoint.Handle{File: "s.state", Size: data.Size, Checksum: data.Checksum}
		data = nil
		start = time.Now()
		raw, err := checkpoint.ReadStateFile(vfs.Default, dir, h)
		if err != nil {
			b.Fatal(err)
		}
		s, err := state.Decode(raw)
		if err != nil {
			b.Fatal(err)
		}
		kb2 := state.NewKeyedBackend(128, rng)
		kb2.Restore([]*state.Snapshot{s})
		if _, err := state.NewValue(kb2, "v", state.BytesCodec{}); err != nil {
			b.Fatal(err)
		}
		restore += time.Since(start)
		if kb2.NumKeys() != keys {
			b.Fatalf("restored %d keys, want %d", kb2.NumKeys(), keys)
		}
	}
	mb := float64(bytes*int64(b.N)) / (1 << 20)
	b.ReportMetric(float64(bytes)/(1<<20), "MB-state")
	b.ReportMetric(mb/snap.Seconds(), "MB/s-snapshot")
	b.ReportMetric(mb/restore.Seconds(), "MB/s-restore")
}

// BenchmarkSmallCheckpointLatency runs a keyed job with under 1 MB of state
// and 100 ms checkpoints for a few seconds and reports the median
// checkpoint duration (trigger to completion; goal: under 20 ms).
func BenchmarkSmallCheckpointLatency(b *testing.B) {
	var durations []int64
	var size int64
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		j := runtimetest.Start(b, `
name: small
checkpointing: {interval: 100ms}
operators:
  - {uid: gen, type: datagen, rate: 20000, format: raw}
  - {uid: key, type: keyBy, from: [gen], expr: "int(value) % 10000"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: discard, from: [cnt]}
`, runtimetest.Options{Types: testTypes, CheckpointsDir: dir})
		time.Sleep(3 * time.Second)
		for _, h := range j.Checkpoints().History {
			if h.Status == "COMPLETED" {
				durations = append(durations, h.DurationMs)
				size = max(size, h.Size)
			}
		}
		if err := j.Cancel(); err != nil {
			b.Fatal(err)
		}
		_ = filepath.Join
	}
	if len(durations) == 0 {
		b.Fatal("no checkpoint completed")
	}
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	b.ReportMetric(float64(durations[len(durations)/2]), "ms-median-checkpoint")
	b.ReportMetric(float64(durations[len(durations)*9/10]), "ms-p90-checkpoint")
	b.ReportMetric(float64(size)/1024, "KB-state")
	b.ReportMetric(float64(len(durations)), "checkpoints")
}
