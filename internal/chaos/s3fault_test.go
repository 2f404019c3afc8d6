package chaos

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/config"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/eocheck"
	"github.com/flinkgo/flinkgo/internal/s3test"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/internal/storage"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
	"github.com/flinkgo/flinkgo/pkg/vfs/s3store"
)

// The store-fault suite runs a datagen → keyBy → file job whose
// checkpoints and output are in a bucket of a real S3 server (versitygw),
// through a fault-injecting HTTP transport: 5xx answers, throttling,
// requests that hang past the client's timeout, a store that is away,
// and connections cut in the middle of _metadata and of
// CompleteMultipartUpload (both before the server got the whole request
// and after it carried it out). Throughout the run a watcher with a clean
// client checks that every checkpoint with a _metadata is complete; the
// transport's log shows that no output part was completed before a
// _metadata was stored; and once the faults stop the job finishes with
// every record exactly once.

const s3FaultRecords = 12000

func s3FaultSpec(bucket string) string {
	return fmt.Sprintf(`
name: s3-faults
parallelism: 2
checkpointing: {interval: 100ms, timeout: 3s, tolerableFailures: 2, retained: 1000}
restartStrategy: {type: fixed-delay, attempts: 1000, delay: 100ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: 4000, format: checked}
  - {uid: key, type: keyBy, from: [gen], expr: "split"}
  - {uid: out, type: file, from: [key], path: s3://%s/out, bucket: none, rolling: {onCheckpoint: true}}
`, s3FaultRecords, bucket)
}

// s3FaultCase is one kind of store fault.
type s3FaultCase struct {
	name  string
	rules func(start time.Time) []*s3test.Rule
	// planned is how many times the faults must fire at least.
	planned int
}

func s3FaultCases() []s3FaultCase {
	put := func(r *http.Request) bool { return r.Method == http.MethodPut }
	return []s3FaultCase{
		{"5xx answers", func(start time.Time) []*s3test.Rule {
			return []*s3test.Rule{{Name: "500", Fault: s3test.Status, Code: 500, S3: "InternalError", Every: 3, Until: start.Add(1500 * time.Millisecond)}}
		}, 10},
		{"throttling", func(start time.Time) []*s3test.Rule {
			// Until 5 s, not 3: on a loaded machine the retries' backoff
			// left 7 PUTs in 3 s.
			return []*s3test.Rule{{Name: "503", Match: put, Fault: s3test.Status, Code: 503, S3: "SlowDown", Times: 12, Until: start.Add(5 * time.Second)}}
		}, 8},
		{"timeouts", func(start time.Time) []*s3test.Rule {
			return []*s3test.Rule{{Name: "hang", Fault: s3test.Hang, Every: 7, Times: 8, Until: start.Add(3 * time.Second)}}
		}, 4},
		{"store away", func(start time.Time) []*s3test.Rule {
			return []*s3test.Rule{{Name: "away", Fault: s3test.Status, Code: 503, S3: "ServiceUnavailable", Until: start.Add(2 * time.Second), Match: func(*http.Request) bool { return time.Since(start) > 500*time.Millisecond }}}
		}, 20},
		{"cut in _metadata", func(time.Time) []*s3test.Rule {
			return []*s3test.Rule{
				{Name: "cut-request", Match: s3test.IsMetadataPut, Fault: s3test.CutRequest, CutAfter: 20, Every: 3, Times: 3},
				{Name: "cut-response", Match: s3test.IsMetadataPut, Fault: s3test.CutResponse, Every: 2, Times: 3},
			}
		}, 6},
		{"cut in CompleteMultipartUpload", func(time.Time) []*s3test.Rule {
			return []*s3test.Rule{
				{Name: "cut-request", Match: s3test.IsComplete("out/"), Fault: s3test.CutRequest, CutAfter: 30, Every: 3, Times: 3},
				{Name: "cut-response", Match: s3test.IsComplete("out/"), Fault: s3test.CutResponse, Every: 2, Times: 3},
			}
		}, 6},
	}
}

