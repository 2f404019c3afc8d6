package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/internal/eocheck"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// The windowed workload: datagen's event stream (3,000 clicks of 7 users,
// 10 ms of event time apart, up to 200 ms out of order) -> per user -> a
// 1 s tumbling count and sum by event time -> file. Its check reads the
// committed window results and compares them with a computation over the
// generator's events: every window once, with the right figures.
const windowRecords = 3000

func windowSpec(rate int) string {
	return fmt.Sprintf(`
name: chaos-window
parallelism: 2
checkpointing: {interval: 25ms}
restartStrategy: {type: none}
watermarkInterval: 5ms
operators:
  - {uid: gen, type: datagen, format: events, count: %d, rate: %d, keys: 7, step: 10ms, outOfOrderness: 200ms,
     eventTime: {maxOutOfOrderness: 200ms}}
  - {uid: key, type: keyBy, from: [gen], expr: user}
  - {uid: win, type: window, from: [key], window: {type: tumbling, size: 1s}, aggregate: {n: count(), total: sum(amount)}}
  - {uid: out, type: file, from: [win], path: %s, bucket: none, rolling: {maxPartSize: 1KiB}}
`, windowRecords, rate, outDir)
}

var windowWorkload = workload{name: "window", spec: windowSpec, records: windowRecords, check: checkWindows}

type windowResult struct {
	Key                    string
	WindowStart, WindowEnd int64
	N, Total               int64
}

// expectedWindows computes the windows of the workload's input.
func expectedWindows() (map[string]windowResult, error) {
	opts := datagen.DefaultEventOptions()
	opts.Keys, opts.Step, opts.OutOfOrderness = 7, 10*time.Millisecond, 200*time.Millisecond
	g, err := datagen.NewEvents(opts)
	if err != nil {
		return nil, err
	}
	out := map[string]windowResult{}
	for n := int64(1); n <= windowRecords; n++ {
		e := g.At(n)
		start := e.TS - ((e.TS%1000)+1000)%1000
		id := fmt.Sprintf("%s@%d", g.User(e), start)
		w := out[id]
		w.Key, w.WindowStart, w.WindowEnd = g.User(e), start, start+1000
		w.N++
		w.Total += e.Amount
		out[id] = w
	}
	return out, nil
}

// checkWindows reads the committed window results as the exactly-once
// checker reads records: a window missing is lost, one committed twice
// duplicated, one with other figures unexpected.
func checkWindows(fsys vfs.FS) (*eocheck.Report, error) {
	want, err := expectedWindows()
	if err != nil {
		return nil, err
	}
	r := &eocheck.Report{Expected: int64(len(want))}
	seen := map[string]int{}
	root := eocheck.FS(fsys, "/")
	err = fs.WalkDir(root, outDir[1:], func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		f, err := root.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		r.Files++
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			r.Lines++
			var w windowResult
			if err := json.Unmarshal(sc.Bytes(), &w); err != nil {
				r.Corrupt++
				continue
			}
			r.Records++
			id := fmt.Sprintf("%s@%d", w.Key, w.WindowStart)
			if exp, ok := want[id]; !ok || exp != w {
				r.Unexpected++
				if len(r.Samples) < 5 {
					r.Samples = append(r.Samples, fmt.Sprintf("%s: %s, want %+v", p, sc.Text(), exp))
				}
				continue
			}
			seen[id]++
		}
		return sc.Err()
	})
	if err != nil {
		return nil, err
	}
	for id := range want {
		switch n := seen[id]; {
		case n == 0:
			r.Lost++
		default:
			r.Distinct++
			r.Duplicated += int64(n - 1)
		}
	}
	return r, nil
}

// The crash suite on the windowed job: window state, timers and the
// watermarks rebuilt after a restore commit every window exactly once.
func TestCrashAtEveryFaultPointWindowed(t *testing.T) {
	crashSuite(t, windowWorkload, sweepSize(), "crash at every fault point, windowed job (window results)",
		"%d points x 2 crash models (process crash, power loss), at several hits")
}
