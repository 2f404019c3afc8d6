// Command nexmarkbench runs the Nexmark queries of configs/jobs/nexmark on
// the real flinkgo binary (a daemon and its CLI), exactly-once checkpoints
// on as the specs set them, and reports for each query events per second
// and events per CPU-second (the daemon's CPU time: everything the job
// does, generator included), beside Flink 1.13's published per-core
// figures; for q5 and q7 it runs a hand-written Go program over the same
// generator in the same run and prints the ratio. With -rss it runs q5,
// q7 and q8 long and samples the daemon's resident memory instead.
//
// Run it with scripts/bench-nexmark.sh.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/flinkgo/flinkgo/pkg/connectors/nexmark"
)

// flinkPerCore are the Throughput/Cores figures of Flink 1.13 in the
// nexmark/nexmark README (100 M events, 8 task managers of one slot,
// exactly-once checkpoints every 3 minutes, RocksDB): events/s per core.
var flinkPerCore = map[string]float64{
	"q0": 155.02e3, "q1": 157.94e3, "q2": 175.21e3, "q3": 152.12e3, "q4": 34.33e3,
	"q5": 22.14e3, "q7": 12.33e3, "q8": 146.14e3, "q11": 39.7e3, "q12": 75.67e3,
}

var allQueries = []string{"q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q11", "q12"}

type options struct {
	bin, configs       string
	events, eventRate  int64
	queries            []string
	procs              int
	gogc               string
	gcFloor            string
	rss                bool
	rssEvents, rssRate int64
	runs               int
}

func main() {
	var o options
	var queries string
	flag.StringVar(&o.bin, "bin", "bin/flinkgo", "flinkgo binary")
	flag.StringVar(&o.configs, "configs", "configs/jobs/nexmark", "directory of the query specs")
	flag.Int64Var(&o.events, "events", 10_000_000, "events per query")
	flag.Int64Var(&o.eventRate, "event-rate", 10_000_000, "event-time rate (the specs' eventRate; the published run's 10 M/s)")
	flag.StringVar(&queries, "queries", strings.Join(allQueries, ","), "queries to run")
	flag.IntVar(&o.procs, "procs", 1, "GOMAXPROCS of the daemon and of the hand-written programs (cores used)")
	flag.StringVar(&o.gogc, "gogc", "", "GOGC of the daemon and the hand-written programs (default: Go's)")
	flag.StringVar(&o.gcFloor, "gc-heap-floor", "64MiB", "the daemon's daemon.gc-heap-floor (0: none, the daemon's default)")
	flag.IntVar(&o.runs, "runs", 3, "rounds over the queries (each figure is the median of the rounds; the range is printed beside it)")
	flag.BoolVar(&o.rss, "rss", false, "run q5, q7 and q8 long and sample the daemon's RSS instead")
	flag.Int64Var(&o.rssEvents, "rss-events", 100_000_000, "events of each -rss run")
	flag.Int64Var(&o.rssRate, "rss-event-rate", 100_000, "event-time rate of the -rss runs")
	flag.Parse()
	o.queries = strings.Split(queries, ",")
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "nexmarkbench:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	work, err := os.MkdirTemp("", "nexmarkbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	env := []string{fmt.Sprintf("GOMAXPROCS=%d", o.procs)}
	if o.gogc != "" {
		env = append(env, "GOGC="+o.gogc)
	}
	// The bench runs the daemon with a heap floor (docs/gc-heap-floor.md):
	// far fewer collections while a query's live state is small.
	env = append(env, "FLINKGO_DAEMON_GC_HEAP_FLOOR="+o.gcFloor)
	d, err := startDaemon(o.bin, filepath.Join(work, "home"), env)
	if err != nil {
		return err
	}
	defer d.stop()
	if o.rss {
		return rssRuns(o, d, work)
	}
	return throughput(o, d, work)
}

// spec writes query q's spec with events and eventRate set.
func spec(o options, work, q string, events, eventRate int64) (string, error) {
	b, err := os.ReadFile(filepath.Join(o.configs, q+".yaml"))
	if err != nil {
		return "", err
	}
	s := string(b)
	for old, repl := range map[string]string{"events: 10000000": fmt.Sprintf("events: %d", events),
		"eventRate: 10000000": fmt.Sprintf("eventRate: %d", eventRate)} {
		if !strings.Contains(s, old) {
			return "", fmt.Errorf("%s.yaml has no %q", q, old)
		}
		s = strings.Replace(s, old, repl, 1)
	}
	path := filepath.Join(work, q+".yaml")
	return path, os.WriteFile(path, []byte(s), 0o600)
}

