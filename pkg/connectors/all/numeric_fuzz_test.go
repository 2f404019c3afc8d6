package all_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// numericTemplates hold every numeric option of the job spec and the
// built-in connectors, each as {{name=default}}. FuzzNumericOptions puts
// one fuzzed value in one of them.
var numericTemplates = []string{`
name: fuzz
parallelism: {{parallelism=1}}
maxParallelism: {{maxParallelism=128}}
checkpointing: {interval: {{interval=1s}}, timeout: {{timeout=10m}}, minPause: {{minPause=0}}, maxConcurrent: {{maxConcurrent=1}}, tolerableFailures: {{tolerableFailures=0}}, retained: {{retained=1}}}
restartStrategy: {type: exponential-delay, initialBackoff: {{initialBackoff=1s}}, maxBackoff: {{maxBackoff=1m}}, multiplier: {{multiplier=1.5}}, jitter: {{jitter=0.1}}, resetThreshold: {{resetThreshold=1h}}, attempts: {{attempts=3}}}
operators:
  - {uid: gen, type: datagen, format: raw, count: {{count=10}}, start: {{start=1}}, rate: {{rate=0}}, parallelism: {{opParallelism=1}}}
  - {uid: files, type: file, from: [gen], path: /tmp/flinkgo-fuzz-never-written, maxOpenFiles: {{maxOpenFiles=10}}, rolling: {maxPartSize: {{maxPartSize=1MiB}}, rolloverInterval: {{rolloverInterval=1m}}, inactivityInterval: {{inactivityInterval=1m}}}}
`, `
name: fuzz
checkpointing: {interval: 1s}
restartStrategy: {type: fixed-delay, attempts: {{fixedAttempts=1}}, delay: {{fixedDelay=1s}}}
operators:
  - {uid: in, type: kafka, brokers: [localhost:9092], topic: t, startingOffsets: {{startingOffsets=earliest}}, partitionDiscoveryInterval: {{partitionDiscoveryInterval=30s}}, retryTimeout: {{retryTimeout=60s}}}
  - {uid: out, type: kafka, from: [in], brokers: [localhost:9092], topic: u, deliveryTimeout: {{deliveryTimeout=2m}}}
`, `
name: fuzz
checkpointing: {interval: 1s}
restartStrategy: {type: failure-rate, maxFailures: {{maxFailures=1}}, interval: {{rateInterval=1m}}, delay: {{rateDelay=1s}}}
operators:
  - {uid: in, type: nats, url: "nats://127.0.0.1:4222", stream: s, mode: queue, durable: d, queueSemantics: at-least-once, maxBacklog: {{maxBacklog=100}}, ackBatchSize: {{ackBatchSize=10}}, ackTimeout: {{ackTimeout=100ms}}, ackWait: {{ackWait=30s}}}
  - {uid: out, type: nats, from: [in], url: "nats://127.0.0.1:4222", subject: x, publishTimeout: {{publishTimeout=30s}}}
`}

// slot is one {{name=default}} of a template.
type slot struct{ template, name, def string }

func slots() []slot {
	var out []slot
	for i, tpl := range numericTemplates {
		for rest := tpl; ; {
			a := strings.Index(rest, "{{")
			if a < 0 {
				break
			}
			b := strings.Index(rest, "}}")
			name, def, _ := strings.Cut(rest[a+2:b], "=")
			out = append(out, slot{strconv.Itoa(i), name, def})
			rest = rest[b+2:]
		}
	}
	return out
}

// render fills template i with the defaults and value at slot name.
func render(i int, name, value string) string {
	tpl := numericTemplates[i]
	var b strings.Builder
	for {
		a := strings.Index(tpl, "{{")
		if a < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		end := strings.Index(tpl, "}}")
		n, def, _ := strings.Cut(tpl[a+2:end], "=")
		b.WriteString(tpl[:a])
		if n == name {
			b.WriteString(value)
		} else {
			b.WriteString(def)
		}
		tpl = tpl[end+2:]
	}
}

// FuzzNumericOptions puts any value into any numeric option. The spec is
// refused with errors that name the file and a line, or accepted with
// values the runtime can use: durations within [0, api.MaxDuration],
// restart delays that never collapse to zero, a datagen that emits the
// sequence it was asked for. It covers the overflows found so far: a
// datagen count or start that wrapped start + count (0 records), bare
// millisecond durations that wrapped (18446744083710 read as 10s), a
// backoff multiplier that wrapped the delay.
//
//	go test ./pkg/connectors/all -run '^$' -fuzz FuzzNumericOptions -fuzztime 1m
func FuzzNumericOptions(f *testing.F) {
	all := slots()
	values := []string{"0", "1", "-1", "9223372036854775807", "-9223372036854775808", "18446744083710", "9223372036854775806",
		"18446744073709551615", "1.5", ".nan", ".inf", "-.inf", "1e308", "36500d", "36501d", "9223372036854775807ns", "-5s",
		"106752 days", "100000h", "0.000001ms", "1000000000", "1000000001", "2147483648", `"1"`, "[1]", "{a: 1}", "1MiB", "8EiB"}
	for i := range all {
		for _, v := range values {
			f.Add(uint8(i), v)
		}
	}
	f.Fuzz(func(t *testing.T, at uint8, value string) {
		if strings.ContainsAny(value, "\n\r{}") && len(value) > 40 {
			return // structure, not numbers: FuzzParseJob covers it
		}
		s := all[int(at)%len(all)]
		tpl, _ := strconv.Atoi(s.template)
		src := render(tpl, s.name, value)
		g, err := engine.Compile(fuzzRegistry, "fuzz.yaml", []byte(src), engine.Defaults{})
		if err != nil {
			checkRefusal(t, err)
			return
		}
		checkCheckpointing(t, g.Checkpointing)
		checkRestart(t, g.Restart)
		checkMillis(t, g, s.name, value)
		for _, v := range g.Vertices {
			if v.Op.Type == "datagen" {
				checkDatagen(t, v)
			}
		}
	})
}

