package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Graph is a validated, configured job: operators in topological order with
// their plans and edges. It is immutable and shared by every attempt.
type Graph struct {
	File          string
	Source        []byte // spec text
	Spec          *api.JobSpec
	Checkpointing api.CheckpointConfig
	Restart       api.RestartConfig
	// StateBackend is api.BackendHashMap or api.BackendPebble.
	StateBackend string
	// Incremental: a pebble job's checkpoints upload the DB's new files
	// (docs/state-backends.md); savepoints stay canonical.
	Incremental    bool
	MaxParallelism int
	Vertices       []*Vertex
	// Bounded: every source ends by itself, so the job can FINISH.
	Bounded bool
	// types are the operator types it was compiled with.
	types *runtime.Registry
}

// Vertex is one operator of the graph.
type Vertex struct {
	Index       int
	Op          *api.OperatorSpec
	Def         runtime.Definition
	Plan        *runtime.Plan
	Parallelism int
	Inputs      []Input
	Outputs     []*Vertex
	// eventTime is a source's event-time setup (nil: none).
	eventTime *eventTime
	// schema is the fields of the records it emits, when known.
	schema *api.Schema
	// chainHead is the vertex whose goroutines run this one's subtasks
	// (chain.go); nil: they run on their own.
	chainHead *Vertex
	// recycles: the source writes each batch over the last one; copiesOut:
	// the vertex copies the records it sends off its chain, for a source
	// that does (planValueReuse).
	recycles, copiesOut bool
	// valuesUnread: the records sent to this vertex go without their
	// Values (planValueReuse, valuesUnread).
	valuesUnread bool
	// handBack: a source's readers, in order, that count the batches
	// they are done with, so that it may recycle its Values off the
	// chain (handback.go); nil: none.
	handBack []*Vertex
}

// Input is an edge into a vertex.
type Input struct {
	From *Vertex
	Part Partitioning
	Side string // the side output of From it reads ("": the main output)
	// Key computes the key this input is partitioned by (Plan.InputKeys);
	// nil: records keep the key they have.
	Key func() runtime.KeySelector
}

// Defaults are the daemon-wide settings a spec falls back on.
type Defaults struct {
	Checkpointing *api.CheckpointSpec
	Restart       *api.RestartDefaults
	// StateBackend is state.backend.type ("": hashmap).
	StateBackend string
	// Incremental is state.backend.incremental (pebble jobs only).
	Incremental bool
}

// Compile parses, validates and configures a job spec against the operator
// types of reg, reporting every problem at once (*api.SpecError). Nothing
// runs. Every operator's options are checked even when the graph is wrong
// (an unknown type, a dangling from, a cycle); only the checks that need a
// sound graph around an operator (keyed input, side outputs, event time
// upstream) wait for it, so one pass reports everything without problems
// that only follow from another.
func Compile(reg *runtime.Registry, file string, src []byte, defaults Defaults) (*Graph, error) {
	return CompileWith(reg, file, src, defaults, CompileOptions{})
}

// CompileOptions change how Compile builds a graph, for the callers that
// run a spec other than as written (flinkgo test).
type CompileOptions struct {
	// Substitute, when set, is asked for the definition of every operator
	// whose type the registry knows, with the operator as written and the
	// registry's definition: it returns the definition to configure and
	// run it with (def itself to keep it). It may change op (flinkgo test
	// runs a replaced source at parallelism 1); it runs after the spec was
	// parsed and validated, before any operator is configured.
	Substitute func(op *api.OperatorSpec, def runtime.Definition) runtime.Definition
}

// CompileWith is Compile with options. A file named *.sql is a Flink SQL
// script, planned into a spec first (IsSQL, docs/sql.md).
func CompileWith(reg *runtime.Registry, file string, src []byte, defaults Defaults, o CompileOptions) (*Graph, error) {
	if IsSQL(file) {
		return compileSQL(func(spec []byte) (*Graph, error) {
			return compileSpec(reg, file, spec, defaults, o)
		}, file, src)
	}
	return compileSpec(reg, file, src, defaults, o)
}

