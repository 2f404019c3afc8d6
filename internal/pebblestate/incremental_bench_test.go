package pebblestate_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/internal/pebblestate"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// BenchmarkIncrementalVsFull measures, in the same run on the OS file
// system, what a checkpoint of a keyed state of N keys costs when 1% of
// the keys changed since the last one: a full canonical snapshot (the
// barrier scans the DB into the state file, which is then written whole)
// against an incremental one (the barrier writes the store manifest,
// flushes and hard-links a pebble checkpoint; only the files no earlier
// checkpoint held are written). It prints bytes written and barrier
// stall of each and their ratios, per round and the median of the rounds.
// Keys: FLINKGO_INCR_BENCH_KEYS, default 1,000,000.
func BenchmarkIncrementalVsFull(b *testing.B) {
	keys := 1_000_000
	if v := os.Getenv("FLINKGO_INCR_BENCH_KEYS"); v != "" {
		keys, _ = strconv.Atoi(v)
	}
	const rounds = 7
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		fsys := vfs.Default
		s, err := pebblestate.Open(fsys, filepath.Join(dir, "db"))
		if err != nil {
			b.Fatal(err)
		}
		rng := state.RangeForSubtask(128, 1, 0)
		kb := state.NewKeyedBackendOn(128, rng, s)
		v, err := state.NewValue(kb, "count", state.Int64Codec{})
		if err != nil {
			b.Fatal(err)
		}
		key := func(k int) []byte { return []byte("key-" + strconv.Itoa(k)) }
		for k := 0; k < keys; k++ {
			v.SetKey(key(k))
			v.Put(1)
		}
		storage := filepath.Join(dir, "storage")
		if err := os.MkdirAll(storage, 0o755); err != nil {
			b.Fatal(err)
		}
		uploaded := map[string]bool{}
		var private int64 // of the last incremental checkpoint: manifest, options, markers
		// incremental takes checkpoint id and "uploads" what is new:
		// bytes written and the barrier's stall.
		incremental := func(id int64) (int64, time.Duration) {
			private = 0
			start := time.Now()
			if err := kb.WriteStoreManifest(); err != nil {
				b.Fatal(err)
			}
			files, err := s.Checkpoint(s.CheckpointDir(id))
			if err != nil {
				b.Fatal(err)
			}
			stall := time.Since(start)
			var wrote int64
			for _, f := range files {
				if pebblestate.Shared(f) && uploaded[f] {
					continue
				}
				n := copyOut(b, filepath.Join(s.CheckpointDir(id), f), filepath.Join(storage, fmt.Sprint(id, "-", f)))
				wrote += n
				if !pebblestate.Shared(f) {
					private += n
				}
				if pebblestate.Shared(f) {
					uploaded[f] = true
				}
			}
			_ = os.RemoveAll(s.CheckpointDir(id))
			return wrote, stall
		}
		// full takes a canonical snapshot and writes it whole.
		full := func() (int64, time.Duration) {
			start := time.Now()
			en, _ := state.EncodeChunks(state.NewOperatorState(), kb)
			stall := time.Since(start)
			f, err := os.Create(filepath.Join(storage, "full.state"))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := en.WriteTo(f); err != nil {
				b.Fatal(err)
			}
			_ = f.Sync()
			_ = f.Close()
			return en.Size, stall
		}
		incremental(1) // the first checkpoint writes everything
		var byteRatios, stallRatios []float64
		var fullBytes, incrBytes int64
		var fullStall, incrStall time.Duration
		next := 0
		for r := 0; r < rounds; r++ {
			for c := 0; c < keys/100; c++ { // 1% of the keys change
				v.SetKey(key(next % keys))
				v.Put(int64(r + 2))
				next += 97
			}
			fb, fs := full()
			ib, is := incremental(int64(r + 2))
			fullBytes, incrBytes, fullStall, incrStall = fullBytes+fb, incrBytes+ib, fullStall+fs, incrStall+is
			byteRatios = append(byteRatios, float64(ib)/float64(fb))
			stallRatios = append(stallRatios, float64(is)/float64(fs))
			fmt.Printf("incrbench keys=%d round=%d full_bytes=%d full_stall_ms=%.1f incr_bytes=%d (private %d) incr_stall_ms=%.1f bytes_ratio=%.4f stall_ratio=%.4f\n",
				keys, r+1, fb, ms(fs), ib, private, ms(is), float64(ib)/float64(fb), float64(is)/float64(fs))
		}
		slices.Sort(byteRatios)
		slices.Sort(stallRatios)
		fmt.Printf("incrbench keys=%d median bytes_ratio=%.4f stall_ratio=%.4f; over all rounds bytes_ratio=%.4f stall_ratio=%.4f (incremental / full)\n",
			keys, byteRatios[rounds/2], stallRatios[rounds/2], float64(incrBytes)/float64(fullBytes), float64(incrStall)/float64(fullStall))
		b.ReportMetric(byteRatios[rounds/2], "bytes-incr/full")
		b.ReportMetric(stallRatios[rounds/2], "stall-incr/full")
		if err := kb.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// copyOut copies src to dst (a checkpoint storage on the local disk) and
// syncs it, as an upload does; it returns the bytes copied.
func copyOut(b *testing.B, src, dst string) int64 {
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(out, in)
	if err != nil {
		b.Fatal(err)
	}
	_ = out.Sync()
	_ = out.Close()
	return n
}
