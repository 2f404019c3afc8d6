package api

import (
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
)

// OperatorKind says how an operator type may be wired into a job.
type OperatorKind int

const (
	KindSource   OperatorKind = iota + 1 // no inputs
	KindOperator                         // inputs and outputs
	KindSink                             // inputs, no outputs
)

func (k OperatorKind) String() string {
	switch k {
	case KindSource:
		return "source"
	case KindOperator:
		return "operator"
	case KindSink:
		return "sink"
	}
	return fmt.Sprintf("OperatorKind(%d)", int(k))
}

// Catalog tells the spec validator which operator types exist. The runtime's
// operator registry implements it; api imports nothing of ours.
type Catalog interface {
	Kind(typ string) (OperatorKind, bool)
	Types() []string
}

// KindResolver is implemented by catalogs where one type can be both a
// source (used without inputs) and a sink (used with inputs), like kafka.
type KindResolver interface {
	KindFor(typ string, hasInputs bool) (OperatorKind, bool)
}

// kindOf asks the catalog for the kind of op's type as op uses it.
func kindOf(cat Catalog, op OperatorSpec) (OperatorKind, bool) {
	if r, ok := cat.(KindResolver); ok {
		return r.KindFor(op.Type, len(op.From) > 0)
	}
	return cat.Kind(op.Type)
}

// ParsedJob is a job spec with the decoder that read it, so operator types
// can decode their options later and report errors at the right line.
type ParsedJob struct {
	File   string
	Source []byte
	Spec   JobSpec
	Dec    *Decoder
}

// defaultMaxParallelism is Flink's default number of key groups for small jobs.
const defaultMaxParallelism = 128

// MaxMaxParallelism bounds the key group count (Flink's upper bound).
const MaxMaxParallelism = 1 << 15

var uidPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// ParseJob decodes and structurally validates a job spec: everything except
// the type-specific options, which the runtime checks with the same decoder.
// Problems accumulate in p.Dec.Errors.
func ParseJob(file string, src []byte, cat Catalog) *ParsedJob {
	p := &ParsedJob{File: file, Source: src, Dec: NewDecoder(file)}
	if len(src) > maxSpecBytes {
		p.Dec.Errorf(Pos{Line: 1, Column: 1}, "", "the spec has %d bytes, more than the %d a job spec may have", len(src), maxSpecBytes)
		return p
	}
	root := p.Dec.ParseYAML(src)
	if root.IsZero() {
		return p
	}
	p.Dec.Decode(root, "", &p.Spec)
	p.applyDefaults()
	if cat != nil {
		p.inputsFromOptions(cat)
	}
	p.validate(cat)
	return p
}

func (p *ParsedJob) applyDefaults() {
	s := &p.Spec
	if s.Name == "" && p.File != "" {
		s.Name = strings.TrimSuffix(filepath.Base(p.File), filepath.Ext(p.File))
	}
	if s.Name == "" {
		s.Name = "job"
	}
	// An explicit 0 is not "unset": it stays, and validate reports it.
	if s.Parallelism == 0 && !p.explicit("parallelism") {
		s.Parallelism = 1
	}
	if s.MaxParallelism == 0 && !p.explicit("maxParallelism") {
		s.MaxParallelism = defaultMaxParallelism
	}
	for i := range s.Operators {
		if s.Operators[i].Parallelism == 0 && !p.explicit(fmt.Sprintf("operators[%d].parallelism", i)) {
			s.Operators[i].Parallelism = s.Parallelism
		}
	}
}

// explicit reports whether path was written in the spec and decoded
// without error (a value that failed to decode was reported already).
func (p *ParsedJob) explicit(path string) bool {
	if _, set := p.Dec.Positions[path]; !set {
		return false
	}
	return !p.Failed(path)
}

// Failed reports whether a problem was recorded at path.
func (p *ParsedJob) Failed(path string) bool {
	for _, e := range p.Dec.Errors.Errors {
		if e.Field == path {
			return true
		}
	}
	return false
}

