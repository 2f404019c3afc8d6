// Command habench measures HA mode (the real binary, an embedded
// three-member etcd on loopback): failover after kill -9 of a job's owner
// with a 2 s lease TTL (time until the job is RUNNING on another daemon,
// goal < 5 s, and until its first checkpoint after the restore, goal
// < 8 s; medians over several kills), and the cost of HA mode on a
// running job's throughput: the same bounded datagen → file sink job
// (exactly-once, 1 s checkpoints) on a standalone daemon and on an HA
// daemon, alternating, in the same run (goal: HA >= 0.95 of standalone).
//
// Run it with `make bench`, or: go run ./scripts/habench -bin bin/flinkgo
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/internal/dev/etcdserver"
	"github.com/flinkgo/flinkgo/scripts/internal/daemon"
)

func main() {
	bin := flag.String("bin", "bin/flinkgo", "flinkgo binary")
	kills := flag.Int("kills", 5, "failovers to time")
	records := flag.Int64("records", 20_000_000, "records of each throughput run (several checkpoints long)")
	rounds := flag.Int("rounds", 5, "alternating throughput rounds")
	flag.Parse()
	if err := run(*bin, *kills, *records, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "habench:", err)
		os.Exit(1)
	}
}

const ttl = 2 * time.Second

func run(bin string, kills int, records int64, rounds int) error {
	work, err := os.MkdirTemp("", "habench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	etcd, err := etcdserver.Start(etcdserver.Config{Dir: filepath.Join(work, "etcd"), Members: 3})
	if err != nil {
		return err
	}
	defer etcd.Close()
	c := &cluster{bin: bin, work: work, endpoints: strings.Join(etcd.Endpoints(), ",")}
	defer c.stop()
	if err := throughput(c, records, rounds); err != nil {
		return err
	}
	return failover(c, kills)
}

// cluster is the HA daemons of the run.
type cluster struct {
	bin, work, endpoints string
	daemons              []*daemon.Daemon
	names                []string
	homes                []string
}

func (c *cluster) stop() {
	for _, d := range c.daemons {
		if d != nil {
			d.Stop()
		}
	}
}

// start starts (or restarts) HA daemon i.
func (c *cluster) start(i int) error {
	for len(c.daemons) <= i {
		port, err := freePort()
		if err != nil {
			return err
		}
		home := filepath.Join(c.work, fmt.Sprintf("ha-%d", len(c.daemons)))
		if err := os.MkdirAll(home, 0o700); err != nil {
			return err
		}
		cfg := fmt.Sprintf("high-availability:\n  type: etcd\n  etcd: {endpoints: %q, lease-ttl: %ds}\n  storageDir: %s\n  cluster-id: bench\n",
			c.endpoints, int(ttl/time.Second), filepath.Join(c.work, "shared"))
		if err := os.WriteFile(filepath.Join(home, "flinkgo.yaml"), []byte(cfg), 0o600); err != nil {
			return err
		}
		c.daemons, c.homes = append(c.daemons, nil), append(c.homes, home)
		c.names = append(c.names, fmt.Sprintf("127.0.0.1:%d", port))
	}
	d, err := daemon.StartWith(c.bin, c.homes[i], "--rest-address", c.names[i])
	c.daemons[i] = d
	return err
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

type jobInfo struct {
	State            string
	Error            string
	Owner            string
	LatestCheckpoint *struct{ ID int64 }
}

func info(d *daemon.Daemon, id string) (jobInfo, error) {
	var i jobInfo
	raw, err := d.CLI("info", id, "-o", "json")
	if err != nil {
		return i, err
	}
	return i, json.Unmarshal([]byte(raw), &i)
}

func (i jobInfo) checkpoint() int64 {
	if i.LatestCheckpoint == nil {
		return 0
	}
	return i.LatestCheckpoint.ID
}

func fileSpec(work, name string, records int64, rate int) (string, error) {
	count := ""
	if records > 0 {
		count = fmt.Sprintf("count: %d, ", records)
	}
	path := filepath.Join(work, name+".yaml")
	return path, os.WriteFile(path, []byte(fmt.Sprintf(`
name: %s
checkpointing: {interval: 1s}
operators:
  - {uid: gen, type: datagen, %srate: %d}
  - {uid: files, type: file, from: [gen], path: %s, bucket: none}
`, name, count, rate, filepath.Join(work, "shared", "out", name))), 0o600)
}

// throughput alternates the bounded job on a standalone daemon and on HA
// daemon 0 (alone in its cluster).
func throughput(c *cluster, records int64, rounds int) error {
	solo, err := daemon.Start(c.bin, filepath.Join(c.work, "standalone"))
	if err != nil {
		return err
	}
	defer solo.Stop()
	if err := c.start(0); err != nil {
		return err
	}
	var ratios, soloRates, haRates []float64
	for r := range rounds {
		var rates [2]float64
		for k, d := range []*daemon.Daemon{solo, c.daemons[0]} {
			spec, err := fileSpec(c.work, fmt.Sprintf("tput-%d-%d", r, k), records, 0)
			if err != nil {
				return err
			}
			elapsed, err := d.RunBounded(spec)
			if err != nil {
				return err
			}
			rates[k] = float64(records) / elapsed.Seconds()
			_ = os.RemoveAll(filepath.Join(c.work, "shared", "out", fmt.Sprintf("tput-%d-%d", r, k)))
		}
		soloRates, haRates = append(soloRates, rates[0]), append(haRates, rates[1])
		ratios = append(ratios, rates[1]/rates[0])
		fmt.Printf("round %d: standalone %.0f records/s, HA %.0f records/s (ratio %.2f)\n", r+1, rates[0], rates[1], rates[1]/rates[0])
	}
	fmt.Printf("\ndatagen -> file sink (exactly-once, 1s checkpoints), %d records, medians of %d rounds:\n", records, rounds)
	fmt.Printf("  standalone daemon:                 %10.0f records/s\n", daemon.Median(soloRates))
	fmt.Printf("  HA daemon (etcd, 3 members):       %10.0f records/s\n", daemon.Median(haRates))
	fmt.Printf("  ratio HA / standalone:             %10.2f (goal >= 0.95)\n\n", daemon.Median(ratios))
	return nil
}

// failover times kills of a running job's owner among three HA daemons.
func failover(c *cluster, kills int) error {
	for i := 1; i < 3; i++ {
		if err := c.start(i); err != nil {
			return err
		}
	}
	var toRun, toCheckpoint []float64
	for k := range kills {
		spec, err := fileSpec(c.work, fmt.Sprintf("failover-%d", k), 0, 2000)
		if err != nil {
			return err
		}
		id, err := c.daemons[0].CLI("run", spec)
		if err != nil {
			return err
		}
		var before jobInfo
		if err := until(30*time.Second, func() (bool, error) {
			before, err = info(c.daemons[0], id)
			return err == nil && before.State == "RUNNING" && before.checkpoint() > 0, nil
		}); err != nil {
			return fmt.Errorf("job %s did not run: %w", id, err)
		}
		owner := index(c.names, before.Owner)
		other := c.daemons[(owner+1)%3]
		killed := time.Now()
		c.daemons[owner].Kill()
		var running time.Duration
		if err := until(30*time.Second, func() (bool, error) {
			i, err := info(other, id)
			if err != nil || i.State != "RUNNING" || i.Owner == before.Owner || i.Owner == "" {
				return false, nil
			}
			if running == 0 {
				running = time.Since(killed)
			}
			return i.checkpoint() > before.checkpoint(), nil
		}); err != nil {
			return fmt.Errorf("kill %d: job %s not resumed: %w", k+1, id, err)
		}
		checkpointed := time.Since(killed)
		toRun, toCheckpoint = append(toRun, running.Seconds()), append(toCheckpoint, checkpointed.Seconds())
		fmt.Printf("kill %d: RUNNING elsewhere after %.2fs, first checkpoint after restore at %.2fs\n", k+1, running.Seconds(), checkpointed.Seconds())
		if _, err := other.CLI("cancel", id); err != nil {
			return err
		}
		if err := c.start(owner); err != nil {
			return err
		}
	}
	sort.Float64s(toRun)
	fmt.Printf("\nfailover after kill -9, lease TTL %s, 3 daemons, medians of %d kills:\n", ttl, kills)
	fmt.Printf("  until RUNNING on another daemon:        %5.2fs (goal < 5s)\n", daemon.Median(toRun))
	fmt.Printf("  until its first checkpoint after restore: %5.2fs (goal < 8s)\n", daemon.Median(toCheckpoint))
	return nil
}

func index(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return 0
}

func until(timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return errors.New("timed out")
}
