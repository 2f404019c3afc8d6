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
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Definition{}
)

// Register adds an operator type; registering a type twice is a bug.
func Register(d Definition) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[d.Type]; dup {
		panic(fmt.Sprintf("runtime: operator type %q registered twice (bug)", d.Type))
	}
	registry[d.Type] = d
}

// Lookup returns the definition of typ.
func Lookup(typ string) (Definition, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	d, ok := registry[typ]
	return d, ok
}

// Definitions returns every registered type, sorted by name.
func Definitions() []Definition {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]Definition, 0, len(registry))
	for _, d := range registry {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

// Catalog is the registry seen by the spec validator.
type Catalog struct{}

// Kind implements api.Catalog.
func (Catalog) Kind(typ string) (api.OperatorKind, bool) {
	d, ok := Lookup(typ)
	return d.Kind, ok
}

// Types implements api.Catalog.
func (Catalog) Types() []string {
	ds := Definitions()
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Type
	}
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
