package runtime

import "github.com/flinkgo/flinkgo/pkg/api"

// Definition is an operator type: its name in job specs, its kind, and how
// its options are checked and its subtasks built. A binary's operator types
// are collected in a Registry.
type Definition struct {
	Type string
	Kind api.OperatorKind
	// Doc is a one-line description (shown by `flinkgo validate --types`).
	Doc string
	// Configure decodes and checks the operator's options, reporting every
	// problem through c, and returns how to build its subtasks (nil plan
	// when it reported problems). It runs when a spec is validated or
	// submitted, on the caller's goroutine, and must not do I/O that
	// changes anything: a spec that is refused leaves no trace.
	Configure func(c *ConfigContext) *Plan
	// KeepsSchema: the operator emits the records it reads with their
	// values unchanged (filter, keyBy), so the fields a source declares
	// (schema:) hold downstream of it too, and expressions there are
	// checked against them. A property of the type, known even when an
	// operator's options are wrong.
	KeepsSchema bool
	// InputOptions name the options that hold the operator's inputs when
	// its spec has no from: each is a mapping whose from entry is the uid
	// of an upstream operator, in input order (a join's left and right).
	// The inputs are wired as if written in from, and Batch.Input numbers
	// them in this order.
	InputOptions []string
	// PebbleState: the type's keyed state runs on the pebble state
	// backend (it uses value state only, and Puts back what it changes);
	// a keyed operator of another type is refused on a pebble job
	// (docs/state-backends.md).
	PebbleState bool
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
	// KeyedInput: the operator keeps keyed state and must follow a keyBy
	// (or declare InputKeys).
	KeyedInput bool
	// InputKeys, when set, has one key selector constructor per input (in
	// input order): the engine hash-partitions each input by its own key,
	// computed on the upstream subtask with a selector of its own, so the
	// records of every input reach the subtask owning their key group with
	// Record.Key set (a join keyed by different fields on each side). The
	// operator then needs no keyBy before it.
	InputKeys []func() KeySelector
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
	// OutputPaths (sinks) are the directories the operator writes and owns
	// (absolute, clean): the daemon refuses a job whose output paths
	// overlap (same, parent or child) those of another job that has not
	// ended, and the operator claims each with ClaimOutput when it opens.
	OutputPaths []string
	// State says what the operator's snapshotted state means (the option
	// values it was written under and is only read correctly with, such
	// as a window's size or the directory a file sink's pending part files
	// are in): a snapshot records it, and a restore whose job changes it
	// in a way its Judge does not call safe is refused. nil: the state
	// depends on no option. The engine adds the key expression of the
	// keyBy feeding a keyed operator (KeyExpr).
	State *StateMeaning
	// KeyExpr (keyBy, KeyedOutput) is the key expression, normalized: the
	// keyed state downstream is only valid under it.
	KeyExpr string
	// GlobalKey: the operator keeps keyed state and timers without a keyed
	// input, under one key (the empty one); it runs with parallelism 1
	// (a window over the whole stream).
	GlobalKey bool
	// SideOutputs names the side outputs the operator emits to (EmitTo).
	SideOutputs []string
	// OnError: the operator reports the records it cannot process with
	// Context.RecordError, so the spec's onError applies to it (fail,
	// skip, sideOutput: the engine adds the side output "errors").
	OnError bool
	// EventTime: the operator works on event time, so every source upstream
	// must declare eventTime (else its watermark never advances); the value
	// explains why, for the error.
	EventTime string
	// SkipBadTimestamps (sources): a record whose eventTime.timestamp fails
	// or yields nothing is skipped and counted instead of failing the job;
	// set it from the source's decode-error policy.
	SkipBadTimestamps bool
	// InputValues (operators, sinks) says what the operator does with
	// its input records' Values once the Process call that handed them
	// over returns; the engine lets a source reuse its Values' bytes
	// (ValueRecycler) only when every operator that sees them says
	// ValuesForwarded, ValuesDropped or ValuesUnread (which also lets the
	// engine send the operator records without Values). It is a promise,
	// as Flink's object reuse is: an operator that claims it and keeps a
	// Value (or a slice of one) reads other records' bytes later, or reads
	// none. The zero value claims nothing, and is always safe.
	InputValues ValueUse
}

// ValueUse is what an operator does with its input records' Values after
// the Process call that handed them over (Plan.InputValues).
type ValueUse uint8

const (
	// ValuesMayBeKept: the operator may keep them, or emit them where
	// they outlive the call (the zero value: nothing is claimed).
	ValuesMayBeKept ValueUse = iota
	// ValuesForwarded: it keeps none of them and emits some as they are
	// (a filter): what it emits is read wherever they go.
	ValuesForwarded
	// ValuesDropped: it keeps none of them and emits none: what it emits
	// has Values of its own (a map) or it emits nothing (a sink that
	// writes them out during the call).
	ValuesDropped
	// ValuesUnread: it does not read them at all, keeps none, and emits
	// none of them on its main output (a window that only counts): the
	// engine may hand it records without Values (nil), and does on the
	// edges into it that are not in a chain, when none of its side
	// outputs (which may carry input records as they are: late records,
	// dead letters) has a reader; else it is held to ValuesForwarded.
	// Sparing the copy of each Value into the reader's memory is what
	// Flink's planner gets by pruning the fields a query never reads.
	ValuesUnread
)

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
	// Schema is the fields of the records the operator reads, when the
	// source they come from declares them (schema:) and every operator
	// between keeps them (Definition.KeepsSchema); nil when unknown. Compile
	// expressions against it (expr.CompileWith).
	Schema *api.Schema
	// InputSchemas is the schema of each input's records, in the order of
	// Op.From (nil where unknown): an operator whose inputs differ, such
	// as a join, checks each side's expressions against its own. See
	// InputSchema.
	InputSchemas []*api.Schema
}

// InputSchema is the schema of the records of the input from names (as
// written in Op.From), nil when unknown.
func (c *ConfigContext) InputSchema(from string) *api.Schema {
	for i, f := range c.Op.From {
		if f == from && i < len(c.InputSchemas) {
			return c.InputSchemas[i]
		}
	}
	return nil
}

// Decode fills out (a pointer to a struct with yaml tags) from the
// operator's type-specific options; unknown options are reported (with a
// hint when one is a misspelled common field such as parallelism).
func (c *ConfigContext) Decode(out any) {
	c.Dec.DecodeOptions(c.Op.Options, c.Path, out, operatorFields)
}

var operatorFields = api.OperatorFields()

// Errorf reports a problem with option field (or the operator when field
// is empty), at its line.
func (c *ConfigContext) Errorf(field, format string, args ...any) {
	path := c.Path
	if field != "" {
		path += "." + field
	}
	c.Dec.ErrorAt(path, format, args...)
}

// Reported reports whether a problem was recorded at option field
// already (it did not decode), so a check of its value does not add one
// that only follows from it.
func (c *ConfigContext) Reported(field string) bool {
	path := c.Path + "." + field
	for _, e := range c.Dec.Errors.Errors {
		if e.Field == path {
			return true
		}
	}
	return false
}

// Has reports whether the option field was written in the spec.
func (c *ConfigContext) Has(field string) bool {
	_, ok := c.Op.Options[field]
	return ok
}