func checkRefusal(t *testing.T, err error) {
	var se *api.SpecError
	if !errors.As(err, &se) || len(se.Errors) == 0 {
		t.Fatalf("error %v is not a SpecError with problems", err)
	}
	for _, fe := range se.Errors {
		if fe.File != "fuzz.yaml" || fe.Pos.Line <= 0 || fe.Msg == "" {
			t.Fatalf("problem without file, line or message: %#v", fe)
		}
	}
}

// durationOf reads back the durations the graph resolved, by slot name.
var durationOf = map[string]func(g *engine.Graph) time.Duration{
	"interval":       func(g *engine.Graph) time.Duration { return g.Checkpointing.Interval },
	"timeout":        func(g *engine.Graph) time.Duration { return g.Checkpointing.Timeout },
	"minPause":       func(g *engine.Graph) time.Duration { return g.Checkpointing.MinPause },
	"initialBackoff": func(g *engine.Graph) time.Duration { return g.Restart.InitialBackoff },
	"maxBackoff":     func(g *engine.Graph) time.Duration { return g.Restart.MaxBackoff },
	"resetThreshold": func(g *engine.Graph) time.Duration { return g.Restart.ResetThreshold },
	"fixedDelay":     func(g *engine.Graph) time.Duration { return g.Restart.Delay },
	"rateDelay":      func(g *engine.Graph) time.Duration { return g.Restart.Delay },
	"rateInterval":   func(g *engine.Graph) time.Duration { return g.Restart.Interval },
}

var decimal = regexp.MustCompile(`^(0|-?[1-9][0-9]*)$`)

// checkMillis: an accepted bare number is that many milliseconds, exactly
// (18446744083710 used to wrap to 10s).
func checkMillis(t *testing.T, g *engine.Graph, slot, value string) {
	get, ok := durationOf[slot]
	value = strings.TrimSpace(value)
	ms, err := strconv.ParseInt(value, 10, 64)
	if !ok || err != nil || !decimal.MatchString(value) {
		return // not a plain decimal (YAML reads 012 as octal 10)
	}
	if got := get(g); ms > math.MaxInt64/int64(time.Millisecond) || got != time.Duration(ms)*time.Millisecond {
		t.Fatalf("%s: %s accepted as %s", slot, value, got)
	}
}

func checkCheckpointing(t *testing.T, c api.CheckpointConfig) {
	for name, d := range map[string]time.Duration{"interval": c.Interval, "timeout": c.Timeout, "minPause": c.MinPause} {
		if d < 0 || d > api.MaxDuration.D() {
			t.Fatalf("checkpointing.%s %s accepted out of range", name, d)
		}
	}
}

// checkRestart runs the restart policy through many failures: each delay
// is within range and an exponential delay never drops below its start.
func checkRestart(t *testing.T, c api.RestartConfig) {
	p := engine.NewRestartPolicy(c, rand.New(rand.NewPCG(1, 2)))
	now := time.Unix(1_700_000_000, 0)
	floor := time.Duration(float64(c.InitialBackoff) * (1 - c.Jitter))
	for i := range 80 {
		d, ok := p.OnFailure(now)
		if !ok {
			return
		}
		if d < 0 || d > 2*api.MaxDuration.D() {
			t.Fatalf("restart %d: delay %s out of range (%+v)", i, d, c)
		}
		if c.Type == api.RestartExponentialDelay && d < floor-time.Nanosecond {
			t.Fatalf("restart %d: delay %s below the initial backoff %s (%+v)", i, d, c.InitialBackoff, c)
		}
		now = now.Add(time.Millisecond)
	}
}

// checkDatagen opens the source as one subtask and polls once: it emits
// the start of the sequence unless the sequence is empty.
func checkDatagen(t *testing.T, v *engine.Vertex) {
	opts := v.Op.Options
	start, count := int64(1), int64(-1)
	if v, ok := opts["start"].Value().(int64); ok { // absent or null: the default
		start = v
	}
	if v, ok := opts["count"].Value().(int64); ok {
		count = v
	}
	src := v.Plan.NewSource()
	ctx := runtime.NewContext(runtime.ContextOptions{UID: v.Op.UID, Parallelism: 1, MaxParallelism: 128, State: state.NewOperatorState(), Wakeup: make(chan struct{})})
	if err := src.Open(ctx); err != nil {
		t.Fatalf("datagen open: %v", err)
	}
	defer src.Close()
	b := runtime.NewBatch()
	err := src.Poll(b)
	if err != nil && !errors.Is(err, runtime.ErrEndOfInput) {
		t.Fatalf("datagen poll: %v", err)
	}
	remaining := count
	if count < 0 {
		remaining = math.MaxInt64 - start // unbounded: up to math.MaxInt64 - 1
	}
	if remaining == 0 {
		if len(b.Records) != 0 {
			t.Fatalf("start %d count %d: an empty sequence emitted %q", start, count, b.Records[0].Value)
		}
		return
	}
	if len(b.Records) == 0 {
		t.Fatalf("start %d count %d: no record", start, count)
	}
	if got := string(b.Records[0].Value); got != strconv.FormatInt(start, 10) {
		t.Fatalf("start %d count %d: first record %s", start, count, got)
	}
	if int64(len(b.Records)) > remaining {
		t.Fatalf("start %d count %d: %d records", start, count, len(b.Records))
	}
}

// fuzzRegistry holds every built-in operator type.
var fuzzRegistry = all.Registry()
