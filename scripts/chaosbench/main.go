// Command chaosbench measures `flinkgo chaos` with 5 kills on a
// 200,000-record job (datagen paced at 50,000 records/s, so the job runs
// about 4 s and the faults land while it runs → map → exactly-once file
// sink, checkpoints every 200 ms): the wall time of the disturbed run and the faults fired,
// against the undisturbed run of the same chaos run (its baseline), and
// the whole command's wall time.
//
//	make build && go run ./scripts/chaosbench [-records 200000] [-rate 50000] [-kills 5] [-runs 3]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/flinkgo", "the flinkgo binary")
	records := flag.Int("records", 200_000, "records of the job")
	kills := flag.Int("kills", 5, "kills")
	rate := flag.Int("rate", 50_000, "records/s of the source (0: as fast as it goes: the job then ends before most faults)")
	runs := flag.Int("runs", 3, "chaos runs (seeds 1..runs)")
	flag.Parse()
	dir, err := os.MkdirTemp("", "chaosbench-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	spec := filepath.Join(dir, "job.yaml")
	err = os.WriteFile(spec, []byte(fmt.Sprintf(`name: chaosbench
parallelism: 2
checkpointing: {interval: 200ms}
operators:
  - {uid: numbers, type: datagen, count: %d, rate: %d}
  - {uid: double, type: map, from: [numbers], expr: '{"idx": idx, "twice": idx * 2}'}
  - {uid: out, type: file, from: [double], path: %s, rolling: {onCheckpoint: true}}
`, *records, *rate, filepath.Join(dir, "out"))), 0o600)
	if err != nil {
		fail(err)
	}
	fmt.Printf("flinkgo chaos --kills %d on a %d-record job (datagen at %d records/s → map → file, checkpoints every 200ms, parallelism 2)\n", *kills, *records, *rate)
	fmt.Printf("%4s %12s %12s %7s %8s %9s %12s %10s\n", "seed", "undisturbed", "disturbed", "ratio", "fired", "compared", "differences", "command")
	for seed := 1; seed <= *runs; seed++ {
		start := time.Now()
		cmd := exec.Command(*bin, "chaos", spec, "--kills", fmt.Sprint(*kills), "--seed", fmt.Sprint(seed), "-o", "json")
		out, err := cmd.Output()
		wall := time.Since(start)
		var rep struct {
			Injected, Fired                                 int
			Compared, Lost, Duplicated, Changed, Unexpected int
			Ratio                                           float64
			Undisturbed, Disturbed                          struct{ WallMs float64 }
		}
		if jerr := json.Unmarshal(out, &rep); jerr != nil {
			fail(fmt.Errorf("seed %d: %v (%v)\n%s", seed, err, jerr, out))
		}
		fmt.Printf("%4d %12s %12s %6.2f× %4d/%-3d %9d %12d %10s\n", seed, msDur(rep.Undisturbed.WallMs), msDur(rep.Disturbed.WallMs),
			rep.Ratio, rep.Fired, rep.Injected, rep.Compared, rep.Lost+rep.Duplicated+rep.Changed+rep.Unexpected, wall.Round(time.Millisecond))
	}
}

func msDur(v float64) time.Duration {
	return time.Duration(v * float64(time.Millisecond)).Round(time.Millisecond)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