func compileSpec(reg *runtime.Registry, file string, src []byte, defaults Defaults, o CompileOptions) (*Graph, error) {
	p := api.ParseJob(file, src, reg)
	g := &Graph{File: file, Source: src, Spec: &p.Spec, MaxParallelism: p.Spec.MaxParallelism, types: reg}
	g.Checkpointing = api.ResolveCheckpointing(p.Spec.Checkpointing, defaults.Checkpointing)
	if p.Failed("checkpointing.interval") {
		// The user asked for checkpoints with an interval that did not
		// decode (reported): judge the operators as checkpointed, not with
		// "enable checkpointing" errors that follow from the typo.
		g.Checkpointing.Interval = api.MinCheckpointInterval
	}
	g.Restart = api.ResolveRestart(p.Spec.RestartStrategy, defaults.Restart, g.Checkpointing.Enabled())
	g.StateBackend = resolveStateBackend(p.Spec.StateBackend, defaults.StateBackend)
	g.Incremental = resolveIncremental(p, g.StateBackend, defaults.Incremental)
	g.build(reg, p, o.Substitute)
	if err := p.Dec.Errors.Err(); err != nil {
		return nil, err
	}
	g.chain()
	g.planUnreadValues()
	g.planHandBack()
	return g, nil
}

func (g *Graph) build(reg *runtime.Registry, p *api.ParsedJob, substitute func(*api.OperatorSpec, runtime.Definition) runtime.Definition) {
	ops := p.Spec.Operators
	byUID := map[string]*Vertex{}
	all := make([]*Vertex, len(ops))
	specAt := map[*Vertex]int{}
	for i := range ops {
		op := &ops[i]
		def, known := reg.Lookup(op.Type, len(op.From) > 0)
		if known && substitute != nil {
			def = substitute(op, def)
		}
		v := &Vertex{Op: op, Def: def, Parallelism: op.Parallelism}
		all[i], specAt[v] = v, i
		if _, dup := byUID[op.UID]; !dup && op.UID != "" {
			byUID[op.UID] = v // a duplicate uid was reported; the first one is the input
		}
	}
	g.Vertices = topoSort(all, byUID)
	for i, v := range g.Vertices {
		v.Index = i
	}
	index := map[string]int{}
	for uid, v := range byUID {
		index[uid] = specAt[v]
	}
	// sound: the operator and everything upstream are known, configured and
	// wired (no dangling input, no cycle), so checks across edges apply.
	sound := map[*Vertex]bool{}
	for _, v := range g.Vertices {
		path := fmt.Sprintf("operators[%d]", specAt[v])
		keyed := len(v.Op.From) > 0
		wired := true
		for j, from := range v.Op.From {
			ref, ok := api.ResolveFrom(from, index)
			u := byUID[ref.UID]
			if !ok || u == nil || u == v || !sound[u] {
				wired, keyed = false, false // reported already, or judged at u
				continue
			}
			part := Rebalance
			switch {
			case ref.Tag == "" && u.Plan.KeyedOutput:
				part = Hash
			case u.Parallelism == v.Parallelism:
				part = Forward
			}
			if part != Hash {
				keyed = false
			}
			if ref.Tag != "" && !slices.Contains(u.Plan.SideOutputs, ref.Tag) {
				msg := fmt.Sprintf("operator %q (type %s) has no side output %q", u.Op.UID, u.Op.Type, ref.Tag)
				if len(u.Plan.SideOutputs) > 0 {
					msg += fmt.Sprintf(" (it has: %s)", strings.Join(u.Plan.SideOutputs, ", "))
				}
				msg += sideOutputHint(ref.Tag)
				p.Dec.ErrorAt(api.FromPath(path, v.Op, j), "%s", msg)
			}
			v.Inputs = append(v.Inputs, Input{From: u, Part: part, Side: ref.Tag})
			u.Outputs = append(u.Outputs, v)
		}
		if v.Def.Configure == nil {
			continue // unknown type: reported by ParseJob
		}
		c := &runtime.ConfigContext{Op: v.Op, Job: &p.Spec, Path: path, Dec: p.Dec,
			Checkpointing: g.Checkpointing, KeyedInput: keyed, Schema: inputSchema(v, byUID, index),
			InputSchemas: inputSchemas(v, byUID, index)}
		v.schema = outputSchema(v, c.Schema)
		before := len(p.Dec.Errors.Errors)
		v.Plan = v.Def.Configure(c)
		if v.Plan == nil || len(p.Dec.Errors.Errors) > before {
			// Its options are wrong (a type may return a plan anyway):
			// what it would be once they are fixed is unknown.
			v.Plan = nil
			continue
		}
		configureOnError(c, v, ops)
		if v.Def.Kind == api.KindSource {
			v.eventTime = compileEventTime(c, v.Op.EventTime, v.Plan)
		}
		if !wired {
			continue // its inputs' problems come first; the rest is judged once they are fixed
		}
		sound[v] = true
		if keyInputs(c, v) {
			keyed = true
		}
		if v.Plan.KeyedInput && !keyed {
			c.Errorf("", "%q (type %s) keeps state per key and must read from a keyBy operator", v.Op.UID, v.Op.Type)
		}
		if (v.Plan.KeyedInput || v.Plan.GlobalKey || len(v.Plan.InputKeys) > 0) && !v.Def.PebbleState && g.StateBackend == api.BackendPebble {
			c.Errorf("type", "%q: %s", v.Op.UID, pebbleUnsupported(v.Op.Type, reg.PebbleTypes()))
		}
		if v.Plan.GlobalKey && v.Parallelism != 1 {
			c.Errorf("parallelism", "%q (type %s) without a keyBy sees the whole stream: its parallelism must be 1, got %d (or read from a keyBy)", v.Op.UID, v.Op.Type, v.Parallelism)
		}
		if v.Plan.EventTime != "" {
			g.requireEventTime(p, v, path)
		}
		// A sink that must look back at older checkpoints (to tell its own
		// commits from a sibling's) needs them kept.
		g.Checkpointing.Retained = max(g.Checkpointing.Retained, v.Plan.MinRetained)
	}
	g.Bounded = true
	for _, v := range g.Vertices {
		if v.Def.Kind != api.KindSource {
			continue
		}
		if v.Plan == nil {
			return // a source that did not configure: boundedness is unknown
		}
		g.Bounded = g.Bounded && v.Plan.Bounded
	}
	if g.Checkpointing.Enabled() || g.Bounded {
		return
	}
	for _, v := range g.Vertices {
		if v.Plan != nil && v.Plan.NeedsCheckpointing != "" {
			p.Dec.ErrorAt(fmt.Sprintf("operators[%d]", specAt[v]), "%s; enable checkpointing (checkpointing: {interval: 10s})", v.Plan.NeedsCheckpointing)
		}
	}
}

// requireEventTime reports the sources upstream of v that declare no
// eventTime: their watermark never advances, so v (an event-time operator)
// would never fire.
func (g *Graph) requireEventTime(p *api.ParsedJob, v *Vertex, path string) {
	seen := map[*Vertex]bool{}
	var walk func(u *Vertex)
	walk = func(u *Vertex) {
		if seen[u] {
			return
		}
		seen[u] = true
		if u.Def.Kind == api.KindSource && u.Op.EventTime == nil {
			p.Dec.ErrorAt(path, "%s, but source %q declares no eventTime: add eventTime: {timestamp: <field>, maxOutOfOrderness: 5s} to it (or use processing time)", v.Plan.EventTime, u.Op.UID)
		}
		for _, in := range u.Inputs {
			walk(in.From)
		}
	}
	walk(v)
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
		for _, in := range v.Op.From {
			if u := byUID[in]; u != nil {
				visit(u)
			} else if i := strings.LastIndexByte(in, '.'); i > 0 && byUID[in[:i]] != nil {
				visit(byUID[in[:i]]) // a side output
			}
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