func (p *ParsedJob) validate(cat Catalog) {
	d, s := p.Dec, &p.Spec
	if _, set := d.Positions["parallelism"]; set && s.Parallelism <= 0 {
		d.ErrorAt("parallelism", "must be at least 1, got %d", s.Parallelism)
	}
	if s.Parallelism > s.MaxParallelism && s.MaxParallelism > 0 {
		d.ErrorAt("parallelism", "%d exceeds maxParallelism %d; raise maxParallelism", s.Parallelism, s.MaxParallelism)
	}
	if s.MaxParallelism < 1 || s.MaxParallelism > MaxMaxParallelism {
		d.ErrorAt("maxParallelism", "must be between 1 and %d, got %d", MaxMaxParallelism, s.MaxParallelism)
	}
	if s.Checkpointing != nil {
		ValidateCheckpointSpec(d, "checkpointing", s.Checkpointing)
	}
	if s.RestartStrategy != nil {
		ValidateRestartSpec(d, "restartStrategy", s.RestartStrategy)
	}
	if s.StateBackend != nil {
		validateStateBackendSpec(d, "stateBackend", s.StateBackend)
	}
	if s.WatermarkInterval != nil && s.WatermarkInterval.D() <= 0 {
		d.ErrorAt("watermarkInterval", "must be more than 0, got %s", s.WatermarkInterval)
	}
	if p.explicit("operators") && len(s.Operators) == 0 {
		d.ErrorAt("operators", "a job needs at least one source and one sink")
	}
	p.validateOperators(cat)
}

func (p *ParsedJob) validateOperators(cat Catalog) {
	p.misspelledFrom()
	d, s := p.Dec, &p.Spec
	index := map[string]int{}
	for i, op := range s.Operators {
		path := fmt.Sprintf("operators[%d]", i)
		if (op.UID != "" || p.explicit(path+".uid")) && !uidPattern.MatchString(op.UID) {
			d.ErrorAt(path+".uid", "%q is not a valid uid: use letters, digits, '_', '.' and '-' (it names state files), at most 128 characters", op.UID)
		}
		if prev, dup := index[op.UID]; dup && op.UID != "" {
			d.ErrorAt(path+".uid", "duplicate uid %q (also operators[%d]); every operator needs its own uid", op.UID, prev)
		} else if op.UID != "" {
			index[op.UID] = i
		}
		_, set := d.Positions[path+".parallelism"]
		if set && op.Parallelism <= 0 {
			d.ErrorAt(path+".parallelism", "must be at least 1, got %d", op.Parallelism)
		}
		// An inherited job parallelism was checked above.
		if set && op.Parallelism > s.MaxParallelism && s.MaxParallelism > 0 {
			d.ErrorAt(path+".parallelism", "%d exceeds maxParallelism %d; raise maxParallelism", op.Parallelism, s.MaxParallelism)
		}
	}
	for i, op := range s.Operators {
		path := fmt.Sprintf("operators[%d]", i)
		kind, known := OperatorKind(0), false
		if (op.Type != "" || p.explicit(path+".type")) && cat != nil {
			kind, known = kindOf(cat, op)
			if !known {
				d.ErrorAt(path+".type", "%s", unknownTypeMessage(op.Type, cat.Types()))
			}
		}
		for j, from := range op.From {
			if from == "" && !p.explicit(FromPath(path, &op, j)) {
				continue // did not decode (an alias to nothing): reported already
			}
			if _, ok := ResolveFrom(from, index); !ok {
				msg := fmt.Sprintf("no operator has uid %q", from)
				if c := closest(from, SortedKeys(index)); c != "" {
					msg += fmt.Sprintf("; did you mean %q?", c)
				}
				d.ErrorAt(FromPath(path, &op, j), "%s", msg)
			}
			if ref, _ := ResolveFrom(from, index); ref.UID == op.UID && from != "" {
				d.ErrorAt(FromPath(path, &op, j), "operator %q reads from itself", op.UID)
			}
		}
		p.validateSchema(path, op, kind, known)
		p.validateOnError(path, &s.Operators[i])
		if op.EventTime != nil && known && kind != KindSource {
			d.ErrorAt(path+".eventTime", "%q (type %s) is not a source: eventTime belongs on the sources the records come from", op.UID, op.Type)
		}
		if et := op.EventTime; et != nil && et.AdvanceWhenIdle && et.Idle() <= 0 {
			d.ErrorAt(path+".eventTime.advanceWhenIdle", "needs idleTimeout: set how long a split must be quiet before the watermark follows the clock")
		}
		if known {
			switch {
			case kind == KindSource && len(op.From) > 0:
				d.ErrorAt(path+".from", "%q is a source (type %s) and cannot have an input; remove from", op.UID, op.Type)
			case kind != KindSource && len(op.From) == 0 && inputOptions(cat, op) != nil:
				// Its Configure reports the missing input options.
			case kind != KindSource && len(op.From) == 0:
				d.ErrorAt(path, "%q (type %s) has no input; add from: [<uid of its upstream operator>]", op.UID, op.Type)
			}
		}
	}
	p.checkCycles(index)
	p.checkSinks(cat, index)
}

