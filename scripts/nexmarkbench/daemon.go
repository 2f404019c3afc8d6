package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	bench "github.com/flinkgo/flinkgo/scripts/internal/daemon"
)

// daemon is a flinkgo daemon of the real binary in a temporary home.
type daemon struct{ *bench.Daemon }

func startDaemon(bin, home string, env []string) (*daemon, error) {
	d, err := bench.StartEnv(bin, home, env, "--rest-address", "")
	if err != nil {
		return nil, err
	}
	return &daemon{d}, nil
}

func (d *daemon) stop()                              { d.Stop() }
func (d *daemon) cli(args ...string) (string, error) { return d.CLI(args...) }

func (d *daemon) info(id string) (api.JobInfo, error) {
	var info api.JobInfo
	raw, err := d.cli("info", id, "-o", "json")
	if err != nil {
		return info, err
	}
	return info, json.Unmarshal([]byte(raw), &info)
}

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ: 100 on
// every Linux kernel since 2.6).
const clockTick = 10 * time.Millisecond

// cpu is the CPU time (user + system) the daemon used so far: everything
// the job does, generator included, as Nexmark's cores figure counts it.
func (d *daemon) cpu() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", d.Pid()))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces) in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unreadable /proc stat: %q", b)
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// rss is the daemon's resident set size in bytes.
func (d *daemon) rss() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.Pid()))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc status")
}

// run is one finished job: what it took and what it produced.
type jobRun struct {
	wall, cpu   time.Duration
	results     int64 // records that reached the sink
	checkpoints int   // completed during the run
	peakRSS     int64
	samples     []rssSample
}

type rssSample struct {
	at     time.Duration
	events int64
	rss    int64
}

// job submits spec and waits for it to finish, sampling the daemon's RSS
// every sampleEvery (0: only the peak at each poll).
func (d *daemon) job(spec string, sampleEvery time.Duration) (jobRun, error) {
	var r jobRun
	c0, err := d.cpu()
	if err != nil {
		return r, err
	}
	start := time.Now()
	id, err := d.cli("run", spec)
	if err != nil {
		return r, err
	}
	lastSample := time.Duration(0)
	for {
		info, err := d.info(id)
		if err != nil {
			return r, err
		}
		if rss, err := d.rss(); err == nil {
			r.peakRSS = max(r.peakRSS, rss)
			if at := time.Since(start); sampleEvery > 0 && at-lastSample >= sampleEvery {
				lastSample = at
				r.samples = append(r.samples, rssSample{at: at, events: info.Operators[0].RecordsOut, rss: rss})
			}
		}
		switch info.State {
		case api.StateFinished:
			r.wall = time.Since(start)
			c1, err := d.cpu()
			if err != nil {
				return r, err
			}
			r.cpu = c1 - c0
			for _, op := range info.Operators {
				if op.UID == "out" {
					r.results = op.RecordsIn
				}
			}
			if info.Checkpoints != nil {
				r.checkpoints = info.Checkpoints.Completed
			}
			return r, nil
		case api.StateFailed, api.StateCanceled:
			return r, fmt.Errorf("job %s: %s", info.State, info.Error)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
