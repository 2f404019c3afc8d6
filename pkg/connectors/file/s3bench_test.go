package file

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/eocheck"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/internal/s3test"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
	"github.com/flinkgo/flinkgo/pkg/vfs/s3store"
)

// BenchmarkS3SinkVsLocalDisk runs the same job, datagen → file
// (exactly-once, 1 s checkpoints on the local disk), into a bucket of a
// local S3 server (versitygw on loopback, 5 MiB parts, 4 uploads at once)
// and into a local directory, alternately three times in one run, and
// reports the medians and their ratio (the goal: S3 at least 0.5x
// the local disk). Each output is checked exactly once.
func BenchmarkS3SinkVsLocalDisk(b *testing.B) {
	const n = 4_000_000
	srv := s3test.Start(b)
	fsys := vfs.Mux(vfs.Default, s3test.FS(b, srv, s3store.Options{}))
	var s3, local []float64
	for i := 0; i < 3*b.N; i++ {
		dir := b.TempDir()
		local = append(local, sinkRate(b, fsys, n, dir))
		bucket := vfs.ObjectURL(s3test.Bucket(b, srv), "out")
		s3 = append(s3, sinkRate(b, fsys, n, bucket))
		r, err := eocheck.Datagen(1, 1, n).Check(eocheck.FS(fsys, bucket), ".")
		require.NoError(b, err)
		require.True(b, r.OK(), "%v", r)
	}
	slices.Sort(s3)
	slices.Sort(local)
	b.ReportMetric(s3[len(s3)/2]/1e6, "M-records/s-s3")
	b.ReportMetric(local[len(local)/2]/1e6, "M-records/s-local")
	b.ReportMetric(s3[len(s3)/2]/local[len(local)/2], "ratio-s3/local")
}

func sinkRate(b *testing.B, fsys vfs.FS, n int, dir string) float64 {
	spec := fmt.Sprintf(`
name: throughput
checkpointing: {interval: 1s}
operators:
  - {uid: gen, type: datagen, count: %d, format: checked}
  - {uid: out, from: [gen], type: file, path: %q, bucket: none}
`, n, dir)
	start := time.Now()
	j := runtimetest.Start(b, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: b.TempDir(), FS: fsys})
	require.Equal(b, api.StateFinished, runtimetest.Wait(b, j, 5*time.Minute), j.Info().Error)
	return float64(n) / time.Since(start).Seconds()
}
