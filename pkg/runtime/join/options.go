package join

import (
	"fmt"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
	"github.com/flinkgo/flinkgo/pkg/runtime/window"
)

// Side outputs of rows too late to join, and the metrics counting them.
const (
	lateLeftOutput  = "lateLeft"
	lateRightOutput = "lateRight"
	metricLateLeft  = "numLateRecordsDroppedLeft"
	metricLateRight = "numLateRecordsDroppedRight"
	metricLeftRows  = "leftRows"
	metricRightRows = "rightRows"
)

// Definitions returns the join operator types.
func Definitions() []runtime.Definition {
	return []runtime.Definition{
		{Type: "windowJoin", Kind: api.KindOperator, InputOptions: []string{"left", "right"},
			Doc: "joins two streams by key within the same window: left/right {from, key}, window {type: tumbling|sliding|session, size, slide, gap}, " +
				"how inner|left|right|full, select {name: expr over left, right, windowStart, windowEnd, key}, where; late rows on lateLeft, lateRight",
			Configure: configureWindow},
		{Type: "intervalJoin", Kind: api.KindOperator, InputOptions: []string{"left", "right"},
			Doc: "joins two streams by key when right.ts is within [left.ts+lower, left.ts+upper]: left/right {from, key}, lower, upper, " +
				"until (an expression over left: the latest right time that row matches, e.g. left.expires; upper is then optional), " +
				"how inner|left, select {name: expr over left, right, key}, where, timestamp; late rows on lateLeft, lateRight",
			Configure: configureInterval},
	}
}

// sideSpec is one input of a join.
type sideSpec struct {
	From string `yaml:"from,required"`
	Key  string `yaml:"key,required"`
}

// commonOptions are the options both joins take.
type commonOptions struct {
	Left   sideSpec         `yaml:"left,required"`
	Right  sideSpec         `yaml:"right,required"`
	How    string           `yaml:"how"`
	Select api.NamedStrings `yaml:"select,required"`
	Where  string           `yaml:"where"`
}

// The options of each join: the common ones (the spec decoder has no
// inline structs), then its own.
type windowOptions struct {
	Left   sideSpec         `yaml:"left,required"`
	Right  sideSpec         `yaml:"right,required"`
	How    string           `yaml:"how"`
	Select api.NamedStrings `yaml:"select,required"`
	Where  string           `yaml:"where"`
	Window window.Spec      `yaml:"window,required"`
}

type intervalOptions struct {
	Left      sideSpec         `yaml:"left,required"`
	Right     sideSpec         `yaml:"right,required"`
	How       string           `yaml:"how"`
	Select    api.NamedStrings `yaml:"select,required"`
	Where     string           `yaml:"where"`
	Lower     string           `yaml:"lower,required"` // signed durations: read below
	Upper     string           `yaml:"upper"`          // required unless until is given
	Until     string           `yaml:"until"`
	Timestamp string           `yaml:"timestamp"`
}

// how is the kind of a join.
type how uint8

const (
	inner how = iota + 1
	leftOuter
	rightOuter
	fullOuter
)

func (h how) String() string {
	switch h {
	case inner:
		return "inner"
	case leftOuter:
		return "left"
	case rightOuter:
		return "right"
	case fullOuter:
		return "full"
	}
	return fmt.Sprintf("How(%d)", h)
}

// keepsLeft / keepsRight: unmatched rows of that side are emitted.
func (h how) keepsLeft() bool  { return h == leftOuter || h == fullOuter }
func (h how) keepsRight() bool { return h == rightOuter || h == fullOuter }

// Names the expressions of a join can read.
var (
	rowNames   = []string{"left", "right"}
	windowVars = []string{"key", "windowStart", "windowEnd"}
)

