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

func throughput(o options, d *daemon, work string) error {
	fmt.Printf("Nexmark on flinkgo: %d events per query, event time at %d events/s, exactly-once checkpoints every 10 s,\n", o.events, o.eventRate)
	fmt.Printf("daemon GOMAXPROCS=%d%s; CPU time of the daemon process (generator included).\n\n", o.procs, gogcNote(o.gogc))
	fmt.Println("| query | events/s | events per CPU-s | Flink 1.13 per core | ratio | goal (10x) | results | checkpoints |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	results := map[string]jobRun{}
	for _, q := range o.queries {
		path, err := spec(o, work, q, o.events, o.eventRate)
		if err != nil {
			return err
		}
		r, err := d.job(path, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
		results[q] = r
		perCPU := float64(o.events) / r.cpu.Seconds()
		flink := flinkPerCore[q]
		met := "met"
		if perCPU < 10*flink {
			met = fmt.Sprintf("missed (%.1fx)", perCPU/flink)
		}
		fmt.Printf("| %s | %s | %s | %s | %.1fx | %s | %d | %d |\n", q, si(float64(o.events)/r.wall.Seconds()), si(perCPU), si(flink),
			perCPU/flink, met, r.results, r.checkpoints)
	}
	return hand(o, results)
}

// hand runs the hand-written q5 and q7 over the same generator.
func hand(o options, results map[string]jobRun) error {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(o.procs))
	c := nexmark.DefaultConfig()
	c.EventRate = o.eventRate
	g, err := nexmark.New(c)
	if err != nil {
		return err
	}
	progs := []struct {
		q  string
		fn func(*nexmark.Generator, int64) int64
	}{{"q5", handQ5}, {"q7", handQ7}}
	printed := false
	for _, p := range progs {
		f, ok := results[p.q]
		if !ok {
			continue
		}
		if !printed {
			fmt.Println("\n| query | hand-written Go, events per CPU-s | flinkgo events per CPU-s | ratio (goal >= 0.5) | results (hand / flinkgo) |")
			fmt.Println("|---|---|---|---|---|")
			printed = true
		}
		goruntime.GC()
		c0 := selfCPU()
		n := p.fn(g, o.events)
		cpu := selfCPU() - c0
		handRate, flinkRate := float64(o.events)/cpu.Seconds(), float64(o.events)/f.cpu.Seconds()
		fmt.Printf("| %s | %s | %s | %.2f | %d / %d |\n", p.q, si(handRate), si(flinkRate), flinkRate/handRate, n, f.results)
		if n != f.results {
			return fmt.Errorf("%s: the hand-written program found %d results, flinkgo %d", p.q, n, f.results)
		}
	}
	return nil
}

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
