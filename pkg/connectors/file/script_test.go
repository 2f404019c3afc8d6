package file

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/eocheck"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// A script drives Writers on a MemFS, without goroutines. Each command is
// one line; the lines indented by two spaces below it are its expected
// output, compared line by line ("*" matches anything). Commands:
//
//	writer W sub=I par=P [maxPartSize=N] [onCheckpoint] [maxOpen=N]
//	       [rollover=D] [inactivity=D] [from=LABEL]   fresh start, or restore
//	write W BUCKET v1 v2 …       (BUCKET "-" is no bucket)
//	precommit W ID               prints the snapshot
//	commit W ID | finish W | close W | tick W
//	snap LABEL W0 W1 …           the last snapshots of subtasks 0, 1, … as a job snapshot
//	time +D                      advance the clock
//	ls                           every file under the path: name and lines
//	put PATH LINE… | rm PATH | crash process|power
type script struct {
	t       *testing.T
	mem     *vfs.MemFS
	now     time.Time
	writers map[string]*writer
	last    map[string]snapshot
	snaps   map[string][]*state.Snapshot
	out     []string
}

const scriptDir = "/out"

func runScript(t *testing.T, text string) {
	t.Helper()
	s := &script{t: t, mem: vfs.NewMem(), now: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC),
		writers: map[string]*writer{}, last: map[string]snapshot{}, snaps: map[string][]*state.Snapshot{}}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); {
		line := strings.TrimSpace(lines[i])
		i++
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var want []string
		for i < len(lines) && strings.HasPrefix(lines[i], "\t  ") {
			want = append(want, strings.TrimPrefix(lines[i], "\t  "))
			i++
		}
		s.out = nil
		s.run(strings.Fields(line))
		if !matchLines(want, s.out) {
			t.Fatalf("line %d: %s\nwant:\n  %s\ngot:\n  %s", i, line, strings.Join(want, "\n  "), strings.Join(s.out, "\n  "))
		}
	}
	for _, w := range s.writers {
		_ = w.Close()
	}
}

func matchLines(want, got []string) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		re := "^" + strings.ReplaceAll(regexp.QuoteMeta(want[i]), `\*`, ".*") + "$"
		if !regexp.MustCompile(re).MatchString(got[i]) {
			return false
		}
	}
	return true
}

func (s *script) printf(format string, args ...any) {
	s.out = append(s.out, fmt.Sprintf(format, args...))
}

func (s *script) check(err error) {
	if err != nil {
		s.printf("error: %v", err)
	}
}

func (s *script) w(name string) *writer {
	w := s.writers[name]
	require.NotNil(s.t, w, "no writer %s", name)
	return w
}

func (s *script) id(arg string) int64 {
	n, err := strconv.ParseInt(arg, 10, 64)
	require.NoError(s.t, err)
	return n
}

func (s *script) run(f []string) {
	switch f[0] {
	case "writer":
		s.newWriter(f[1], f[2:])
	case "write":
		bucket := f[2]
		if bucket == "-" {
			bucket = ""
		}
		for _, v := range f[3:] {
			if err := s.w(f[1]).Write(bucket, &runtime.Record{Value: []byte(v)}, s.now); err != nil {
				s.check(err)
				return
			}
		}
	case "precommit":
		snap, err := s.w(f[1]).PreCommit(s.id(f[2]), s.now)
		if err != nil {
			s.check(err)
			return
		}
		s.last[f[1]] = snap
		s.printSnapshot(snap)
	case "commit":
		s.check(s.w(f[1]).Commit(s.id(f[2])))
	case "finish":
		s.check(s.w(f[1]).FinishAll())
	case "tick":
		s.check(s.w(f[1]).Tick(s.now))
	case "close":
		s.check(s.w(f[1]).Close())
		delete(s.writers, f[1])
	case "snap":
		s.snap(f[1], f[2:])
	case "time":
		d, err := time.ParseDuration(strings.TrimPrefix(f[1], "+"))
		require.NoError(s.t, err)
		s.now = s.now.Add(d)
	case "ls":
		s.ls()
	case "put":
		require.NoError(s.t, vfs.WriteFileAtomic(s.mem, path.Join(scriptDir, f[1]), []byte(strings.Join(f[2:], "\n")+"\n")))
	case "rm":
		require.NoError(s.t, s.mem.Remove(path.Join(scriptDir, f[1])))
	case "crash":
		model := vfs.ProcessCrash
		if f[1] == "power" {
			model = vfs.PowerLoss
		}
		for name, w := range s.writers {
			_ = w.Close()
			delete(s.writers, name)
		}
		s.mem = s.mem.CrashClone(model)
	default:
		s.t.Fatalf("unknown command %q", f[0])
	}
}