// config is what both joins share once checked.
type config struct {
	how     how
	keys    [2]*expr.Program
	selects []string // output field names, in spec order
	exprs   *expr.RowSet
	where   int // index of the where expression in exprs; -1: none
	tsExpr  int // interval join: index of the timestamp expression; -1: none
	// untilExpr is the interval join's until expression (index in exprs;
	// -1: none), untilSrc its text.
	untilExpr int
	untilSrc  string
}

// checker collects problems of a join's options.
type checker struct {
	c  *runtime.ConfigContext
	ok bool
	// schemas of left and right (nil: undeclared), their expressions are
	// checked against.
	schemas []*api.Schema
}

func (k *checker) bad(field, format string, args ...any) {
	k.c.Errorf(field, format, args...)
	k.ok = false
}

// common checks the options both joins share; hows are the accepted kinds.
func (k *checker) common(o commonOptions, hows map[string]how, vars []string) config {
	cfg := config{how: inner, where: -1, tsExpr: -1, untilExpr: -1}
	if o.How != "" {
		h, ok := hows[o.How]
		if !ok {
			k.bad("how", "must be %s, got %q", names(hows), o.How)
		}
		cfg.how = h
	}
	k.schemas = []*api.Schema{k.c.InputSchema(o.Left.From), k.c.InputSchema(o.Right.From)}
	for i, s := range []sideSpec{o.Left, o.Right} {
		field := rowNames[i] + ".key"
		if s.Key == "" {
			continue // reported as missing
		}
		p, err := expr.CompileWith(k.schemas[i], s.Key, expr.Any)
		if err != nil {
			k.bad(field, "cannot compile %q: %v", s.Key, err)
			continue
		}
		cfg.keys[i] = p
	}
	var exprs []*expr.RowExpr
	if len(o.Select) == 0 && k.c.Has("select") {
		k.bad("select", "needs at least one field, e.g. {id: left.id, price: right.price}")
	}
	for _, s := range o.Select {
		e, err := expr.CompileRowExprWith(k.schemas, s.Value, expr.Any, rowNames, vars...)
		if err != nil {
			k.c.Dec.ErrorAt(s.Path, "cannot compile %q: %v", s.Value, err)
			k.ok = false
			continue
		}
		cfg.selects = append(cfg.selects, s.Name)
		exprs = append(exprs, e)
	}
	if o.Where != "" {
		e, err := expr.CompileRowExprWith(k.schemas, o.Where, expr.Bool, rowNames, vars...)
		if err != nil {
			k.bad("where", "cannot compile %q: %v", o.Where, err)
		} else {
			cfg.where = len(exprs)
			exprs = append(exprs, e)
		}
	}
	cfg.exprs = expr.NewRowSet(rowNames, exprs...)
	return cfg
}

func names(hows map[string]how) string {
	out := ""
	for _, h := range []how{inner, leftOuter, rightOuter, fullOuter} {
		for n, v := range hows {
			if v == h {
				if out != "" {
					out += ", "
				}
				out += n
			}
		}
	}
	return out
}

// plan is the Plan of a checked join: each side hash-partitioned by its key.
func (k *checker) plan(cfg config, what string, meaning *runtime.StateMeaning, newOp func() runtime.Operator) *runtime.Plan {
	if !k.ok {
		return nil
	}
	left, right := cfg.keys[0], cfg.keys[1]
	return &runtime.Plan{
		KeyedInput:  true,
		State:       meaning,
		InputKeys:   []func() runtime.KeySelector{func() runtime.KeySelector { return newKeySelector(left) }, func() runtime.KeySelector { return newKeySelector(right) }},
		SideOutputs: []string{lateLeftOutput, lateRightOutput},
		// A result whose where, select or timestamp fails goes through
		// onError (emitter.failed).
		OnError:     true,
		EventTime:   fmt.Sprintf("%s %q works on event time", what, k.c.Op.UID),
		NewOperator: newOp,
	}
}

