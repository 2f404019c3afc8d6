// Package jobchaos is `flinkgo chaos`: it runs a bounded job twice in a
// private daemon, once undisturbed and once with kill -9s of the daemon and
// stop → run -s cycles, and compares what the job's sinks committed.
//
// The package judges the spec first (analyze.go: which sources can be
// replayed, which sinks can be read back and with what guarantee, which
// operators make the output depend on timing), rewrites it per run so each
// run writes private outputs (rewrite.go), drives a daemon child process
// (daemon.go) through the two runs (run.go), and compares the outputs
// (outputs.go, compare.go).
package jobchaos

import (
	"fmt"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// Guarantee is what a sink promises across failures.
type Guarantee string

const (
	ExactlyOnce Guarantee = "exactly-once"
	AtLeastOnce Guarantee = "at-least-once"
	// NoGuarantee: records in flight at a failure may be lost or repeated
	// (a Kafka sink with deliveryGuarantee none).
	NoGuarantee Guarantee = "none"
)

// Source is a source of the job and how chaos replays it.
type Source struct {
	UID, Type string
	index     int
	// Topics are a Kafka source's topics; Brokers its brokers.
	Topics, Brokers []string
}

// Sink is a sink of the job whose output chaos reads back.
type Sink struct {
	UID, Type string
	Guarantee Guarantee
	index     int
	// Topic and Brokers: a Kafka sink's.
	Topic   string
	Brokers []string
}

// Finding is an operator that makes the job's output depend on timing.
type Finding struct {
	Operator string `json:"operator"`
	Type     string `json:"type"`
	Why      string `json:"why"`
	pos      api.Pos
	field    string
}

// Job is a spec judged for chaos.
type Job struct {
	File   string
	Src    []byte
	Graph  *engine.Graph
	Source []Source
	Sinks  []Sink
	// Ignored are sinks with no committed output to read (print,
	// discard), uid → why.
	Ignored map[string]string
	// Nondeterministic lists what makes the output depend on timing.
	Nondeterministic []Finding
	// Unchecked are operators of types chaos cannot look into (Go
	// operators of a custom binary).
	Unchecked []string
	// Checkpointing says whether the job takes checkpoints.
	Checkpointing bool
}

// builtinOperators are the operator types whose timing behaviour chaos
// knows; any other (a Go type of a custom binary) is listed as unchecked.
var builtinOperators = map[string]bool{"map": true, "filter": true, "keyBy": true, "count": true, "reduce": true,
	"window": true, "windowJoin": true, "intervalJoin": true}

// Analyze judges a compiled spec: every problem that refuses it (a source
// that cannot be replayed, a sink that cannot be read back) is returned as
// a *api.SpecError with the operator's place; timing dependence is in
// Job.Nondeterministic for the caller to refuse or report.
func Analyze(g *engine.Graph, file string, src []byte, cat api.Catalog) (*Job, error) {
	p := api.ParseJob(file, src, cat)
	pos := func(path string) api.Pos { return p.Dec.PosOf(path) }
	j := &Job{File: file, Src: src, Graph: g, Ignored: map[string]string{}, Checkpointing: g.Checkpointing.Enabled()}
	var errs api.SpecError
	bad := func(i int, field, format string, args ...any) {
		path := fmt.Sprintf("operators[%d]", i)
		if field != "" {
			path += "." + field
		}
		errs.Errors = append(errs.Errors, api.FieldError{File: file, Pos: pos(path), Field: path, Msg: fmt.Sprintf(format, args...)})
	}
	atLeastOnceMode := g.Checkpointing.Enabled() && g.Checkpointing.Mode == api.AtLeastOnce
	for _, v := range g.Vertices {
		op := v.Op
		i := indexOf(g.Spec, op.UID)
		opt := func(k string) any {
			if n, ok := op.Options[k]; ok {
				return n.Value()
			}
			return nil
		}
		switch {
		case len(v.Inputs) == 0: // a source
			s := Source{UID: op.UID, Type: op.Type, index: i}
			switch op.Type {
			case "datagen":
				if opt("count") == nil {
					bad(i, "count", "source %s (datagen) is unbounded: chaos compares two complete runs, give it a count (count: 100000)", op.UID)
				}
			case "nexmark":
				if opt("events") == nil {
					bad(i, "events", "source %s (nexmark) is unbounded: chaos compares two complete runs, give it a number of events (events: 100000)", op.UID)
				}
			case "kafka":
				s.Brokers = stringList(opt("brokers"))
				s.Topics = stringList(opt("topics"))
				if t, ok := opt("topic").(string); ok && t != "" {
					s.Topics = append(s.Topics, t)
				}
				switch so := fmt.Sprint(opt("startingOffsets")); so {
				case "latest":
					bad(i, "startingOffsets", "source %s (kafka) starts at the latest offsets: both runs would read nothing, or whatever arrives meanwhile; chaos reads the topic from startingOffsets to its current end, use earliest (or a time)", op.UID)
				case "committed":
					bad(i, "startingOffsets", "source %s (kafka) starts at its group's committed offsets, which the first run moves: chaos reads the topic from startingOffsets to its current end, use earliest (or a time)", op.UID)
				}
			case "file":
				// Bounded, it reads the files there are, the same in both
				// runs; monitored, what it reads depends on when files appear.
				if opt("monitor") != nil {
					bad(i, "monitor", "source %s (file) monitors its path: what it reads depends on when files appear; chaos compares two complete runs, drop monitor to read the files there are", op.UID)
				}
			default:
				bad(i, "type", "source %s is of type %s, which chaos cannot replay the same way twice: it runs datagen (with count), nexmark (with events), file (without monitor) and kafka sources (read to the topic's current end)", op.UID, op.Type)
			}
			if et := op.EventTime; et != nil {
				if et.AdvanceWhenIdle {
					j.finding(op, pos, fmt.Sprintf("operators[%d].eventTime.advanceWhenIdle", i),
						"its watermark follows the wall clock while its splits are idle, so which windows fire, and which records are late, depends on timing")
				} else if et.Idle() > 0 {
					j.finding(op, pos, fmt.Sprintf("operators[%d].eventTime.idleTimeout", i),
						"a split quiet for idleTimeout by the wall clock stops holding the watermark back, so which records are late depends on timing")
				}
			}
			j.Source = append(j.Source, s)
		case kindOf(cat, op) == api.KindSink:
			s := Sink{UID: op.UID, Type: op.Type, index: i, Guarantee: ExactlyOnce}
			switch op.Type {
			case "file":
				if path, _ := opt("path").(string); path == "" {
					bad(i, "path", "file sink %s has no path", op.UID)
				}
			case "kafka":
				s.Brokers = stringList(opt("brokers"))
				s.Topic, _ = opt("topic").(string)
				switch fmt.Sprint(opt("deliveryGuarantee")) {
				case "exactly-once":
				case "none":
					s.Guarantee = NoGuarantee
				default:
					s.Guarantee = AtLeastOnce
				}
			case "print":
				j.Ignored[op.UID] = "print writes to the daemon's standard output: nothing committed to compare"
				continue
			case "discard":
				j.Ignored[op.UID] = "discard keeps nothing"
				continue
			default:
				bad(i, "type", "sink %s is of type %s, whose output chaos cannot read back: it compares file and kafka sinks (print and discard are left out)", op.UID, op.Type)
				continue
			}
			if atLeastOnceMode && s.Guarantee == ExactlyOnce {
				s.Guarantee = AtLeastOnce // barriers are not aligned: a restore replays records its snapshot already holds
			}
			j.Sinks = append(j.Sinks, s)
		default:
			j.operator(g, v, i, pos)
		}
	}
	if len(j.Sinks) == 0 && len(errs.Errors) == 0 {
		errs.Errors = append(errs.Errors, api.FieldError{File: file, Pos: pos("operators"), Field: "operators",
			Msg: "the job has no file or kafka sink: chaos compares what those commit (print and discard keep nothing to compare)"})
	}
	if len(errs.Errors) > 0 {
		errs.Sort()
		return nil, &errs
	}
	return j, nil
}

// operator looks for what makes operator v's output depend on timing.
func (j *Job) operator(g *engine.Graph, v *engine.Vertex, i int, pos func(string) api.Pos) {
	op := v.Op
	if !builtinOperators[op.Type] {
		j.Unchecked = append(j.Unchecked, op.UID)
	}
	if op.Type == "window" {
		if t, _ := optValue(op, "time").(string); t == "processing" {
			j.finding(op, pos, fmt.Sprintf("operators[%d].time", i),
				"a processing-time window: which records fall in which window depends on when they arrive, and a restart replays them later")
		}
	}
	for k, n := range op.Options {
		if field := usesNow(n.Value()); field != "" {
			j.finding(op, pos, fmt.Sprintf("operators[%d].%s", i, k),
				fmt.Sprintf("%s calls now(), the wall clock: a replayed record gets another value", k))
		}
	}
	if (op.Type == "count" || op.Type == "reduce") && upstreamSubtasks(v) > 1 {
		j.finding(op, pos, fmt.Sprintf("operators[%d].type", i),
			fmt.Sprintf("a %s emits a running result on every record, and its input comes from %d source subtasks whose records of one key interleave by timing: the intermediate results differ from run to run (run its sources with parallelism 1, or window it)", op.Type, upstreamSubtasks(v)))
	}
}

func (j *Job) finding(op *api.OperatorSpec, pos func(string) api.Pos, path, why string) {
	j.Nondeterministic = append(j.Nondeterministic, Finding{Operator: op.UID, Type: op.Type, Why: why, pos: pos(path), field: path})
}

// NondeterministicError is the refusal naming every finding.
func (j *Job) NondeterministicError() error {
	var e api.SpecError
	for _, f := range j.Nondeterministic {
		e.Errors = append(e.Errors, api.FieldError{File: j.File, Pos: f.pos, Field: f.field,
			Msg: fmt.Sprintf("operator %s (%s) is not deterministic: %s; chaos compares two runs, which would differ without a fault (--allow-nondeterministic runs it anyway)", f.Operator, f.Type, f.Why)})
	}
	e.Sort()
	return &e
}

// upstreamSubtasks counts the source subtasks that feed v.
func upstreamSubtasks(v *engine.Vertex) int {
	seen := map[*engine.Vertex]bool{}
	n := 0
	var walk func(u *engine.Vertex)
	walk = func(u *engine.Vertex) {
		if seen[u] {
			return
		}
		seen[u] = true
		if len(u.Inputs) == 0 {
			n += u.Parallelism
		}
		for _, in := range u.Inputs {
			walk(in.From)
		}
	}
	walk(v)
	return n
}

// kindOf is op's kind as the catalog has it (kafka is a source without
// inputs and a sink with them).
func kindOf(cat api.Catalog, op *api.OperatorSpec) api.OperatorKind {
	if r, ok := cat.(api.KindResolver); ok {
		k, _ := r.KindFor(op.Type, len(op.From) > 0)
		return k
	}
	k, _ := cat.Kind(op.Type)
	return k
}

func optValue(op *api.OperatorSpec, k string) any {
	if n, ok := op.Options[k]; ok {
		return n.Value()
	}
	return nil
}

// usesNow reports the first string under v that is an expression calling
// now() ("" if none). Strings that are not expressions do not parse, or
// call nothing.
func usesNow(v any) string {
	switch t := v.(type) {
	case string:
		if !strings.Contains(t, "now") {
			return ""
		}
		tree, err := parser.Parse(t)
		if err != nil {
			return ""
		}
		found := false
		ast.Walk(&tree.Node, nowVisitor{&found})
		if found {
			return t
		}
	case []any:
		for _, x := range t {
			if s := usesNow(x); s != "" {
				return s
			}
		}
	case map[string]any:
		for _, x := range t {
			if s := usesNow(x); s != "" {
				return s
			}
		}
	}
	return ""
}

type nowVisitor struct{ found *bool }

func (n nowVisitor) Visit(node *ast.Node) {
	switch t := (*node).(type) {
	case *ast.BuiltinNode:
		if t.Name == "now" {
			*n.found = true
		}
	case *ast.CallNode:
		if id, ok := t.Callee.(*ast.IdentifierNode); ok && id.Value == "now" {
			*n.found = true
		}
	}
}

func indexOf(s *api.JobSpec, uid string) int {
	for i := range s.Operators {
		if s.Operators[i].UID == uid {
			return i
		}
	}
	return -1
}

func stringList(v any) []string {
	var out []string
	switch t := v.(type) {
	case string:
		for _, s := range strings.Split(t, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	case []any:
		for _, x := range t {
			// In a flow sequence, [host:9092] reads as a mapping {host: 9092}.
			if m, ok := x.(map[string]any); ok && len(m) == 1 {
				for k, v := range m {
					out = append(out, fmt.Sprintf("%s:%v", k, v))
				}
				continue
			}
			out = append(out, fmt.Sprint(x))
		}
	}
	return out
}
