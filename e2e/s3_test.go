package e2e

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/produce"
	"github.com/flinkgo/flinkgo/internal/dev/s3server"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/internal/s3test"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// s3Env is a daemon environment whose checkpoints and savepoints are in a
// bucket of a real S3 server (versitygw on loopback), reached through the
// s3.* keys and the AWS chain's environment variables, as a user sets it
// up. raw is an independent S3 client (aws-sdk-go-v2 directly, not
// flinkgo's storage layer) the tests read and write the bucket with.
type s3Env struct {
	*env
	srv    *s3server.Server
	bucket string
	raw    *s3.Client
}

func newS3Env(t *testing.T) *s3Env {
	srv := s3test.Start(t)
	bucket := s3test.Bucket(t, srv)
	e := newEnv(t)
	e.extra = append(srv.Env(), "FLINKGO_STATE_CHECKPOINTS_DIR=s3://"+bucket+"/checkpoints")
	return &s3Env{env: e, srv: srv, bucket: bucket, raw: rawS3(t, srv)}
}

// rawS3 is an independent client of srv (aws-sdk-go-v2 directly).
func rawS3(t *testing.T, srv *s3server.Server) *s3.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, ""), HTTPClient: &http.Client{Transport: tr}})
}

func (s *s3Env) url(key string) string { return "s3://" + s.bucket + "/" + key }

// keys lists the keys below prefix.
func (s *s3Env) keys(prefix string) []string {
	s.t.Helper()
	var out []string
	p := s3.NewListObjectsV2Paginator(s.raw, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(prefix + "/")})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(s.t, err)
		for _, o := range page.Contents {
			out = append(out, aws.ToString(o.Key))
		}
	}
	return out
}

// download copies the objects below prefix into dir, keeping the layout.
func (s *s3Env) download(prefix, dir string) {
	s.t.Helper()
	for _, k := range s.keys(prefix) {
		out, err := s.raw.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(k)})
		require.NoError(s.t, err)
		data, err := io.ReadAll(out.Body)
		_ = out.Body.Close()
		require.NoError(s.t, err)
		local := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(k, prefix+"/")))
		require.NoError(s.t, os.MkdirAll(filepath.Dir(local), 0o700))
		require.NoError(s.t, os.WriteFile(local, data, 0o600))
	}
}

// upload copies the files below dir to prefix.
func (s *s3Env) upload(dir, prefix string) {
	s.t.Helper()
	require.NoError(s.t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = s.raw.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &s.bucket, Key: aws.String(path.Join(prefix, filepath.ToSlash(rel))), Body: f})
		return err
	}))
}

// verifyOutput reads the finished objects below prefix with the
// independent client and checks them.
func (s *s3Env) verifyOutput(prefix string) *verify.Report {
	s.t.Helper()
	dir := s.t.TempDir()
	s.download(prefix, dir)
	r, err := verify.Run(verify.Options{Path: dir, Field: "idx"})
	require.NoError(s.t, err)
	return r
}

// uploads counts the multipart uploads in progress below prefix.
func (s *s3Env) uploads(prefix string) int {
	out, err := s.raw.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: &s.bucket, Prefix: aws.String(prefix + "/")})
	require.NoError(s.t, err)
	return len(out.Uploads)
}

func (s *s3Env) waitRecords(prefix string, n int64) *verify.Report {
	s.t.Helper()
	var r *verify.Report
	require.Truef(s.t, waitEvery(60*time.Second, checkEvery, func() bool {
		r = s.verifyOutput(prefix)
		return r.Records >= n
	}), "%s: fewer than %d records committed\n%s", prefix, n, s.stderr.String())
	return r
}