func configureWindow(c *runtime.ConfigContext) *runtime.Plan {
	var o windowOptions
	c.Decode(&o)
	k := &checker{c: c, ok: true}
	cfg := k.common(commonOptions{o.Left, o.Right, o.How, o.Select, o.Where},
		map[string]how{"inner": inner, "left": leftOuter, "right": rightOuter, "full": fullOuter}, windowVars)
	a, good := o.Window.Check(k.bad)
	if !good {
		return nil
	}
	m := commonMeaning(commonOptions{o.Left, o.Right, o.How, o.Select, o.Where})
	a.AddMeaning(m.Values)
	return k.plan(cfg, "windowJoin", m, func() runtime.Operator { return runtime.KeyedCoProcess(newWindowJoin(cfg.clone(), a)) })
}

func configureInterval(c *runtime.ConfigContext) *runtime.Plan {
	var o intervalOptions
	c.Decode(&o)
	k := &checker{c: c, ok: true}
	cfg := k.common(commonOptions{o.Left, o.Right, o.How, o.Select, o.Where}, map[string]how{"inner": inner, "left": leftOuter}, []string{"key"})
	lower, okL := k.bound("lower", o.Lower)
	upper, okU := int64(unbounded), true
	switch {
	case o.Upper != "":
		upper, okU = k.bound("upper", o.Upper)
	case o.Until == "":
		k.bad("upper", "is missing: the latest right time a left row matches, after left.ts (a duration such as 1s, or -5s), "+
			"or give until (an expression over left, such as left.expires) to bound each left row by its own time")
		okU = false
	}
	if okL && okU && lower > upper {
		k.bad("upper", "must not be below lower (%s), got %s: no right row could match", o.Lower, o.Upper)
	}
	if o.Until != "" {
		if e, i := k.addRowExpr(&cfg, "until", o.Until); e != nil {
			cfg.untilExpr, cfg.untilSrc = i, o.Until
			if e.Reads(right) {
				k.bad("until", "%q reads the right row; until bounds a left row when it arrives, so it reads only left (and key), e.g. left.expires", o.Until)
			}
		}
	}
	if o.Timestamp != "" {
		if e, i := k.addRowExpr(&cfg, "timestamp", o.Timestamp); e != nil {
			cfg.tsExpr = i
		}
	}
	m := commonMeaning(commonOptions{o.Left, o.Right, o.How, o.Select, o.Where})
	m.Values["lower"] = boundMeaning(lower)
	m.Values["upper"] = boundMeaning(upper)
	if o.Until != "" {
		m.Values["until"] = normalize(o.Until)
	}
	return k.plan(cfg, "intervalJoin", m, func() runtime.Operator {
		return runtime.KeyedCoProcess(newIntervalJoin(cfg.clone(), lower, upper))
	})
}

// addRowExpr compiles src, the option field, over left, right and key
// and adds it to cfg's expressions: it and its index (nil: reported).
func (k *checker) addRowExpr(cfg *config, field, src string) (*expr.RowExpr, int) {
	e, err := expr.CompileRowExprWith(k.schemas, src, expr.Any, rowNames, "key")
	if err != nil {
		k.bad(field, "cannot compile %q: %v", src, err)
		return nil, -1
	}
	i := cfg.exprs.Len()
	cfg.exprs = cfg.exprs.With(e)
	return e, i
}

// bound reads an interval bound: a duration that may be negative
// ("-5s": before the left row), in whole milliseconds.
func (k *checker) bound(field, src string) (int64, bool) {
	if src == "" {
		return 0, false // missing: reported by the decoder
	}
	d, err := api.ParseSignedDuration(src)
	if err != nil {
		k.bad(field, "%v", err)
		return 0, false
	}
	if d.D()%time.Millisecond != 0 {
		k.bad(field, "must be a whole number of milliseconds (event times are in ms), got %s", d)
		return 0, false
	}
	return d.D().Milliseconds(), true
}

// clone gives a subtask its own expression scratch space.
func (c config) clone() config {
	c.exprs = c.exprs.Clone()
	return c
}
