package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/api"
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

// PlanRestore maps the snapshot onto g by operator uid.
func PlanRestore(g *Graph, r *Restore, allowNonRestored bool) *api.RestorePlan {
	m := r.Meta
	p := &api.RestorePlan{From: r.Dir, Kind: m.Kind, ID: m.CheckpointID, AllowDrop: allowNonRestored}
	for _, op := range m.Operators {
		v := g.Vertex(op.UID)
		if v == nil {
			if !op.HasState() {
				continue
			}
			p.Dropped = append(p.Dropped, api.DroppedState{UID: op.UID, Type: op.Type, Bytes: op.Size()})
			continue
		}
		p.Matched = append(p.Matched, api.MatchedState{UID: op.UID, Type: op.Type, OldParallelism: op.Parallelism,
			NewParallelism: v.Parallelism, Bytes: op.Size(), Keys: op.Keys()})
		if op.Type != v.Op.Type && op.HasState() {
			p.Problems = append(p.Problems, fmt.Sprintf("operator %q was of type %s in the snapshot and is %s now; state of one type cannot be read by another (give the new operator a new uid)", op.UID, op.Type, v.Op.Type))
		}
		if op.Keys() > 0 && m.MaxParallelism != g.MaxParallelism {
			p.Problems = append(p.Problems, fmt.Sprintf("operator %q has keyed state in %d key groups (maxParallelism %d) but the job has maxParallelism %d; keep maxParallelism: %d", op.UID, m.MaxParallelism, m.MaxParallelism, g.MaxParallelism, m.MaxParallelism))
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