func TestS3StoreFaults(t *testing.T) {
	start := time.Now()
	srv := s3test.Start(t)
	clean := vfs.Mux(vfs.NewMem(), s3test.FS(t, srv, s3store.Options{}))
	var sum tally
	var errs []string
	for _, c := range s3FaultCases() {
		t.Run(c.name, func(t *testing.T) {
			bucket := s3test.Bucket(t, srv)
			tr := s3test.NewTransport()
			t.Cleanup(tr.CloseIdleConnections)
			cfg := config.DefaultS3
			cfg.Endpoint, cfg.PathStyle, cfg.MaxAttempts = srv.Endpoint, true, 3
			cfg.RequestTimeout = 2 * time.Second
			t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
			t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
			fsys, err := storage.FS(cfg, vfs.NewMem(), nil, storage.Options{HTTPClient: &http.Client{Transport: tr, Timeout: 500 * time.Millisecond}})
			require.NoError(t, err)

			w := watchCheckpoints(clean, "s3://"+bucket+"/chk")
			g, err := engine.Compile(testRegistry, "s3.yaml", []byte(s3FaultSpec(bucket)), engine.Defaults{})
			require.NoError(t, err)
			runStart := time.Now()
			tr.Add(c.rules(runStart)...)
			j := engine.StartJob(engine.JobOptions{ID: fmt.Sprintf("s3f%d", jobSeq.Add(1)), Graph: g, Env: &engine.Env{FS: fsys}, CheckpointsDir: "s3://" + bucket + "/chk"})
			st := awaitJob(j, 90*time.Second)
			torn := w.stop()
			fired := 0
			for _, n := range tr.Fired() {
				fired += n
			}
			r, cerr := eocheck.Datagen(2, 1, s3FaultRecords).Check(eocheck.FS(clean, "s3://"+bucket), "out")
			early := completedBeforeMetadata(tr.Seen())
			info := j.Info()
			sum.add(c.planned, min(fired, c.planned), r)
			t.Logf("%s: faults fired %v, job %s after %d restarts, checkpoints %+v; %d checkpoints checked while running, torn %d; %v",
				c.name, tr.Fired(), st, info.Restarts, info.Checkpoints, w.checked, len(torn), r)
			switch {
			case st != api.StateFinished:
				errs = append(errs, fmt.Sprintf("%s: job ended %s: %s", c.name, st, info.Error))
			case cerr != nil || !r.OK():
				errs = append(errs, fmt.Sprintf("%s: output: %v %v", c.name, cerr, r))
			case len(torn) > 0:
				errs = append(errs, fmt.Sprintf("%s: checkpoints with _metadata but not complete: %v", c.name, torn))
			case early > 0:
				errs = append(errs, fmt.Sprintf("%s: %d output parts completed before any _metadata was stored", c.name, early))
			case fired < c.planned:
				errs = append(errs, fmt.Sprintf("%s: %d faults fired, %d planned", c.name, fired, c.planned))
			}
		})
	}
	scorecard.Record(t, start, scorecard.Entry{Suite: "S3 store faults (versitygw behind a fault-injecting HTTP transport)",
		Faults:  "5xx, throttling (SlowDown), requests hanging past the timeout, store away for 1.5s, connections cut in _metadata and in CompleteMultipartUpload (before and after the server carried it out)",
		Planned: sum.planned, Fired: sum.fired, Cases: sum.cases, Records: sum.records, Lost: sum.lost, Duplicated: sum.dup})
	require.Empty(t, errs, strings.Join(errs, "\n"))
}

// awaitJob waits for a job to end by itself, cancelling it after d.
func awaitJob(j *engine.Job, d time.Duration) api.JobState {
	select {
	case <-j.Done():
	case <-time.After(d):
		_ = j.Cancel()
		<-j.Done()
	}
	return j.State()
}

// completedBeforeMetadata counts CompleteMultipartUpload requests of the
// output sent before the first _metadata was stored: output visible
// before any checkpoint completed.
func completedBeforeMetadata(seen []s3test.Seen) int {
	stored, early := false, 0
	for _, s := range seen {
		switch {
		case s.Method == http.MethodPut && strings.HasSuffix(s.Path, "/_metadata") && s.Status == http.StatusOK:
			stored = true
		case s.Method == http.MethodPost && strings.Contains(s.Query, "uploadId") && strings.Contains(s.Path, "/out/") && !stored:
			early++
		}
	}
	return early
}

// checkpointWatch verifies, while a job runs, every checkpoint that has a
// _metadata (retention is off in the spec, so none is deleted meanwhile).
type checkpointWatch struct {
	fsys    vfs.FS
	base    string
	done    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	checked int
	torn    []string
}

func watchCheckpoints(fsys vfs.FS, base string) *checkpointWatch {
	w := &checkpointWatch{fsys: fsys, base: base, done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			select {
			case <-w.done:
				w.scan()
				return
			case <-time.After(50 * time.Millisecond):
				w.scan()
			}
		}
	}()
	return w
}

func (w *checkpointWatch) scan() {
	jobs, err := w.fsys.ReadDir(w.base)
	if err != nil {
		return
	}
	for _, jd := range jobs {
		list, _ := checkpoint.List(w.fsys, w.base, jd.Name())
		for _, l := range list {
			dir, m, err := checkpoint.Load(w.fsys, l.Dir)
			if err != nil {
				if !errors.Is(err, checkpoint.ErrNotSnapshot) && !errors.Is(err, fs.ErrNotExist) {
					w.add(l.Dir + ": " + err.Error())
				}
				continue
			}
			// A snapshot being disposed loses its _metadata first: a
			// failed check counts only if the _metadata is still there.
			if err := checkpoint.Verify(w.fsys, dir, m); err != nil {
				if ok, _ := vfs.Exists(w.fsys, vfs.Join(dir, checkpoint.MetadataFile)); ok {
					w.add(err.Error())
				}
			}
			w.mu.Lock()
			w.checked++
			w.mu.Unlock()
		}
	}
}

func (w *checkpointWatch) add(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.torn = append(w.torn, s)
}

func (w *checkpointWatch) stop() []string {
	close(w.done)
	w.wg.Wait()
	return w.torn
}