func (s *script) newWriter(name string, args []string) {
	cfg := config{Dir: scriptDir, Naming: naming{Prefix: "part"}, Policy: defaultPolicy, Format: formatLine}
	from := ""
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		n, _ := strconv.Atoi(v)
		d, _ := time.ParseDuration(v)
		switch k {
		case "sub":
			cfg.Subtask = n
		case "par":
			cfg.Parallelism = n
		case "maxPartSize":
			cfg.Policy.MaxPartSize = int64(n)
		case "onCheckpoint":
			cfg.Policy.OnCheckpoint = true
		case "maxOpen":
			cfg.MaxOpen = n
		case "rollover":
			cfg.Policy.RolloverInterval = d
		case "inactivity":
			cfg.Policy.InactivityInterval = d
		case "from":
			from = v
		default:
			s.t.Fatalf("writer: unknown argument %q", a)
		}
	}
	if old := s.writers[name]; old != nil {
		_ = old.Close()
	}
	w := newWriter(s.mem, cfg, zerolog.Nop(), nil)
	w.suffix = func() string { return "x" }
	s.writers[name] = w
	if from == "" {
		s.check(w.Start())
		return
	}
	snaps, ok := s.snaps[from]
	require.True(s.t, ok, "no snapshot %s", from)
	r, ok, err := getState(state.RestoreOperatorState(snaps, cfg.Subtask, cfg.Parallelism))
	require.NoError(s.t, err)
	require.True(s.t, ok)
	s.check(w.Restore(r, s.now))
}

// snap encodes and decodes the writers' last snapshots as the runtime does.
func (s *script) snap(label string, names []string) {
	var out []*state.Snapshot
	for _, name := range names {
		snap, ok := s.last[name]
		require.True(s.t, ok, "writer %s has no snapshot", name)
		o := state.NewOperatorState()
		putState(o, snap)
		data, _ := state.Encode(o, nil)
		dec, err := state.Decode(data)
		require.NoError(s.t, err)
		out = append(out, dec)
	}
	s.snaps[label] = out
}

func (s *script) printSnapshot(snap snapshot) {
	for _, p := range snap.Pending {
		s.printf("pending %s (%d bytes, chk %d)", path.Join(p.Bucket, p.Final), p.Size, p.Checkpoint)
	}
	for _, r := range snap.InProgress {
		s.printf("in-progress %s (%d bytes)", path.Join(r.Bucket, r.Hidden), r.Length)
	}
	var c []string
	for _, i := range slices.Sorted(mapsKeys(snap.Counters.Next)) {
		c = append(c, fmt.Sprintf("%d:%d", i, snap.Counters.Next[i]))
	}
	s.printf("counters %s", strings.Join(c, " "))
}

func mapsKeys(m map[int]int64) func(func(int) bool) {
	return func(yield func(int) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func (s *script) ls() {
	_ = fs.WalkDir(eocheck.FS(s.mem, scriptDir), ".", func(p string, d fs.DirEntry, err error) error {
		require.NoError(s.t, err)
		if d.IsDir() {
			return nil
		}
		data, err := vfs.ReadFile(s.mem, path.Join(scriptDir, p))
		require.NoError(s.t, err)
		s.printf("%s: %s", p, strings.Join(strings.Fields(string(data)), " "))
		return nil
	})
}
