package runtime

import (
	"fmt"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// Graph is a validated, configured job: operators in topological order with
// their plans and edges. It is immutable and shared by every attempt.
type Graph struct {
	File           string
	Source         []byte // spec text
	Spec           *api.JobSpec
	Checkpointing  api.CheckpointConfig
	Restart        api.RestartConfig
	MaxParallelism int
	Vertices       []*Vertex
	// Bounded: every source ends by itself, so the job can FINISH.
	Bounded bool
}

// Vertex is one operator of the graph.
type Vertex struct {
	Index       int
	Op          *api.OperatorSpec
	Def         Definition
	Plan        *Plan
	Parallelism int
	Inputs      []Input
	Outputs     []*Vertex
}

// Input is an edge into a vertex.
type Input struct {
	From *Vertex
	Part Partitioning
}

// Defaults are the daemon-wide settings a spec falls back on.
type Defaults struct {
	Checkpointing *api.CheckpointSpec
	Restart       *api.RestartDefaults
}

// Compile parses, validates and configures a job spec, reporting every
// problem at once (*api.SpecError). Nothing runs.
func Compile(file string, src []byte, defaults Defaults) (*Graph, error) {
	p := api.ParseJob(file, src, Catalog{})
	if err := p.Dec.Errors.Err(); err != nil {
		// Structural problems (unknown types, dangling inputs) make
		// option checks noise; report them first.
		return nil, err
	}
	g := &Graph{File: file, Source: src, Spec: &p.Spec, MaxParallelism: p.Spec.MaxParallelism}
	g.Checkpointing = api.ResolveCheckpointing(p.Spec.Checkpointing, defaults.Checkpointing)
	g.Restart = api.ResolveRestart(p.Spec.RestartStrategy, defaults.Restart, g.Checkpointing.Enabled())
	g.build(p)
	if err := p.Dec.Errors.Err(); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *Graph) build(p *api.ParsedJob) {
	byUID := map[string]*Vertex{}
	var all []*Vertex
	for i := range p.Spec.Operators {
		op := &p.Spec.Operators[i]
		def, _ := Lookup(op.Type, len(op.From) > 0)
		v := &Vertex{Op: op, Def: def, Parallelism: op.Parallelism}
		byUID[op.UID] = v
		all = append(all, v)
	}
	g.Vertices = topoSort(all, byUID)
	for i, v := range g.Vertices {
		v.Index = i
	}
	for _, v := range g.Vertices {
		idx := specIndex(p.Spec.Operators, v.Op.UID)
		keyed := len(v.Op.From) > 0
		for _, from := range v.Op.From {
			u := byUID[from]
			part := Rebalance
			switch {
			case u.Plan != nil && u.Plan.KeyedOutput:
				part = Hash
			case u.Parallelism == v.Parallelism:
				part = Forward
			}
			if part != Hash {
				keyed = false
			}
			v.Inputs = append(v.Inputs, Input{From: u, Part: part})
			u.Outputs = append(u.Outputs, v)
		}
		c := &ConfigContext{Op: v.Op, Job: &p.Spec, Path: fmt.Sprintf("operators[%d]", idx), Dec: p.Dec,
			Checkpointing: g.Checkpointing, KeyedInput: keyed}
		v.Plan = v.Def.Configure(c)
		if v.Plan != nil && v.Plan.KeyedInput && !keyed {
			c.Errorf("", "%q (type %s) keeps state per key and must read from a keyBy operator", v.Op.UID, v.Op.Type)
		}
		if v.Plan != nil {
			g.Checkpointing.Retained = max(g.Checkpointing.Retained, v.Plan.MinRetained)
		}
	}
	g.Bounded = true
	for _, v := range g.Vertices {
		if v.Def.Kind == api.KindSource && (v.Plan == nil || !v.Plan.Bounded) {
			g.Bounded = false
		}
	}
	if g.Checkpointing.Enabled() || g.Bounded {
		return
	}
	for _, v := range g.Vertices {
		if v.Plan != nil && v.Plan.NeedsCheckpointing != "" {
			idx := specIndex(p.Spec.Operators, v.Op.UID)
			p.Dec.ErrorAt(fmt.Sprintf("operators[%d]", idx), "%s; enable checkpointing (checkpointing: {interval: 10s})", v.Plan.NeedsCheckpointing)
		}
	}
}

func specIndex(ops []api.OperatorSpec, uid string) int {
	for i := range ops {
		if ops[i].UID == uid {
			return i
		}
	}
	return -1
}

// topoSort orders vertices so every input comes before its reader (the spec
// was checked for cycles).
func topoSort(all []*Vertex, byUID map[string]*Vertex) []*Vertex {
	var out []*Vertex
	seen := map[*Vertex]bool{}
	var visit func(v *Vertex)
	visit = func(v *Vertex) {
		if seen[v] {
			return
		}
		seen[v] = true
		for _, from := range v.Op.From {
			visit(byUID[from])
		}
		out = append(out, v)
	}
	for _, v := range all {
		visit(v)
	}
	return out
}

// Vertex returns the vertex with uid, or nil.
func (g *Graph) Vertex(uid string) *Vertex {
	for _, v := range g.Vertices {
		if v.Op.UID == uid {
			return v
		}
	}
	return nil
}

// NumSubtasks is the total number of subtasks of the job.
func (g *Graph) NumSubtasks() int {
	n := 0
	for _, v := range g.Vertices {
		n += v.Parallelism
	}
	return n
}
