package window

import (
	"fmt"
	"strings"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
)

// lateOutput is the side output of records too late for their window:
// read it with from: [<uid>.late].
const lateOutput = "late"

// Definitions returns the window operator type.
func Definitions() []runtime.Definition {
	return []runtime.Definition{{Type: "window", Kind: api.KindOperator,
		Doc: "windowed aggregates per key (after keyBy) or over the whole stream: window {type: tumbling|sliding|session, size, slide, gap}, " +
			"time event|processing, aggregate {name: count()|sum(x)|min|max|avg|first|last|countDistinct|maxBy(v, by)|minBy}, allowedLateness, " +
			"keepMax (an aggregate: emit only each firing's results with its greatest value, per subtask); late records on side output late",
		Configure: configure}}
}

// Spec is a window as a job spec writes it: window: {type: tumbling,
// size: 10s} (the window operator's and the window join's).
type Spec struct {
	Type   string        `yaml:"type,required"`
	Size   *api.Duration `yaml:"size"`
	Slide  *api.Duration `yaml:"slide"`
	Gap    *api.Duration `yaml:"gap"`
	Offset *api.Duration `yaml:"offset"`
}

type options struct {
	Window          Spec             `yaml:"window,required"`
	Time            string           `yaml:"time"`
	Aggregate       api.NamedStrings `yaml:"aggregate,required"`
	AllowedLateness *api.Duration    `yaml:"allowedLateness"`
	KeepMax         string           `yaml:"keepMax"`
}

// config is a checked window operator.
type config struct {
	assigner   Assigner
	processing bool
	lateness   int64
	aggs       []aggregate
	args       *expr.Multi
	nargs      int
	global     bool
	orderFree  bool // no aggregate depends on fold order: a session grows in place
	// keepMax is 1 + the index in aggs of the aggregate whose greatest
	// results alone a firing emits; 0 (the zero config): every result
	// (see topOf).
	keepMax int
}

func configure(c *runtime.ConfigContext) *runtime.Plan {
	var o options
	c.Decode(&o)
	cfg, ok := check(c, o)
	if !ok {
		return nil
	}
	p := &runtime.Plan{KeyedInput: !cfg.global, GlobalKey: cfg.global, SideOutputs: []string{lateOutput}, OnError: true, State: cfg.meaning(),
		NewOperator: func() runtime.Operator { return runtime.KeyedProcess(newFunction(cfg)) }}
	if cfg.nargs == 0 { // count() alone: a record is its key and time
		p.InputValues = runtime.ValuesUnread
	}
	if !cfg.processing {
		p.EventTime = fmt.Sprintf("window %q works on event time", c.Op.UID)
	}
	return p
}

func ms(d *api.Duration) int64 {
	if d == nil {
		return 0
	}
	return d.D().Milliseconds()
}

// check validates the options, reporting every problem at its field.
func check(c *runtime.ConfigContext, o options) (config, bool) {
	ok := true
	bad := func(field, format string, args ...any) {
		c.Errorf(field, format, args...)
		ok = false
	}
	cfg := config{global: !c.KeyedInput, lateness: ms(o.AllowedLateness)}
	switch o.Time {
	case "", "event":
	case "processing":
		cfg.processing = true
	default:
		bad("time", "must be event or processing, got %q", o.Time)
	}
	if a, good := o.Window.Check(bad); good && ok {
		cfg.assigner = a
	}
	if cfg.processing && o.AllowedLateness != nil {
		bad("allowedLateness", "applies to event time: a processing-time window has no late records")
	}
	if len(o.Aggregate) == 0 && c.Has("aggregate") && !c.Reported("aggregate") {
		bad("aggregate", "needs at least one aggregate, e.g. {clicks: count()}")
	}
	var progs []*expr.Program
	for _, a := range o.Aggregate {
		if a.Name == "key" || a.Name == "windowStart" || a.Name == "windowEnd" {
			c.Dec.ErrorAt(a.Path, "%q names a field every window result has; choose another name", a.Name)
			ok = false
			continue
		}
		ag, err := parseAggregate(a.Name, a.Value)
		if err != nil {
			c.Dec.ErrorAt(a.Path, "%v", err)
			ok = false
			continue
		}
		for i, arg := range ag.Args {
			p, err := expr.CompileWith(c.Schema, arg, expr.Any)
			if err == nil {
				err = ag.Func.CheckArg(i, p.StaticKind())
			}
			if err != nil {
				c.Dec.ErrorAt(a.Path, "%s: %v", arg, err)
				ok = false
				continue
			}
			progs = append(progs, p)
		}
		cfg.aggs = append(cfg.aggs, ag)
	}
	if ok && o.KeepMax != "" {
		checkKeepMax(&cfg, o, bad)
	}
	if !ok {
		return cfg, false
	}
	cfg.args = expr.NewMulti(progs...)
	cfg.nargs = len(progs)
	cfg.orderFree = orderFree(cfg.aggs)
	return cfg, true
}

// checkKeepMax sets cfg.keepMax to the aggregate o.KeepMax names, or
// reports why it cannot be kept.
func checkKeepMax(cfg *config, o options, bad func(field, format string, args ...any)) {
	var names []string
	for k, ag := range cfg.aggs {
		if ag.Name == o.KeepMax {
			cfg.keepMax = k + 1
		}
		names = append(names, ag.Name)
	}
	switch {
	case cfg.keepMax == 0:
		bad("keepMax", "names one of this window's aggregates (%s), got %q", strings.Join(names, ", "), o.KeepMax)
	case cfg.processing:
		bad("keepMax", "needs event time: a processing-time window fires key by key, not all its keys at once")
	case o.Window.Type == "session":
		bad("keepMax", "needs tumbling or sliding windows: session windows end at different times for each key")
	}
}

// Check validates w, reporting each problem through bad (field paths start
// with "window."), and returns its assigner (ok false: w is wrong).
func (w Spec) Check(bad func(field, format string, args ...any)) (a Assigner, ok bool) {
	ok = true
	report := func(field, format string, args ...any) {
		bad(field, format, args...)
		ok = false
	}
	kinds := map[string]Kind{"tumbling": Tumbling, "sliding": Sliding, "session": Session}
	kind, known := kinds[w.Type]
	if !known && w.Type != "" {
		report("window.type", "must be tumbling, sliding or session, got %q", w.Type)
	}
	need := func(field string, d *api.Duration, why string) {
		if d == nil {
			report("window."+field, "a %s window needs %s: %s", w.Type, field, why)
		}
	}
	refuse := func(field string, d *api.Duration) {
		if d != nil {
			report("window."+field, "a %s window takes no %s", w.Type, field)
		}
	}
	switch kind {
	case Tumbling:
		need("size", w.Size, "its length, e.g. size: 1m")
		refuse("slide", w.Slide)
		refuse("gap", w.Gap)
	case Sliding:
		need("size", w.Size, "its length, e.g. size: 10m")
		need("slide", w.Slide, "how often a window starts, e.g. slide: 1m")
		refuse("gap", w.Gap)
	case Session:
		need("gap", w.Gap, "the inactivity that closes a session, e.g. gap: 30s")
		refuse("size", w.Size)
		refuse("slide", w.Slide)
		refuse("offset", w.Offset)
	}
	if !known || !ok {
		return Assigner{}, false
	}
	a, err := newAssigner(kind, ms(w.Size), ms(w.Slide), ms(w.Gap), ms(w.Offset))
	if err != nil {
		report("window", "%v", err)
	}
	return a, ok
}
