package runtime

import (
	"fmt"
	"sort"
	"sync"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// Definition registers an operator type. Connectors and built-in operators
// register theirs at init.
type Definition struct {
	Type string
	Kind api.OperatorKind
	// Doc is a one-line description (shown by `flinkgo validate --types`).
	Doc string
	// Configure decodes and checks the operator's options, reporting every
	// problem through c, and returns how to build its subtasks (nil plan
	// when it reported problems).
	Configure func(c *ConfigContext) *Plan
}

// Plan says how to instantiate a configured operator and how it is wired.
type Plan struct {
	// NewSource (sources) or NewOperator (operators, sinks) creates the
	// instance for one subtask; called once per subtask and attempt.
	NewSource   func() Source
	NewOperator func() Operator
	// KeyedOutput: records leave with Record.Key set and are partitioned
	// by key group to the downstream operator (keyBy).
	KeyedOutput bool
	// KeyedInput: the operator keeps keyed state and must follow a keyBy.
	KeyedInput bool
	// Bounded (sources): the source ends by itself.
	Bounded bool
	// NeedsCheckpointing (sinks, sources): when non-empty, an unbounded job
	// without checkpointing is refused with this explanation.
	NeedsCheckpointing string
	// MinRetained (sinks): the job keeps at least this many completed
	// checkpoints (raising checkpointing.retained), for a sink that may
	// have to fail over to the checkpoint before the latest one (see
	// RestoreBeforeError).
	MinRetained int
}

var (
	registryMu sync.RWMutex
	// A type has at most one definition per kind: a connector such as kafka
	// is both a source (no inputs) and a sink (with inputs).
	registry = map[string]map[api.OperatorKind]Definition{}
)

// Register adds an operator type; registering a type and kind twice is a bug.
func Register(d Definition) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if registry[d.Type] == nil {
		registry[d.Type] = map[api.OperatorKind]Definition{}
	}
	if _, dup := registry[d.Type][d.Kind]; dup {
		panic(fmt.Sprintf("runtime: operator type %q registered twice as a %s (bug)", d.Type, d.Kind))
	}
	if len(registry[d.Type]) > 0 && (d.Kind != api.KindSource) == (registry[d.Type][api.KindSource].Type == "") {
		panic(fmt.Sprintf("runtime: operator type %q may only pair a source with a sink or operator (bug)", d.Type))
	}
	registry[d.Type][d.Kind] = d
}

// Lookup returns the definition of typ for an operator with or without
// inputs: a source when it has none, an operator or sink when it has some.
// With only one definition, that one is returned either way (validation
// then reports the misplaced inputs).
func Lookup(typ string, hasInputs bool) (Definition, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	defs := registry[typ]
	if len(defs) == 1 {
		for _, d := range defs {
			return d, true
		}
	}
	for k, d := range defs {
		if (k == api.KindSource) != hasInputs {
			return d, true
		}
	}
	return Definition{}, false
}

// Definitions returns every registered definition, by type then kind.
func Definitions() []Definition {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var out []Definition
	for _, defs := range registry {
		for _, d := range defs {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return out[i].Type < out[j].Type
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// Catalog is the registry seen by the spec validator.
type Catalog struct{}

// Kind implements api.Catalog: the kind of a type used without inputs, or
// its only kind.
func (Catalog) Kind(typ string) (api.OperatorKind, bool) {
	d, ok := Lookup(typ, false)
	return d.Kind, ok
}

// KindFor implements api.KindResolver for types that are both a source and
// a sink.
func (Catalog) KindFor(typ string, hasInputs bool) (api.OperatorKind, bool) {
	d, ok := Lookup(typ, hasInputs)
	return d.Kind, ok
}

// Types implements api.Catalog.
func (Catalog) Types() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for t := range registry {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// ConfigContext is what an operator type sees while configuring.
type ConfigContext struct {
	Op  *api.OperatorSpec
	Job *api.JobSpec
	// Path is the operator's place in the spec ("operators[2]").
	Path string
	Dec  *api.Decoder
	// Checkpointing is the job's resolved checkpoint configuration.
	Checkpointing api.CheckpointConfig
	// KeyedInput reports whether the operator follows a keyBy.
	KeyedInput bool
}

// Decode fills out (a pointer to a struct with yaml tags) from the
// operator's type-specific options; unknown options are reported.
func (c *ConfigContext) Decode(out any) {
	c.Dec.DecodeFields(c.Op.Options, c.Path, out)
}

// Errorf reports a problem with option field (or the operator when field
// is empty), at its line.
func (c *ConfigContext) Errorf(field, format string, args ...any) {
	path := c.Path
	if field != "" {
		path += "." + field
	}
	c.Dec.ErrorAt(path, format, args...)
}

// Has reports whether the option field was written in the spec.
func (c *ConfigContext) Has(field string) bool {
	_, ok := c.Op.Options[field]
	return ok
}
