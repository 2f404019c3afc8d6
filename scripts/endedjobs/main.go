// Command endedjobs measures what ended jobs cost a daemon: it submits
// many small bounded jobs to the real binary over its socket, waits for
// them to end, and prints the daemon's RSS and /metrics series, once with
// the default jobstore.max-capacity and once with a cap too large to
// apply (the daemon keeps every job, as before the cap existed), in the
// same run.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/flinkgo/flinkgo/scripts/internal/daemon"
)

const spec = `
name: tiny
operators:
  - {uid: gen, type: datagen, count: 5}
  - {uid: out, type: discard, from: [gen]}
`

func main() {
	bin := flag.String("bin", "bin/flinkgo", "the flinkgo binary")
	jobs := flag.Int("jobs", 5000, "jobs to submit")
	flag.Parse()
	fmt.Printf("%d bounded jobs submitted by 8 clients over the socket, each 5 records\n", *jobs)
	fmt.Printf("%-30s %10s %10s %12s %10s %10s\n", "jobstore.max-capacity", "RSS start", "RSS end", "per job", "series", "submit/s")
	var capped, uncapped float64
	for _, capacity := range []int{1000, 1_000_000} {
		r, err := measure(*bin, capacity, *jobs)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%-30d %9.0fM %9.0fM %10.1f K %10d %10.0f\n", capacity, r.rssStart/1e6, r.rssEnd/1e6, (r.rssEnd-r.rssStart)/float64(*jobs)/1e3, r.series, r.rate)
		if capacity == 1000 {
			capped = r.rssEnd
		} else {
			uncapped = r.rssEnd
		}
	}
	fmt.Printf("RSS at the end, capped / every job kept: %.2f\n", capped/uncapped)
}

type result struct {
	rssStart, rssEnd float64
	series           int
	rate             float64
}

func measure(bin string, capacity, jobs int) (*result, error) {
	home, err := os.MkdirTemp("", "endedjobs")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	conf := fmt.Sprintf("rest.address: 127.0.0.1:0\nrest.submit-rate-limit: 0\njobstore.max-capacity: %d\n", capacity)
	if err := os.WriteFile(filepath.Join(home, "flinkgo.yaml"), []byte(conf), 0o600); err != nil {
		return nil, err
	}
	d, err := daemon.StartWith(bin, home)
	if err != nil {
		return nil, err
	}
	defer d.Stop()
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", filepath.Join(home, "flinkgo.sock"))
	}}}
	for deadline := time.Now().Add(10 * time.Second); active(c) < 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the daemon does not answer on its socket")
		}
	}
	r := &result{rssStart: rss(d.Pid())}
	start := time.Now()
	work := make(chan int)
	var wg sync.WaitGroup
	var failed error
	var mu sync.Mutex
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				body, _ := json.Marshal(map[string]string{"spec": spec, "file": "tiny.yaml"})
				resp, err := c.Post("http://flinkgo/v1/jobs", "application/json", bytes.NewReader(body))
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("submit: %s", resp.Status)
					}
				}
				if err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}
		}()
	}
	for i := range jobs {
		work <- i
	}
	close(work)
	wg.Wait()
	if failed != nil {
		return nil, failed
	}
	r.rate = float64(jobs) / time.Since(start).Seconds()
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if active(c) == 0 {
			break
		}
	}
	time.Sleep(2 * time.Second) // the last watchers trim, the sampler's last samples
	r.rssEnd = rss(d.Pid())
	addr, _ := os.ReadFile(filepath.Join(home, "rest.address"))
	resp, err := http.Get("http://" + strings.TrimSpace(string(addr)) + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	m, _ := io.ReadAll(resp.Body)
	r.series = strings.Count(string(m), "\nflinkgo_")
	return r, nil
}

// active counts the jobs not yet ended.
func active(c *http.Client) int {
	resp, err := c.Get("http://flinkgo/v1/jobs?all=true")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var jobs []struct{ State string }
	if json.NewDecoder(resp.Body).Decode(&jobs) != nil {
		return -1
	}
	n := 0
	for _, j := range jobs {
		switch j.State {
		case "FINISHED", "CANCELED", "FAILED":
		default:
			n++
		}
	}
	return n
}

// rss is the resident set size of pid in bytes.
func rss(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb * 1e3
		}
	}
	return 0
}