// The blog experiment with checkpoints, savepoints and output all in a
// bucket: savepoint → cancel → run -s s3://… → stop; the output, read with
// an independent S3 client, holds every idx exactly once.
func TestSavepointExperimentOnS3(t *testing.T) {
	parallel(t)
	s := newS3Env(t)
	b := broker(t, "flink-test", 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = produce.Run(ctx, produce.Config{Brokers: []string{b.Addr()}, Topic: "flink-test", Rate: 3000})
	}()
	s.startDaemon()
	spec := s.writeSpec("b.yaml", kafkaToFiles(b.Addr(), "flink-test", s.url("out"), 1, ""))
	id := s.mustRun("run", spec)
	s.waitRecords("out", 2000)
	sp := s.mustRun("savepoint", id, s.url("savepoints"))
	require.True(t, strings.HasPrefix(sp, s.url("savepoints/savepoint-")), sp)
	require.Contains(t, s.keys(strings.TrimPrefix(sp, "s3://"+s.bucket+"/")), strings.TrimPrefix(sp, "s3://"+s.bucket+"/")+"/_metadata")
	inspect := s.mustRun("savepoint", "inspect", sp)
	require.Contains(t, inspect, "files")
	listed := s.listed(sp)
	require.NotNil(t, listed, "the dashboard lists the savepoint in the bucket")
	require.True(t, listed.Complete, "%+v", *listed)
	s.mustRun("cancel", id)
	time.Sleep(time.Second)
	id = s.mustRun("run", "-s", sp, spec)
	info := s.info(id)
	require.Equal(t, sp, info.RestoredFrom)
	r := s.verifyOutput("out")
	s.waitRecords("out", r.Records+3000)
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get("http://" + s.restAddress() + "/metrics")
	require.NoError(t, err)
	metrics, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Contains(t, string(metrics), "flinkgo_job_storage_requests_total")
	require.Contains(t, string(metrics), "flinkgo_job_last_checkpoint_storage_requests")
	require.Contains(t, s.mustRun("info", id), "object storage:")
	stopped := s.mustRun("stop", id, "--savepoint-path", s.url("savepoints"))
	require.True(t, strings.HasPrefix(stopped, "s3://"), stopped)
	info = s.waitState(id, api.StateFinished, 30*time.Second)
	require.NotNil(t, info.Storage, "object storage costs in info")
	require.Positive(t, info.Storage.Requests)
	require.Positive(t, info.Storage.BytesUploaded)
	r = s.verifyOutput("out")
	require.True(t, r.OK(), "gaps %v, duplicates %d", r.Gaps, r.Duplicates)
	require.Equal(t, int64(1), r.First)
	require.Equal(t, r.Last, r.Records)
	require.Zero(t, s.uploads("out"), "multipart uploads left behind")
	t.Logf("%d records exactly once; job storage: %+v", r.Records, *info.Storage)
}

