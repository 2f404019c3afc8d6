package engine

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Restore is a complete snapshot chosen to start a job from: a savepoint
// named with -s, or a checkpoint picked by recovery.
type Restore struct {
	Dir  string
	Meta *checkpoint.Metadata
}

// LoadRestore opens the snapshot at path (a directory, its _metadata, or a
// chk-<n> directory) and checks it is complete. It never falls back to
// another snapshot: a corrupt one is an error.
func LoadRestore(fsys vfs.FS, path string) (*Restore, error) {
	dir, m, err := checkpoint.Load(fsys, path)
	if err != nil {
		return nil, err
	}
	if err := checkpoint.Verify(fsys, dir, m); err != nil {
		return nil, err
	}
	return &Restore{Dir: dir, Meta: m}, nil
}

// Kind of the snapshot ("checkpoint", "savepoint", …).
func (r *Restore) Kind() string { return r.Meta.Kind }

// RestoreOptions are what a user allows a restore to do.
type RestoreOptions struct {
	// AllowNonRestored drops the state of operators the job does not have
	// (--allow-non-restored-state).
	AllowNonRestored bool
	// AllowDrained takes a savepoint of stop --drain (--allow-drained).
	AllowDrained bool
}

// PlanRestore maps the snapshot onto g by operator uid. An operator whose
// state cannot be restored (another type, other key groups, a state
// meaning that changed: see stateMeaning) is listed with its problem, not
// as restorable; every problem is also in Problems. A drained savepoint is
// a problem unless o allows it.
func PlanRestore(g *Graph, r *Restore, o RestoreOptions) *api.RestorePlan {
	m := r.Meta
	p := &api.RestorePlan{From: r.Dir, Kind: m.Kind, ID: m.CheckpointID, AllowDrop: o.AllowNonRestored, Drained: m.Drained}
	if pr := drainedProblem(m.Drained, o.AllowDrained); pr != "" {
		p.Problems = append(p.Problems, pr)
	} else if m.Drained {
		p.Notes = append(p.Notes, drainedAllowed)
	}
	old := snapshotGraph(g.types, m)
	var unchecked []string
	for _, op := range m.Operators {
		v := g.Vertex(op.UID)
		if v == nil {
			if !op.HasState() {
				continue
			}
			p.Dropped = append(p.Dropped, api.DroppedState{UID: op.UID, Type: op.Type, Bytes: op.Size()})
			continue
		}
		ms, notes, recorded := matchOperator(g, old, m, &op, v)
		if !recorded {
			unchecked = append(unchecked, op.UID)
		}
		p.Notes = append(p.Notes, notes...)
		for _, pr := range ms.problems {
			p.Problems = append(p.Problems, fmt.Sprintf("operator %q %s", op.UID, pr))
		}
		p.Matched = append(p.Matched, ms.MatchedState)
		if w := expiryWarning(&op, m.Timestamp, time.Now()); w != "" {
			p.Warnings = append(p.Warnings, w)
		}
	}
	for _, v := range g.Vertices {
		if m.Operator(v.Op.UID) == nil {
			p.New = append(p.New, v.Op.UID)
		}
	}
	sort.Strings(p.New)
	if note := uncheckedNote(unchecked, old != nil); note != "" {
		p.Notes = append(p.Notes, note)
	}
	if len(p.Dropped) > 0 && !o.AllowNonRestored {
		var parts []string
		for _, d := range p.Dropped {
			parts = append(parts, fmt.Sprintf("%s (type %s, %d bytes)", d.UID, d.Type, d.Bytes))
		}
		p.Problems = append(p.Problems, fmt.Sprintf("the snapshot has state for operators the job does not have: %s; add them back or pass --allow-non-restored-state (-n) to drop it", strings.Join(parts, ", ")))
	}
	return p
}

// hasDB reports whether op's state is (partly) in the pebble DB files of
// an incremental checkpoint.
func hasDB(op *checkpoint.OperatorState) bool {
	return slices.ContainsFunc(op.Subtasks, func(h checkpoint.Handle) bool { return h.DB != nil })
}

// opensDB reports whether v's subtasks open op's DBs as they are (pebble,
// the same parallelism: each subtask owns the key groups its DB holds).
func opensDB(g *Graph, op *checkpoint.OperatorState, v *Vertex) bool {
	return v.Parallelism == op.Parallelism && g.StateBackend == api.BackendPebble
}

// matched is an operator of the snapshot the job has, with each of its
// problems (their join is its Problem).
type matched struct {
	api.MatchedState
	problems []string
}

