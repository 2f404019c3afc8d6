package storage_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/internal/s3test"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
	"github.com/flinkgo/flinkgo/pkg/vfs/s3store"
)

// BenchmarkSmallCheckpointLatencyS3 runs a keyed job with under 1 MB of
// state and 100 ms checkpoints for 3 s with its checkpoints in a bucket of
// a local S3 server (versitygw on loopback), then on the local disk, and
// reports the median checkpoint duration (trigger to completion) of each
// (the goal on S3: under 50 ms) and the requests per checkpoint.
func BenchmarkSmallCheckpointLatencyS3(b *testing.B) {
	srv := s3test.Start(b)
	fsys := vfs.Mux(vfs.Default, s3test.FS(b, srv, s3store.Options{}))
	var s3ms, localms, requests []float64
	var size int64
	for i := 0; i < b.N; i++ {
		d, r, sz := smallCheckpoints(b, fsys, vfs.ObjectURL(s3test.Bucket(b, srv), "chk"))
		s3ms, requests, size = append(s3ms, d...), append(requests, r...), max(size, sz)
		d, _, _ = smallCheckpoints(b, fsys, b.TempDir())
		localms = append(localms, d...)
	}
	b.ReportMetric(medianOf(s3ms), "ms-median-checkpoint-s3")
	b.ReportMetric(percentile(s3ms, 90), "ms-p90-checkpoint-s3")
	b.ReportMetric(medianOf(localms), "ms-median-checkpoint-local")
	b.ReportMetric(medianOf(requests), "requests-per-checkpoint-s3")
	b.ReportMetric(float64(size)/1024, "KB-state")
	b.ReportMetric(float64(len(s3ms)), "checkpoints-s3")
}

func smallCheckpoints(b *testing.B, fsys vfs.FS, dir string) (ms, requests []float64, size int64) {
	j := runtimetest.Start(b, `
name: small
checkpointing: {interval: 100ms}
operators:
  - {uid: gen, type: datagen, rate: 20000, format: raw}
  - {uid: key, type: keyBy, from: [gen], expr: "int(value) % 10000"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: discard, from: [cnt]}
`, runtimetest.Options{Types: all.Definitions(), CheckpointsDir: dir, FS: fsys})
	time.Sleep(3 * time.Second)
	for _, h := range j.Checkpoints().History {
		if h.Status == "COMPLETED" {
			ms = append(ms, float64(h.DurationMs))
			size = max(size, h.Size)
			if h.Storage != nil {
				requests = append(requests, float64(h.Storage.Requests))
			}
		}
	}
	if err := j.Cancel(); err != nil {
		b.Fatal(err)
	}
	if len(ms) == 0 {
		b.Fatal("no checkpoint completed")
	}
	return ms, requests, size
}

// BenchmarkKeyedStateRestoreS3 writes 256 MB of keyed state as a state
// file into a bucket of a local S3 server and into a local directory, and
// reads each back as a restore does (read, verify the checksum, decode,
// restore into a backend), reporting MB/s of each (the goal from
// S3 on loopback: at least 100 MB/s).
func BenchmarkKeyedStateRestoreS3(b *testing.B) {
	srv := s3test.Start(b)
	fsys := vfs.Mux(vfs.Default, s3test.FS(b, srv, s3store.Options{}))
	const keys, valueSize = 2_450_000, 100 // ≈ 256 MB, as BenchmarkKeyedStateSnapshotRestore
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
	var bytes int64
	var s3w, s3r, lw, lr time.Duration
	for i := 0; i < b.N; i++ {
		w, r, n := snapshotRestore(b, fsys, vfs.ObjectURL(s3test.Bucket(b, srv), "chk"), kb, keys)
		s3w, s3r, bytes = s3w+w, s3r+r, n
		w, r, _ = snapshotRestore(b, fsys, b.TempDir(), kb, keys)
		lw, lr = lw+w, lr+r
	}
	mb := float64(bytes*int64(b.N)) / (1 << 20)
	b.ReportMetric(float64(bytes)/(1<<20), "MB-state")
	b.ReportMetric(mb/s3r.Seconds(), "MB/s-restore-s3")
	b.ReportMetric(mb/s3w.Seconds(), "MB/s-snapshot-s3")
	b.ReportMetric(mb/lr.Seconds(), "MB/s-restore-local")
	b.ReportMetric(mb/lw.Seconds(), "MB/s-snapshot-local")
}

func snapshotRestore(b *testing.B, fsys vfs.FS, dir string, kb *state.KeyedBackend, keys int) (write, read time.Duration, size int64) {
	start := time.Now()
	data, _ := state.EncodeChunks(state.NewOperatorState(), kb)
	if err := checkpoint.WriteState(fsys, dir, "s.state", data); err != nil {
		b.Fatal(err)
	}
	write = time.Since(start)
	h := checkpoint.Handle{File: "s.state", Size: data.Size, Checksum: data.Checksum}
	start = time.Now()
	raw, err := checkpoint.ReadStateFile(fsys, dir, h)
	if err != nil {
		b.Fatal(err)
	}
	s, err := state.Decode(raw)
	if err != nil {
		b.Fatal(err)
	}
	kb2 := state.NewKeyedBackend(128, state.KeyGroupRange{Start: 0, End: 128})
	kb2.Restore([]*state.Snapshot{s})
	if _, err := state.NewValue(kb2, "v", state.BytesCodec{}); err != nil {
		b.Fatal(err)
	}
	read = time.Since(start)
	if kb2.NumKeys() != int64(keys) {
		b.Fatalf("restored %d keys, want %d", kb2.NumKeys(), keys)
	}
	return write, read, h.Size
}

func medianOf(v []float64) float64 { return percentile(v, 50) }

func percentile(v []float64, p int) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}