// datagenToFiles is a generated sequence into a file sink at out.
func datagenToFiles(out string, rate int) string {
	return fmt.Sprintf(`
name: relocate
parallelism: 1
checkpointing: {interval: 200ms}
operators:
  - {uid: gen, type: datagen, rate: %d}
  - {uid: files, type: file, from: [gen], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, rate, out)
}

// Savepoints are self-contained and relocatable: one taken into a bucket,
// copied to a local directory, restores the same; one taken locally,
// copied into the bucket, too. Each restore continues the output without
// gap or duplicate.
func TestSavepointRelocationS3AndLocal(t *testing.T) {
	parallel(t)
	s := newS3Env(t)
	s.startDaemon()
	for _, c := range []struct{ name, target string }{{"s3-to-local", s.url("sp1")}, {"local-to-s3", filepath.Join(s.home, "sp2")}} {
		t.Run(c.name, func(t *testing.T) {
			out := s.url("out-" + c.name)
			spec := s.writeSpec(c.name+".yaml", datagenToFiles(out, 4000))
			id := s.mustRun("run", spec)
			s.waitRecords("out-"+c.name, 1000)
			sp := s.mustRun("stop", id, "--savepoint-path", c.target)
			s.waitState(id, api.StateFinished, 30*time.Second)
			var moved string
			if strings.HasPrefix(sp, "s3://") {
				moved = filepath.Join(s.home, "moved-"+c.name)
				s.download(strings.TrimPrefix(sp, "s3://"+s.bucket+"/"), moved)
			} else {
				key := "moved-" + c.name + "/" + filepath.Base(sp)
				s.upload(sp, key)
				moved = s.url(key)
			}
			before := s.verifyOutput("out-" + c.name)
			id = s.mustRun("run", "-s", moved, spec)
			require.Equal(t, moved, s.info(id).RestoredFrom)
			s.waitRecords("out-"+c.name, before.Records+2000)
			s.mustRun("stop", id, "--savepoint-path", c.target)
			s.waitState(id, api.StateFinished, 30*time.Second)
			r := s.verifyOutput("out-" + c.name)
			require.True(t, r.OK(), "gaps %v, duplicates %d (e.g. %v)", r.Gaps, r.Duplicates, r.DuplicateSamples)
			require.Equal(t, int64(1), r.First)
			require.Equal(t, r.Last, r.Records)
			require.Greater(t, r.Records, before.Records)
		})
	}
}

// A kill -9 loop of the daemon with its checkpoints and the file sink's
// output in a bucket: a Kafka → file job (exactly-once, 150ms checkpoints)
// while a producer writes a known sequence. The daemon is killed at random
// moments (also during startup and recovery), and every other daemon is
// made to exit at one of the job's fault points instead (the checkpoint
// and sink steps of the S3 paths); each is restarted. The output, read
// with an independent S3 client, holds every record exactly once, and no
// multipart upload is left behind.
func killLoopOnS3ExactlyOnce(t *testing.T) {
	start := time.Now()
	kills, records := 20, int64(40_000)
	if os.Getenv("FLINKGO_CHAOS") == "long" {
		kills, records = 80, 160_000
	}
	seed := chaosSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0x73336b6c))
	points := append([]string(nil), exitPoints...)
	rng.Shuffle(len(points), func(i, j int) { points[i], points[j] = points[j], points[i] })
	s := newS3Env(t)
	b := broker(t, "seq", 4)
	s.startDaemon()
	spec := fmt.Sprintf(`
name: kill-loop-s3
parallelism: 2
checkpointing: {interval: 150ms, mode: exactly-once}
restartStrategy: {type: fixed-delay, attempts: 100000, delay: 100ms}
operators:
  - {uid: source, type: kafka, brokers: [%s], topic: seq, groupId: kill-loop, startingOffsets: earliest, format: json}
  - {uid: files, type: file, from: [source], path: %s, bucket: yyyy-MM-dd--HH, rolling: {onCheckpoint: true}}
`, b.Addr(), s.url("out"))
	id := s.mustRun("run", s.writeSpec("kill-loop.yaml", spec))
	prod := startProducer(b.Addr(), "seq", killPlan{records: records, rate: float64(records) / 16})
	var startup, running, exits, fallback int
	fired := map[string]bool{}
	base := s.extra
	var logs []string
	for i := 0; i < kills; i++ {
		point := ""
		if i%2 == 1 {
			point = points[(i/2)%len(points)]
			s.extra = append(append([]string(nil), base...), fmt.Sprintf("FLINKGO_FAULTS=%s:exit,nth=%d", point, 1+rng.IntN(3)))
		}
		if i > 0 {
			s.spawnDaemon()
		}
		s.extra = base
		switch {
		case point != "":
			if waitFor(10*time.Second, func() bool { return strings.Contains(s.stderr.String(), "injected fault: "+point+" exit") }) {
				exits++
				fired[point] = true
			} else {
				fallback++ // not reached in time: killed instead
			}
		case i > 0 && rng.IntN(4) == 0:
			time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond) // during startup and recovery
			startup++
		default:
			s.waitReady(30 * time.Second)
			time.Sleep(time.Duration(100+rng.IntN(900)) * time.Millisecond)
			running++
		}
		killed, err := s.crash()
		if point != "" {
			killed = killed || err != nil && strings.Contains(err.Error(), "exit status 137")
		}
		require.Truef(t, killed, "crash %d: the daemon had exited by itself (%v):\n%s", i+1, err, s.stderr.String())
		requireNoPanic(t, fmt.Sprintf("daemon log before crash %d", i+1), s.stderr.String())
		logs = append(logs[max(0, len(logs)-2):], s.stderr.String())
	}
	s.startDaemon()
	require.True(t, waitFor(2*time.Minute, prod.finished), "producer still running")
	require.NoError(t, prod.err)
	r := s.waitRecords("out", records)
	info := s.info(id)
	s.mustRun("stop", id, "--savepoint-path", s.url("sp"))
	s.waitState(id, api.StateFinished, 30*time.Second)
	requireNoPanic(t, "last daemon log", s.stderr.String())
	r = s.verifyOutput("out")
	lost := r.GapCount + max(0, records-r.Last) + max(0, r.First-1)
	left := s.uploads("out")
	summary := fmt.Sprintf("%d crashes of the daemon (%d kills while running, %d during startup or recovery, %d exits at %d fault points, %d fallback kills)",
		kills, running, startup, exits, len(fired), fallback)
	t.Logf("%s, %d job restarts; %d records, %d lost, %d duplicated, %d uploads left; %.1fs",
		summary, info.Restarts, r.Records, lost, r.Duplicates, left, time.Since(start).Seconds())
	scorecard.Record(t, start, scorecard.Entry{Suite: "kill -9 loop on S3, real binary (Kafka → file, checkpoints and output in a bucket)",
		Faults: summary, Planned: kills, Fired: kills, Cases: kills + 1, Records: r.Records, Lost: lost, Duplicated: r.Duplicates})
	require.Truef(t, r.OK() && r.Records == records && r.First == 1 && r.Last == records,
		"%d records, %d..%d, %d missing in %v, %d duplicates (e.g. %v)\n%s", r.Records, r.First, r.Last, r.GapCount, r.Gaps, r.Duplicates, r.DuplicateSamples, strings.Join(logs, "\n---\n"))
	require.Zero(t, left, "multipart uploads of crashed attempts left in the bucket")
	require.GreaterOrEqual(t, exits, kills/4, "too few fault-point exits fired")
}
