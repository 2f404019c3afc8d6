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

// PlanRestore maps the snapshot onto g by operator uid. An operator whose
// state cannot be restored (another type, other key groups, other values
// of the options its state depends on) is listed with its problem, not as
// restorable; every problem is also in Problems.
func PlanRestore(g *Graph, r *Restore, allowNonRestored bool) *api.RestorePlan {
	m := r.Meta
	p := &api.RestorePlan{From: r.Dir, Kind: m.Kind, ID: m.CheckpointID, AllowDrop: allowNonRestored}
	old := snapshotGraph(g.types, m)
	for _, op := range m.Operators {
		v := g.Vertex(op.UID)
		if v == nil {
			if !op.HasState() {
				continue
			}
			p.Dropped = append(p.Dropped, api.DroppedState{UID: op.UID, Type: op.Type, Bytes: op.Size()})
			continue
		}
		ms := api.MatchedState{UID: op.UID, Type: op.Type, OldParallelism: op.Parallelism,
			NewParallelism: v.Parallelism, Bytes: op.Size(), Keys: op.Keys()}
		var problems []string
		if op.Type != v.Op.Type && op.HasState() {
			ms.NewType = v.Op.Type
			problems = append(problems, fmt.Sprintf("was of type %s in the snapshot and is %s now; state of one type cannot be read by another (give the new operator a new uid)", op.Type, v.Op.Type))
		} else if op.HasState() {
			problems = append(problems, changedDependencies(old, v)...)
		}
		if op.Keys() > 0 && m.MaxParallelism != g.MaxParallelism {
			problems = append(problems, fmt.Sprintf("has keyed state in %d key groups (maxParallelism %d) but the job has maxParallelism %d; keep maxParallelism: %d", m.MaxParallelism, m.MaxParallelism, g.MaxParallelism, m.MaxParallelism))
		}
		ms.Problem = strings.Join(problems, "; ")
		for _, pr := range problems {
			p.Problems = append(p.Problems, fmt.Sprintf("operator %q %s", op.UID, pr))
		}
		if ms.Problem == "" && op.HasState() && v.Plan != nil {
			for _, path := range v.Plan.OutputPaths {
				ms.Outputs = append(ms.Outputs, api.RestoredOutput{Path: path, Effect: outputEffect(&op)})
			}
		}
		p.Matched = append(p.Matched, ms)
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
	if len(p.Dropped) > 0 && !allowNonRestored {
		var parts []string
		for _, d := range p.Dropped {
			parts = append(parts, fmt.Sprintf("%s (type %s, %d bytes)", d.UID, d.Type, d.Bytes))
		}
		p.Problems = append(p.Problems, fmt.Sprintf("the snapshot has state for operators the job does not have: %s; add them back or pass --allow-non-restored-state (-n) to drop it", strings.Join(parts, ", ")))
	}
	return p
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
			"if they did, the restore fails without writing them, naming them (see docs/kafka-transactions.md: restore an older snapshot, or use `flinkgo stop` next time)",
			op.UID, taken.Format(time.RFC3339), d, taken.Add(d).Format(time.RFC3339))
	}
	return ""
}

// snapshotGraph compiles the job spec a snapshot was taken with, for the
// option values its operators' state depends on (nil when it no longer
// compiles: then those values cannot be compared).
func snapshotGraph(reg *runtime.Registry, m *checkpoint.Metadata) *Graph {
	if m.Spec == "" {
		return nil
	}
	g, err := Compile(reg, "snapshot", []byte(m.Spec), Defaults{})
	if err != nil {
		return nil
	}
	return g
}

// changedDependencies lists the options v's restored state depends on
// whose value differs from the snapshot's.
func changedDependencies(old *Graph, v *Vertex) []string {
	if old == nil || v.Plan == nil {
		return nil
	}
	ov := old.Vertex(v.Op.UID)
	if ov == nil || ov.Plan == nil {
		return nil
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(v.Plan.StateDependsOn)) {
		was, ok := ov.Plan.StateDependsOn[k]
		if now := v.Plan.StateDependsOn[k]; ok && was != now {
			out = append(out, fmt.Sprintf("has %s %q in the snapshot and %q now; its restored state is only valid with %s %q (a restore would fail or leave the output wrong): keep it, or give the operator a new uid to start it without state", k, was, now, k, was))
		}
	}
	return out
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
func (r *Restore) loadSnapshots(fsys vfs.FS, g *Graph) (map[string][]*state.Snapshot, error) {
	out := map[string][]*state.Snapshot{}
	for _, v := range g.Vertices {
		op := r.Meta.Operator(v.Op.UID)
		if op == nil {
			continue
		}
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
			snaps[h.Subtask] = s
		}
		out[v.Op.UID] = snaps
	}
	return out, nil
}