// misspelledFrom takes a misspelled from ("form:", "frm:") out of the
// options of an operator that has no from and reads it as its from, after
// reporting it: the typo is the one problem, not the missing input, the
// upstream output that goes nowhere and the type's unknown option that
// would follow from it.
func (p *ParsedJob) misspelledFrom() {
	for i := range p.Spec.Operators {
		op := &p.Spec.Operators[i]
		if len(op.From) > 0 {
			continue
		}
		for _, key := range SortedKeys(op.Options) {
			if editDistance(strings.ToLower(key), "from") > 1 {
				continue
			}
			path := fmt.Sprintf("operators[%d].%s", i, key)
			p.Dec.ErrorAt(path, "unknown field %q; did you mean \"from\"?", key)
			p.Dec.Decode(op.Options[key], path, &op.From)
			delete(op.Options, key)
			break
		}
	}
}

// OperatorFields are the fields every operator has (uid, type, from, …),
// whatever its type: hints for a misspelled one among a type's options.
func OperatorFields() []string {
	var out []string
	for _, f := range structFields(reflect.TypeOf(OperatorSpec{})) {
		if !f.remain {
			out = append(out, f.name)
		}
	}
	return out
}

// InputRef is an entry of an operator's from: the upstream uid, and the
// side output read ("" for the main output).
type InputRef struct {
	UID, Tag string
}

// ResolveFrom reads an entry of from: the uid of an operator (its main
// output) or "<uid>.<tag>", the side output tag of operator uid. A uid may
// itself contain '.': an exact uid wins, else the part before the last '.'
// must be one. index holds the uids of the job.
func ResolveFrom(from string, index map[string]int) (InputRef, bool) {
	if _, ok := index[from]; ok {
		return InputRef{UID: from}, true
	}
	if i := strings.LastIndexByte(from, '.'); i > 0 && i < len(from)-1 {
		if _, ok := index[from[:i]]; ok {
			return InputRef{UID: from[:i], Tag: from[i+1:]}, true
		}
	}
	return InputRef{UID: from}, false
}

// checkCycles reports each cycle once, at the operator where it was found.
func (p *ParsedJob) checkCycles(index map[string]int) {
	ops := p.Spec.Operators
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(ops))
	var stack []string
	var visit func(i int)
	visit = func(i int) {
		color[i] = grey
		stack = append(stack, ops[i].UID)
		for _, from := range ops[i].From {
			ref, _ := ResolveFrom(from, index)
			j, ok := index[ref.UID]
			if !ok || ref.UID == ops[i].UID {
				continue
			}
			switch color[j] {
			case grey:
				k := len(stack) - 1
				for k > 0 && stack[k] != from {
					k--
				}
				cycle := append(append([]string{}, stack[k:]...), ref.UID)
				p.Dec.ErrorAt(fmt.Sprintf("operators[%d].from", i), "cycle: %s; a job must be a DAG", strings.Join(cycle, " <- "))
			case white:
				visit(j)
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
	}
	for i := range ops {
		if color[i] == white {
			visit(i)
		}
	}
}

// checkSinks reports a job without sink and operators whose output goes
// nowhere (their records would be computed and dropped).
func (p *ParsedJob) checkSinks(cat Catalog, index map[string]int) {
	if cat == nil || len(p.Spec.Operators) == 0 {
		return
	}
	consumed := map[string]bool{}
	for _, op := range p.Spec.Operators {
		for _, f := range op.From {
			if ref, ok := ResolveFrom(f, index); ok && ref.Tag == "" {
				consumed[ref.UID] = true
			} else if !ok {
				// A dangling from names its likely target ("did you
				// mean"): that one's output is not said to go nowhere.
				consumed[closest(f, SortedKeys(index))] = true
			}
		}
	}
	hasSink, allKnown := false, true
	for i, op := range p.Spec.Operators {
		kind, ok := kindOf(cat, op)
		if !ok {
			allKnown = false // reported already; it may be the sink
			continue
		}
		if kind == KindSink {
			hasSink = true
			continue
		}
		if !consumed[op.UID] && op.UID != "" {
			p.Dec.ErrorAt(fmt.Sprintf("operators[%d]", i), "the output of %q goes nowhere; add a sink with from: [%s]", op.UID, op.UID)
		}
	}
	if !hasSink && allKnown {
		p.Dec.ErrorAt("operators", "the job has no sink; add one (for example type: print)")
	}
}

// Uses reports whether the spec has an operator of one of the given types.
func (s *JobSpec) Uses(types ...string) bool {
	for _, op := range s.Operators {
		for _, t := range types {
			if op.Type == t {
				return true
			}
		}
	}
	return false
}

// Operator returns the operator with uid, or nil.
func (s *JobSpec) Operator(uid string) *OperatorSpec {
	for i := range s.Operators {
		if s.Operators[i].UID == uid {
			return &s.Operators[i]
		}
	}
	return nil
}