// matchOperator judges restoring op's state into v: its problems, the
// notes of safe changes, and whether op recorded its state's meaning (see
// meaningChanges). old is the snapshot's own job, compiled (nil: none).
func matchOperator(g, old *Graph, m *checkpoint.Metadata, op *checkpoint.OperatorState, v *Vertex) (ms matched, notes []string, recorded bool) {
	ms.MatchedState = api.MatchedState{UID: op.UID, Type: op.Type, OldParallelism: op.Parallelism,
		NewParallelism: v.Parallelism, Bytes: op.Size(), Keys: op.Keys()}
	recorded = true
	if op.Type != v.Op.Type && op.HasState() {
		ms.NewType = v.Op.Type
		ms.problems = append(ms.problems, fmt.Sprintf("was of type %s in the snapshot and is %s now; state of one type cannot be read by another (give the new operator a new uid)", op.Type, v.Op.Type))
	} else if op.HasState() {
		var changes []runtime.MeaningChange
		changes, recorded = meaningChanges(old, op, v)
		var pr []string
		pr, notes = judgeMeaning(op.UID, changes)
		ms.problems = append(ms.problems, pr...)
	}
	if hasDB(op) && !opensDB(g, op, v) {
		notes = append(notes, fmt.Sprintf("operator %q: its keyed state is in the pebble DBs of an incremental checkpoint taken at parallelism %d; the job runs %s at parallelism %d, so each old DB is read whole and its key groups rebuilt, as from a savepoint (slower than opening the DBs)", op.UID, op.Parallelism, g.StateBackend, v.Parallelism))
	}
	if op.Keys() > 0 && m.MaxParallelism != g.MaxParallelism {
		ms.problems = append(ms.problems, fmt.Sprintf("has keyed state in %d key groups (maxParallelism %d) but the job has maxParallelism %d; keep maxParallelism: %d", m.MaxParallelism, m.MaxParallelism, g.MaxParallelism, m.MaxParallelism))
	}
	ms.Problem = strings.Join(ms.problems, "; ")
	if ms.Problem == "" && op.HasState() && v.Plan != nil {
		for _, path := range v.Plan.OutputPaths {
			ms.Outputs = append(ms.Outputs, api.RestoredOutput{Path: path, Effect: outputEffect(op)})
		}
	}
	return ms, notes, recorded
}

// expiryWarning warns when op's snapshot depends on something that expires
// (runtime.DetailExpiresAfter) and taken+that is before now.
func expiryWarning(op *checkpoint.OperatorState, taken, now time.Time) string {
	for _, h := range op.Subtasks {
		s, _ := h.Details[runtime.DetailExpiresAfter].(string)
		d, err := time.ParseDuration(s)
		if err != nil || taken.IsZero() || !taken.Add(d).Before(now) {
			continue
		}
		return fmt.Sprintf("operator %q: the snapshot (taken %s) holds pending transactions that the broker aborts %s after they began (transactionTimeout), so they may have expired at %s; "+
			"if they did, the restore writes their records again from the topic, and fails, naming them, if retention has deleted those records (see docs/kafka-transactions.md: restore an older snapshot then, or use `flinkgo stop` next time)",
			op.UID, taken.Format(time.RFC3339), d, taken.Add(d).Format(time.RFC3339))
	}
	return ""
}

// snapshotGraph compiles the job spec a snapshot was taken with, for the
// state meanings of a snapshot that does not record them (nil when it no
// longer compiles: then they cannot be compared).
func snapshotGraph(reg *runtime.Registry, m *checkpoint.Metadata) *Graph {
	if m.Spec == "" || recordsMeanings(m) {
		return nil
	}
	g, err := Compile(reg, "snapshot", []byte(m.Spec), Defaults{})
	if err != nil {
		return nil
	}
	return g
}

// recordsMeanings reports whether the snapshot records its operators'
// state meanings (every snapshot of a flinkgo that writes them does).
func recordsMeanings(m *checkpoint.Metadata) bool {
	for _, op := range m.Operators {
		if op.State != nil {
			return true
		}
	}
	return false
}

