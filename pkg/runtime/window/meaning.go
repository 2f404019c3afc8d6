package window

import (
	"fmt"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// meaningVersion is the window operator's state schema version as a
// restore checks it (runtime.StateMeaning.Version): panes keyed by their
// start, each with one accumulator per aggregate, in spec order.
const meaningVersion = 1

// AddMeaning records in values what the state of windows assigned by a
// means (the window join records it too): its type and the durations that
// cut records into windows, as "window.<option>" (a zero duration is left
// out, so an omitted offset and offset: 0s are the same).
func (a Assigner) AddMeaning(values map[string]string) {
	values["window.type"] = a.Kind.String()
	for name, ms := range map[string]int64{"size": a.Size, "slide": a.Slide, "gap": a.Gap, "offset": a.Offset} {
		if ms != 0 {
			values["window."+name] = (time.Duration(ms) * time.Millisecond).String()
		}
	}
}

// JudgeWindow explains a changed "window.<option>" value (see AddMeaning):
// none is safe, since panes and sessions restored under one assignment
// would be read as windows of another. ok is false for other names.
func JudgeWindow(name, was, now string) (why string, ok bool) {
	opt, found := strings.CutPrefix(name, "window.")
	if !found {
		return "", false
	}
	if opt == "type" || opt == "gap" {
		return fmt.Sprintf("the snapshot's open windows were assigned as %s %s: read as %s %s they would be misread", opt, orNone(was), opt, orNone(now)), true
	}
	return fmt.Sprintf("the snapshot's open windows were cut with %s %s: read with %s %s they would fire misaligned (a window the new %s starts would never appear)",
		opt, orNone(was), opt, orNone(now), opt), true
}

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

// meaning is what a window operator's state means: its windows, its time
// domain (its timers are in it) and its aggregates in order (each pane
// holds their accumulators by position).
func (cfg config) meaning() *runtime.StateMeaning {
	m := &runtime.StateMeaning{Version: meaningVersion, Values: map[string]string{}, Judge: judge}
	cfg.assigner.AddMeaning(m.Values)
	m.Values["time"] = "event"
	if cfg.processing {
		m.Values["time"] = "processing"
	}
	m.Values["aggregate"] = aggregateMeaning(cfg.aggs)
	names := make([]string, len(cfg.aggs))
	for i, ag := range cfg.aggs {
		names[i] = ag.Name
	}
	m.Values["aggregate.names"] = strings.Join(names, ", ")
	return m
}

// aggregateMeaning lists aggs' functions and arguments in order, without
// their names (aggregate.names, a safe change: renaming an output field
// reads the state the same).
func aggregateMeaning(aggs []aggregate) string {
	parts := make([]string, len(aggs))
	for i, ag := range aggs {
		args := make([]string, len(ag.Args))
		for j, a := range ag.Args {
			args[j] = strings.Join(strings.Fields(a), " ")
		}
		parts[i] = ag.Func.String() + "(" + strings.Join(args, ", ") + ")"
	}
	return strings.Join(parts, ", ")
}

func judge(name, was, now string) (bool, string) {
	if why, ok := JudgeWindow(name, was, now); ok {
		return false, why
	}
	switch name {
	case "time":
		return false, fmt.Sprintf("the snapshot's window timers are in %s time and would not fire in %s time", was, now)
	case "aggregate.names":
		return true, "an aggregate's accumulator is read by its position, not its name: a renamed aggregate goes on from the restored one under its new name"
	case "aggregate":
		return false, fmt.Sprintf("each open window holds one accumulator per aggregate, in order (%s); the job's aggregates (%s) would read them as others "+
			"(adding an aggregate is not supported on restore: it has no accumulator for the windows already open; renaming one is safe)", was, now)
	}
	return false, ""
}