// throughput runs the queries o.runs rounds over (a round runs every
// query once, so a noisy minute on a shared machine spreads over the
// queries instead of spoiling one) and prints each query's median with the
// range of the rounds, then the hand-written programs' comparison.
func throughput(o options, d *daemon, work string) error {
	fmt.Printf("Nexmark on flinkgo: %d events per query, event time at %d events/s, exactly-once checkpoints every 10 s,\n", o.events, o.eventRate)
	fmt.Printf("daemon GOMAXPROCS=%d%s; CPU time of the daemon process (generator included); median of %d rounds (range).\n\n",
		o.procs, gogcNote(o.gogc), o.runs)
	runs := map[string][]jobRun{}
	hands := map[string][]handRun{}
	for round := 0; round < o.runs; round++ {
		for _, q := range o.queries {
			path, err := spec(o, work, q, o.events, o.eventRate)
			if err != nil {
				return err
			}
			r, err := d.job(path, 0)
			if err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
			runs[q] = append(runs[q], r)
		}
		h, err := hand(o, runs)
		if err != nil {
			return err
		}
		for q, r := range h {
			hands[q] = append(hands[q], r)
		}
	}
	fmt.Println("| query | events/s | events per CPU-s | Flink 1.13 per core | ratio | goal (10x) | results | checkpoints |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, q := range o.queries {
		rs := runs[q]
		wall := rates(rs, o.events, func(r jobRun) time.Duration { return r.wall })
		cpu := rates(rs, o.events, func(r jobRun) time.Duration { return r.cpu })
		flink := flinkPerCore[q]
		met := "met"
		if median(cpu) < 10*flink {
			met = fmt.Sprintf("missed (%.1fx)", median(cpu)/flink)
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %d | %d |\n", q, spread(wall, si), spread(cpu, si), si(flink),
			spread(scale(cpu, 1/flink), ratio), met, rs[0].results, rs[0].checkpoints)
	}
	if len(hands) == 0 {
		return nil
	}
	fmt.Println("\n| query | hand-written Go, events per CPU-s | flinkgo events per CPU-s | ratio (goal >= 0.5) | results (hand / flinkgo) |")
	fmt.Println("|---|---|---|---|---|")
	for _, p := range handPrograms {
		q := p.q
		hs, ok := hands[q]
		if !ok {
			continue
		}
		// The ratio of each round (the program and the query ran minutes
		// apart at most), then their median.
		var handRate, flinkRate, ratios []float64
		for i, h := range hs {
			hr, fr := float64(o.events)/h.cpu.Seconds(), float64(o.events)/runs[q][i].cpu.Seconds()
			handRate, flinkRate, ratios = append(handRate, hr), append(flinkRate, fr), append(ratios, fr/hr)
		}
		fmt.Printf("| %s | %s | %s | %s | %d / %d |\n", q, spread(handRate, si), spread(flinkRate, si), spread(ratios, ratio2),
			hs[0].results, runs[q][0].results)
	}
	return nil
}

// handPrograms are the queries with a hand-written program (hand.go).
var handPrograms = []struct {
	q  string
	fn func(*nexmark.Generator, int64) int64
}{{"q5", handQ5}, {"q7", handQ7}}

type handRun struct {
	cpu     time.Duration
	results int64
}

// hand runs the hand-written q5 and q7 over the same generator, for the
// queries of the latest round in results.
func hand(o options, results map[string][]jobRun) (map[string]handRun, error) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(o.procs))
	c := nexmark.DefaultConfig()
	c.EventRate = o.eventRate
	g, err := nexmark.New(c)
	if err != nil {
		return nil, err
	}
	out := map[string]handRun{}
	for _, p := range handPrograms {
		rs, ok := results[p.q]
		if !ok {
			continue
		}
		goruntime.GC()
		c0 := selfCPU()
		n := p.fn(g, o.events)
		out[p.q] = handRun{cpu: selfCPU() - c0, results: n}
		if f := rs[len(rs)-1].results; n != f {
			return nil, fmt.Errorf("%s: the hand-written program found %d results, flinkgo %d", p.q, n, f)
		}
	}
	return out, nil
}

// rates are events per unit of each run's duration d.
func rates(rs []jobRun, events int64, d func(jobRun) time.Duration) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = float64(events) / d(r).Seconds()
	}
	return out
}

func scale(v []float64, f float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * f
	}
	return out
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread is the median of v, then its range in parentheses when there
// are several.
func spread(v []float64, format func(float64) string) string {
	if len(v) == 1 {
		return format(v[0])
	}
	return fmt.Sprintf("%s (%s–%s)", format(median(v)), format(slices.Min(v)), format(slices.Max(v)))
}

func ratio(v float64) string  { return fmt.Sprintf("%.1fx", v) }
func ratio2(v float64) string { return fmt.Sprintf("%.2f", v) }

func rssRuns(o options, d *daemon, work string) error {
	fmt.Printf("RSS of the daemon over %d events per query, event time at %d events/s (GOMAXPROCS=%d%s):\n", o.rssEvents, o.rssRate, o.procs, gogcNote(o.gogc))
	for _, q := range []string{"q5", "q7", "q8"} {
		path, err := spec(o, work, q, o.rssEvents, o.rssRate)
		if err != nil {
			return err
		}
		r, err := d.job(path, 5*time.Second)
		if err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
		fmt.Printf("\n%s: %s events/s, %s events per CPU-s, peak RSS %d MiB; RSS every 5 s (events so far: MiB):\n  ", q,
			si(float64(o.rssEvents)/r.wall.Seconds()), si(float64(o.rssEvents)/r.cpu.Seconds()), r.peakRSS>>20)
		for i, s := range r.samples {
			if i > 0 {
				fmt.Print(", ")
			}
			fmt.Printf("%s: %d", si(float64(s.events)), s.rss>>20)
		}
		fmt.Println()
	}
	return nil
}

func gogcNote(g string) string {
	if g == "" {
		return ""
	}
	return ", GOGC=" + g
}

// selfCPU is this process's CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// si formats a rate with a K or M suffix.
func si(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0f K", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