// meaningChanges compares the meaning op's state has in the snapshot with
// the one v gives it. A snapshot that does not record it (an older
// flinkgo's) is compared through the spec it carries, compiled now (old,
// nil when it does not compile), without the state schema version: then
// recorded is false when v's state has a meaning to check.
func meaningChanges(old *Graph, op *checkpoint.OperatorState, v *Vertex) (_ []runtime.MeaningChange, recorded bool) {
	now := stateMeaning(v)
	if op.State != nil {
		return runtime.CompareMeaning(op.State.Version, op.State.Meaning, now), true
	}
	if now == nil {
		return nil, true // nothing to check
	}
	var ov *Vertex
	if old != nil {
		ov = old.Vertex(op.UID)
	}
	if ov == nil || ov.Plan == nil || ov.Op.Type != v.Op.Type {
		return nil, false
	}
	was := &runtime.StateMeaning{}
	if m := stateMeaning(ov); m != nil {
		was = m
	}
	return runtime.CompareMeaning(now.Version, was.Values, now), false
}

// uncheckedNote warns that the state meanings of uids could not be read
// from the snapshot ("" when there are none): compiled is whether they
// were compared through the spec it carries instead.
func uncheckedNote(uids []string, compiled bool) string {
	if len(uids) == 0 {
		return ""
	}
	s := fmt.Sprintf("the snapshot was written by a flinkgo that did not record what operator state means, so the state of %s cannot be checked against the job: ", strings.Join(uids, ", "))
	if compiled {
		return s + "its options were compared with the job spec the snapshot carries, but not the state schema version; make sure this flinkgo reads that state"
	}
	return s + "the job spec it carries no longer compiles; make sure windows, aggregates, keys and join bounds are as they were"
}

// drainedAllowed is the note of a drained savepoint taken with --allow-drained.
const drainedAllowed = "the savepoint was written by stop --drain and is taken as --allow-drained asks: " +
	"event-time tumbling and sliding windows keep the windows that fired at the drain fired (a record after the drain that falls in one is late: " +
	"dropped, or sent to the late side output); session windows, processing-time windows and joins start their event time anew, " +
	"so a window of theirs open at the drain may fire a second time with only the records after it"

// drainedProblem refuses a drained savepoint unless allowed ("" when
// there is nothing to refuse).
func drainedProblem(drained, allowed bool) string {
	if !drained || allowed {
		return ""
	}
	return "the savepoint was written by stop --drain: the end of input fired every window and timer, so a restored job " +
		"would fire the windows open at the drain a second time with only the records after it (partial results); " +
		"restore from a savepoint of stop without --drain, or pass --allow-drained to take it anyway"
}

// outputEffect says what restoring op does to its output directories.
func outputEffect(op *checkpoint.OperatorState) string {
	totals := map[string]int64{}
	for _, h := range op.Subtasks {
		for k, v := range h.Details {
			switch n := v.(type) {
			case float64: // decoded from JSON
				totals[k] += int64(n)
			case int64:
				totals[k] += n
			case int:
				totals[k] += int64(n)
			}
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(totals)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, totals[k]))
	}
	s := "continues the snapshot's output: commits what it left pending, resumes what was in progress, and removes what was written after it"
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// loadSnapshots reads and decodes the state files of every operator of g
// found in the snapshot, indexed by uid and old subtask.
//
// An incremental checkpoint's subtask restored into the same place (pebble,
// the same parallelism) opens its DB from the files itself (openPebble);
// anywhere else each old DB is read into the canonical form here, as a
// savepoint of it would hold it, and key groups move as they do from one.
func (r *Restore) loadSnapshots(env *Env, jobID string, g *Graph) (map[string][]*state.Snapshot, error) {
	fsys := env.FS
	out := map[string][]*state.Snapshot{}
	for _, v := range g.Vertices {
		op := r.Meta.Operator(v.Op.UID)
		if op == nil {
			continue
		}
		canonical := !opensDB(g, op, v)
		snaps := make([]*state.Snapshot, op.Parallelism)
		for _, h := range op.Subtasks {
			if h.File == "" || h.Subtask < 0 || h.Subtask >= op.Parallelism {
				continue
			}
			data, err := checkpoint.ReadStateFile(fsys, r.Dir, h)
			if err != nil {
				return nil, fmt.Errorf("restore operator %s subtask %d: %w", op.UID, h.Subtask, err)
			}
			s, err := state.Decode(data)
			if err != nil {
				return nil, fmt.Errorf("restore operator %s subtask %d from %s: %w", op.UID, h.Subtask, h.File, err)
			}
			if h.DB != nil && canonical {
				if s, err = canonicalFromDB(env, jobID, op.UID, r, h, s, g.MaxParallelism); err != nil {
					return nil, fmt.Errorf("restore operator %s subtask %d: %w", op.UID, h.Subtask, err)
				}
			}
			snaps[h.Subtask] = s
		}
		out[v.Op.UID] = snaps
	}
	return out, nil
}
