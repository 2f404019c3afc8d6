package checkpoint

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCoordinatorScripts replays testdata/coordinator/*.txt, in the style
// of etcd-io/raft's interaction tests: the coordinator is pure, so every
// decision is checked with a fake clock, without goroutines, timers or
// disks. A script is a sequence of blocks:
//
//	# comments and blank lines between blocks are kept as they are
//	<command> <args>
//	----
//	<the decisions, one per line, or (none)>
//
// Commands (times are relative to the start, t+0s):
//
//	config interval=1s timeout=10s minPause=0 maxConcurrent=1 tolerable=0 retained=1 tasks=2 [persistFinal=true] [record=true] [nextID=5] [restored=3,4]
//	                                  a new coordinator; the clock goes back to t+0s
//	tick [+1s]                        move the clock, then Tick
//	advance +1s                       move the clock only
//	ack <id> task=0[,1...]            one AckEvent per task
//	decline <id> task=1 [err=text]
//	persisted <id> ok|err [err=text]  the driver wrote (or failed to write) _metadata
//	recorded <id> ok|err [err=text]   the driver recorded (or failed to record) the restore point
//	request savepoint|stop|final [dir=/x] [drain]   requests get refs 1, 2, ... in order
//	shutdown [reason=failing|stopping]
//	wake                              when the driver must tick next
//	state                             pending ids, next id, retained ids
//
// Decisions print as
//
//	start id=1 kind=checkpoint persist [ref=1 dir=/x drain]
//	write-metadata id=1 kind=checkpoint tasks=0,1 trigger=t+1s
//	record id=1 kind=checkpoint retained=[1] next=2
//	complete id=1 kind=checkpoint duration=2s [ref=1]
//	abort id=1 kind=checkpoint reason=timeout [ref=1] err="..."
//	discard id=1
//	reject ref=2 kind=stop-with-savepoint reason=already-stopped
//	fail-job err="..."
//
// Run with -rewrite to regenerate the expected output after a deliberate
// change, and review the diff.
func TestCoordinatorScripts(t *testing.T) {
	replayScripts(t, "testdata/coordinator/*.txt", func(t *testing.T, file string) func(line int, cmd string) string {
		s := &script{t: t, file: file}
		return func(line int, cmd string) string {
			s.line = line
			return s.run(cmd)
		}
	})
}

// t0 is the start of every script's clock.
var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// script is the state of one replay.
type script struct {
	t     *testing.T
	file  string
	line  int
	c     *Coordinator
	now   time.Time
	refs  int64
	tasks int
}

func (s *script) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("%s:%d: %s", s.file, s.line, fmt.Sprintf(format, args...))
}

// args splits "cmd pos1 pos2 k=v" into positionals and keys.
func (s *script) args(fields []string) ([]string, map[string]string) {
	var pos []string
	kv := map[string]string{}
	for _, f := range fields {
		if k, v, ok := strings.Cut(f, "="); ok {
			kv[k] = v
		} else {
			pos = append(pos, f)
		}
	}
	return pos, kv
}

func (s *script) duration(v string) time.Duration {
	if v == "0" {
		return 0
	}
	d, err := time.ParseDuration(strings.TrimPrefix(v, "+"))
	if err != nil {
		s.fatalf("bad duration %q: %v", v, err)
	}
	return d
}

func (s *script) int(v string) int {
	n, err := strconv.Atoi(v)
	if err != nil {
		s.fatalf("bad number %q: %v", v, err)
	}
	return n
}

func (s *script) ints(v string) []int {
	var out []int
	for _, f := range strings.Split(v, ",") {
		out = append(out, s.int(f))
	}
	return out
}

func (s *script) id(pos []string) int64 {
	if len(pos) == 0 {
		s.fatalf("missing checkpoint id")
	}
	return int64(s.int(pos[0]))
}

func (s *script) run(line string) string {
	fields := strings.Fields(line)
	cmd, rest := fields[0], fields[1:]
	pos, kv := s.args(rest)
	if cmd != "config" && s.c == nil {
		s.fatalf("%s before config", cmd)
	}
	var out []Decision
	switch cmd {
	case "config":
		return s.config(kv)
	case "tick":
		if len(pos) > 0 {
			s.now = s.now.Add(s.duration(pos[0]))
		}
		out = s.c.Step(Tick{Now: s.now})
	case "advance":
		s.now = s.now.Add(s.duration(pos[0]))
		return "t+" + s.now.Sub(t0).String()
	case "ack":
		id := s.id(pos)
		for _, task := range s.ints(kv["task"]) {
			h := Handle{Task: task, UID: "op", Subtask: task, File: StateFileName("op", task), Size: 10}
			out = append(out, s.c.Step(AckEvent{ID: id, Handle: h, Now: s.now})...)
		}
	case "decline":
		var err error
		if msg, ok := kv["err"]; ok {
			err = errors.New(msg)
		}
		out = s.c.Step(DeclineEvent{ID: s.id(pos), Task: s.int(kv["task"]), Err: err, Now: s.now})
	case "persisted":
		var err error
		if len(pos) < 2 || (pos[1] != "ok" && pos[1] != "err") {
			s.fatalf("persisted <id> ok|err")
		}
		if pos[1] == "err" {
			err = errors.New(cmp(kv["err"], "disk full"))
		}
		out = s.c.Step(PersistedEvent{ID: s.id(pos), Err: err, Now: s.now})
	case "recorded":
		var err error
		if len(pos) < 2 || (pos[1] != "ok" && pos[1] != "err") {
			s.fatalf("recorded <id> ok|err")
		}
		if pos[1] == "err" {
			err = errors.New(cmp(kv["err"], "registry not writable"))
		}
		out = s.c.Step(RecordedEvent{ID: s.id(pos), Err: err, Now: s.now})
	case "request":
		out = s.request(pos, kv)
	case "shutdown":
		reason := map[string]Reason{"": ReasonJobFailing, "failing": ReasonJobFailing, "stopping": ReasonJobStopping}[kv["reason"]]
		if reason == ReasonNone {
			s.fatalf("unknown shutdown reason %q", kv["reason"])
		}
		out = s.c.Step(ShutdownEvent{Reason: reason, Now: s.now})
	case "wake":
		w := s.c.Wake()
		if w.IsZero() {
			return "wake none"
		}
		return "wake t+" + w.Sub(t0).String()
	case "state":
		return fmt.Sprintf("pending=%v next=%d retained=%v", s.c.Pending(), s.c.NextID(), s.c.Retained())
	default:
		s.fatalf("unknown command %q", cmd)
	}
	return s.print(out)
}

func cmp(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func (s *script) config(kv map[string]string) string {
	cfg := Config{MaxConcurrent: 1, Retained: 1, Timeout: 10 * time.Minute}
	tasks, nextID := 1, int64(0)
	var restored []int64
	for k, v := range kv {
		switch k {
		case "interval":
			cfg.Interval = s.duration(v)
		case "timeout":
			cfg.Timeout = s.duration(v)
		case "minPause":
			cfg.MinPause = s.duration(v)
		case "maxConcurrent":
			cfg.MaxConcurrent = s.int(v)
		case "tolerable":
			cfg.TolerableFailures = s.int(v)
		case "retained":
			cfg.Retained = s.int(v)
		case "persistFinal":
			cfg.PersistFinal = v == "true"
		case "record":
			cfg.Record = v == "true"
		case "tasks":
			tasks = s.int(v)
		case "nextID":
			nextID = int64(s.int(v))
		case "restored":
			for _, id := range s.ints(v) {
				restored = append(restored, int64(id))
			}
		default:
			s.fatalf("unknown config key %q", k)
		}
	}
	s.c = New(cfg, tasks, nextID, restored)
	s.now, s.refs, s.tasks = t0, 0, tasks
	return s.print(nil)
}

func (s *script) request(pos []string, kv map[string]string) []Decision {
	if len(pos) == 0 {
		s.fatalf("request savepoint|stop|final")
	}
	kind := map[string]Kind{"savepoint": Savepoint, "stop": StopSavepoint, "final": Final}[pos[0]]
	if kind == 0 {
		s.fatalf("unknown request %q", pos[0])
	}
	s.refs++
	_, drain := kv["drain"]
	for _, p := range pos[1:] {
		drain = drain || p == "drain"
	}
	return s.c.Step(RequestEvent{Req: Request{Ref: s.refs, Kind: kind, Dir: kv["dir"], Drain: drain}, Now: s.now})
}

var reasonNames = map[Reason]string{
	ReasonNone:           "none",
	ReasonTimeout:        "timeout",
	ReasonDeclined:       "declined",
	ReasonSubsumed:       "subsumed",
	ReasonIO:             "io",
	ReasonJobFailing:     "job-failing",
	ReasonJobStopping:    "job-stopping",
	ReasonNotRunning:     "not-running",
	ReasonAlreadyStopped: "already-stopped",
}

func reqString(r *Request) string {
	if r == nil {
		return ""
	}
	s := fmt.Sprintf(" ref=%d", r.Ref)
	if r.Dir != "" {
		s += " dir=" + r.Dir
	}
	if r.Drain {
		s += " drain"
	}
	return s
}

// print renders decisions in the canonical form of the scripts.
func (s *script) print(ds []Decision) string {
	if len(ds) == 0 {
		return "(none)"
	}
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = s.decision(d)
	}
	return strings.Join(lines, "\n")
}

func (s *script) decision(d Decision) string {
	switch x := d.(type) {
	case Start:
		out := fmt.Sprintf("start id=%d kind=%s", x.ID, x.Kind)
		if x.Persist {
			out += " persist"
		}
		if !x.Timestamp.Equal(s.now) {
			out += " timestamp=t+" + x.Timestamp.Sub(t0).String() // never: it starts now
		}
		return out + reqString(x.Req)
	case WriteMetadata:
		tasks := make([]string, len(x.Handles))
		for i, h := range x.Handles {
			tasks[i] = strconv.Itoa(h.Task)
		}
		out := fmt.Sprintf("write-metadata id=%d kind=%s tasks=%s trigger=t+%s", x.ID, x.Kind, strings.Join(tasks, ","), x.Trigger.Sub(t0))
		if x.Drain {
			out += " drain"
		}
		return out
	case Record:
		return fmt.Sprintf("record id=%d kind=%s retained=%v next=%d", x.ID, x.Kind, x.Retained, x.NextID)
	case Complete:
		return fmt.Sprintf("complete id=%d kind=%s duration=%s%s", x.ID, x.Kind, x.Duration, reqString(x.Req))
	case Abort:
		keep := ""
		if x.Keep {
			keep = " keep"
		}
		return fmt.Sprintf("abort id=%d kind=%s reason=%s%s err=%q%s", x.ID, x.Kind, reasonNames[x.Reason], reqString(x.Req), fmt.Sprint(x.Err), keep)
	case Discard:
		return fmt.Sprintf("discard id=%d", x.ID)
	case Reject:
		return fmt.Sprintf("reject ref=%d kind=%s reason=%s", x.Req.Ref, x.Req.Kind, reasonNames[x.Reason])
	case FailJob:
		return fmt.Sprintf("fail-job err=%q", fmt.Sprint(x.Err))
	}
	s.fatalf("unknown decision %T", d)
	return ""
}

// TestCoordinatorNilEventPanics: events are a closed set (a string or any
// other type does not compile); a nil one is a bug in the driver, reported
// loudly.
func TestCoordinatorNilEventPanics(t *testing.T) {
	c := New(Config{}, 1, 0, nil)
	assert.PanicsWithValue(t, "checkpoint: unknown event <nil> (bug)", func() { c.Step(nil) })
}

// TestCoordinatorNewDefaults: New repairs a config that would deadlock or
// discard everything, and continues a restored job's numbering.
func TestCoordinatorNewDefaults(t *testing.T) {
	restored := []int64{4, 5}
	c := New(Config{Interval: time.Second, Timeout: time.Minute}, 1, 0, restored)
	assert.Equal(t, int64(1), c.NextID(), "ids start at 1")
	restored[0] = 99
	assert.Equal(t, []int64{4, 5}, c.Retained(), "New copies the retained list")
	c.Retained()[0] = 42
	assert.Equal(t, []int64{4, 5}, c.Retained(), "Retained returns a copy")

	// MaxConcurrent 0 acts as 1: a periodic checkpoint can start.
	c.Step(Tick{Now: t0})
	ds := c.Step(Tick{Now: t0.Add(time.Second)})
	require.Len(t, ds, 1)
	assert.Equal(t, int64(1), ds[0].(Start).ID)
	assert.Empty(t, c.Step(Tick{Now: t0.Add(2 * time.Second)}), "one at a time")

	// Retained 0 acts as 1: completing keeps the newest.
	c.Step(AckEvent{ID: 1, Handle: Handle{Task: 0}, Now: t0.Add(2 * time.Second)})
	ds = c.Step(PersistedEvent{ID: 1, Now: t0.Add(2 * time.Second)})
	assert.Equal(t, []Decision{
		Complete{ID: 1, Kind: Periodic, Duration: time.Second},
		Discard{ID: 4},
		Discard{ID: 5},
	}, ds)
	assert.Equal(t, []int64{1}, c.Retained())
}

func TestKindAndReasonNames(t *testing.T) {
	for k, want := range map[Kind]struct {
		name                         string
		savepoint, terminal, commits bool
	}{
		Periodic:      {"checkpoint", false, false, true},
		Savepoint:     {"savepoint", true, false, false},
		StopSavepoint: {"stop-with-savepoint", true, true, true},
		Final:         {"final-checkpoint", false, true, true},
	} {
		assert.Equal(t, want.name, k.String())
		assert.Equal(t, want.savepoint, k.IsSavepoint(), k)
		assert.Equal(t, want.terminal, k.Terminal(), k)
		assert.Equal(t, want.commits, k.Commits(), k)
	}
	assert.Equal(t, "Kind(9)", Kind(9).String())
	counts := map[Reason]bool{ReasonTimeout: true, ReasonDeclined: true, ReasonIO: true}
	for r := ReasonNone; r <= ReasonAlreadyStopped; r++ {
		assert.Equal(t, counts[r], r.CountsAsFailure(), "%s", r)
		assert.NotEmpty(t, r.String())
		assert.Contains(t, reasonNames, r, "the scripts print every reason")
	}
	assert.Equal(t, "none", Reason(200).String())
	for s, want := range map[Status]string{StatusInProgress: "IN_PROGRESS", StatusCompleted: "COMPLETED", StatusFailed: "FAILED", 0: "UNKNOWN"} {
		assert.Equal(t, want, s.String())
	}
}
