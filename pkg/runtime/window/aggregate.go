package window

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/flinkgo/flinkgo/pkg/internal/itoa"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// aggFunc is an aggregate function.
type aggFunc uint8

const (
	aggCount aggFunc = iota + 1
	aggSum
	aggMin
	aggMax
	aggAvg
	aggFirst
	aggLast
	aggCountDistinct
	aggMaxBy
	aggMinBy
)

var funcNames = map[string]aggFunc{"count": aggCount, "sum": aggSum, "min": aggMin, "max": aggMax, "avg": aggAvg, "first": aggFirst,
	"last": aggLast, "countDistinct": aggCountDistinct, "maxBy": aggMaxBy, "minBy": aggMinBy}

func (f aggFunc) String() string {
	for n, v := range funcNames {
		if v == f {
			return n
		}
	}
	return fmt.Sprintf("Func(%d)", f)
}

// args is how many expressions each function takes.
func (f aggFunc) args() (min, max int) {
	switch f {
	case aggCount:
		return 0, 1
	case aggMaxBy, aggMinBy:
		return 2, 2
	}
	return 1, 1
}

// CheckArg reports an argument of f (the i-th, from 0) whose kind, known
// at compile time from a source's schema (reflect.Interface or Invalid:
// not known), f cannot aggregate: sum and avg take numbers, min and max
// numbers or strings, maxBy and minBy a number as their second argument.
func (f aggFunc) CheckArg(i int, k reflect.Kind) error {
	num := isNumber(k)
	known := k != reflect.Invalid && k != reflect.Interface
	switch {
	case !known:
		return nil
	case (f == aggSum || f == aggAvg) && !num:
		return fmt.Errorf("%s takes a number, and this argument is a %s by the schema", f, kindName(k))
	case (f == aggMin || f == aggMax) && !num && k != reflect.String:
		return fmt.Errorf("%s takes a number or a string, and this argument is a %s by the schema", f, kindName(k))
	case (f == aggMaxBy || f == aggMinBy) && i == 1 && !num:
		return fmt.Errorf("%s orders by a number (its second argument), and this one is a %s by the schema", f, kindName(k))
	}
	return nil
}

func isNumber(k reflect.Kind) bool {
	return (k >= reflect.Int && k <= reflect.Uint64) || k == reflect.Float32 || k == reflect.Float64
}

// kindName names a kind as a schema does (string, bool, list, map).
func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Slice, reflect.Array:
		return "list"
	case reflect.Map, reflect.Struct:
		return "map"
	}
	return k.String()
}

// aggregate is one named aggregate of a window: "spent: sum(amount)".
type aggregate struct {
	Name string
	Func aggFunc
	Args []string // expressions
}

var callPattern = regexp.MustCompile(`^\s*([A-Za-z]+)\s*\((.*)\)\s*$`)

// parseAggregate reads "fn(expr[, expr])".
func parseAggregate(name, src string) (aggregate, error) {
	m := callPattern.FindStringSubmatch(src)
	if m == nil {
		return aggregate{}, fmt.Errorf("%q is not an aggregate call; write function(expression), e.g. sum(amount) or count()", src)
	}
	f, ok := funcNames[m[1]]
	if !ok {
		return aggregate{}, fmt.Errorf("unknown aggregate function %q; use one of count, sum, min, max, avg, first, last, countDistinct, maxBy, minBy", m[1])
	}
	args := splitArgs(m[2])
	lo, hi := f.args()
	if len(args) < lo || len(args) > hi {
		want := fmt.Sprintf("%d", lo)
		if lo != hi {
			want = fmt.Sprintf("%d or %d", lo, hi)
		}
		return aggregate{}, fmt.Errorf("%s takes %s arguments, got %d", m[1], want, len(args))
	}
	return aggregate{Name: name, Func: f, Args: args}, nil
}

// splitArgs splits on top-level commas (not inside brackets or strings).
func splitArgs(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// accum is the partial aggregate of one pane or window: one slot per
// aggregate, plus the record count.
type accum struct {
	Records int64
	Slots   []slot
}

// accWith holds an accum and its n slots in one allocation of their size
// (a pane of a count() is a third of one with room for three slots).
type accWith[S any] struct {
	acc   accum
	slots S
}

// slot is one aggregate's state. Which fields are used depends on the
// function: N counts non-null values; ISum/FSum the sum (integers stay
// integers until a float arrives); V the min, max, first, last or best
// value; TS its event time (first, last, maxBy, minBy); Key the best's
// ordering value (maxBy, minBy); Set the distinct values.
type slot struct {
	N     int64
	ISum  int64
	FSum  float64
	Float bool // the sum or best key is a float
	V     any
	Key   float64
	TS    int64
	Set   map[string]struct{}
}

// newAcc is an empty accumulator for aggs.
func newAcc(aggs []aggregate) *accum {
	switch len(aggs) {
	case 0:
		return &accum{}
	case 1:
		x := &accWith[[1]slot]{}
		x.acc.Slots = x.slots[:]
		return &x.acc
	case 2:
		x := &accWith[[2]slot]{}
		x.acc.Slots = x.slots[:]
		return &x.acc
	case 3:
		x := &accWith[[3]slot]{}
		x.acc.Slots = x.slots[:]
		return &x.acc
	}
	return &accum{Slots: make([]slot, len(aggs))}
}

// Add folds one record's values into a: vals holds each aggregate's
// argument values in order (the flattened Args), ts its event time.
func (a *accum) Add(aggs []aggregate, vals []any, ts int64) error {
	a.Records++
	i := 0
	for k, ag := range aggs {
		s := &a.Slots[k]
		n := len(ag.Args)
		args := vals[i : i+n]
		i += n
		if err := s.add(ag, args, ts); err != nil {
			return fmt.Errorf("aggregate %s: %s(%s): %w", ag.Name, ag.Func, strings.Join(ag.Args, ", "), err)
		}
	}
	return nil
}

func (s *slot) add(ag aggregate, args []any, ts int64) error {
	switch ag.Func {
	case aggCount:
		if len(args) == 0 || args[0] != nil {
			s.N++
		}
		return nil
	case aggCountDistinct:
		if args[0] == nil {
			return nil
		}
		if s.Set == nil {
			s.Set = map[string]struct{}{}
		}
		s.Set[distinctKey(args[0])] = struct{}{}
		return nil
	case aggFirst:
		if args[0] != nil && (s.N == 0 || ts < s.TS) {
			s.V, s.TS = args[0], ts
		}
		if args[0] != nil {
			s.N++
		}
		return nil
	case aggLast:
		if args[0] != nil && (s.N == 0 || ts >= s.TS) {
			s.V, s.TS = args[0], ts
		}
		if args[0] != nil {
			s.N++
		}
		return nil
	case aggMaxBy, aggMinBy:
		if args[1] == nil {
			return nil
		}
		k, ok := expr.Number(args[1])
		if !ok {
			return fmt.Errorf("%v is not a number", args[1])
		}
		if s.N == 0 || s.better(ag.Func, k, ts) {
			s.V, s.Key, s.TS = args[0], k, ts
		}
		s.N++
		return nil
	}
	v := args[0]
	if v == nil {
		return nil // null values do not count (SQL)
	}
	switch ag.Func {
	case aggSum, aggAvg:
		return s.addNumber(v)
	case aggMin, aggMax:
		if s.N == 0 {
			s.V, s.N = v, 1
			return nil
		}
		c, err := compare(v, s.V)
		if err != nil {
			return err
		}
		if (ag.Func == aggMin && c < 0) || (ag.Func == aggMax && c > 0) {
			s.V = v
		}
		s.N++
	}
	return nil
}

// better reports whether a record with key k at ts beats the slot's best
// for maxBy/minBy: a larger (smaller) key, ties to the earlier event time,
// so the result does not depend on arrival order.
func (s *slot) better(f aggFunc, k float64, ts int64) bool {
	switch {
	case k == s.Key:
		return ts < s.TS
	case f == aggMaxBy:
		return k > s.Key
	}
	return k < s.Key
}

func (s *slot) addNumber(v any) error {
	switch x := v.(type) {
	case int:
		s.ISum += int64(x)
	case int64:
		s.ISum += x
	case float64:
		s.Float = true
		s.FSum += x
	default:
		return fmt.Errorf("%v is not a number", v)
	}
	s.N++
	return nil
}

// Merge folds b (a pane or session of the same key) into a.
func (a *accum) Merge(aggs []aggregate, b *accum) {
	a.Records += b.Records
	for k, ag := range aggs {
		s, o := &a.Slots[k], &b.Slots[k]
		if o.N == 0 && len(o.Set) == 0 {
			continue
		}
		switch ag.Func {
		case aggCount:
			s.N += o.N
		case aggSum, aggAvg:
			s.ISum += o.ISum
			s.FSum += o.FSum
			s.Float = s.Float || o.Float
			s.N += o.N
		case aggMin, aggMax:
			if s.N == 0 {
				s.V = o.V
			} else if c, err := compare(o.V, s.V); err == nil && ((ag.Func == aggMin && c < 0) || (ag.Func == aggMax && c > 0)) {
				s.V = o.V
			}
			s.N += o.N
		case aggFirst:
			if s.N == 0 || o.TS < s.TS {
				s.V, s.TS = o.V, o.TS
			}
			s.N += o.N
		case aggLast:
			if s.N == 0 || o.TS >= s.TS {
				s.V, s.TS = o.V, o.TS
			}
			s.N += o.N
		case aggMaxBy, aggMinBy:
			if s.N == 0 || s.better(ag.Func, o.Key, o.TS) {
				s.V, s.Key, s.TS = o.V, o.Key, o.TS
			}
			s.N += o.N
		case aggCountDistinct:
			if s.Set == nil {
				s.Set = make(map[string]struct{}, len(o.Set))
			}
			for v := range o.Set {
				s.Set[v] = struct{}{}
			}
		}
	}
}

// Result is the value of aggregate k.
func (a *accum) Result(ag aggregate, k int) any {
	s := &a.Slots[k]
	switch ag.Func {
	case aggCount:
		if len(ag.Args) == 0 {
			return a.Records
		}
		return s.N
	case aggCountDistinct:
		return int64(len(s.Set))
	case aggSum:
		if s.N == 0 {
			return nil
		}
		if s.Float {
			return float64(s.ISum) + s.FSum
		}
		return s.ISum
	case aggAvg:
		if s.N == 0 {
			return nil
		}
		return (float64(s.ISum) + s.FSum) / float64(s.N)
	}
	if s.N == 0 {
		return nil
	}
	return s.V
}

// appendResult appends aggregate k's result as JSON: appendValue of
// Result, without boxing the integer results.
func (a *accum) appendResult(b []byte, ag aggregate, k int) []byte {
	s := &a.Slots[k]
	switch {
	case ag.Func == aggCount && len(ag.Args) == 0:
		return itoa.AppendInt(b, a.Records)
	case ag.Func == aggCount:
		return itoa.AppendInt(b, s.N)
	case ag.Func == aggSum && s.N > 0 && !s.Float:
		return itoa.AppendInt(b, s.ISum)
	}
	return appendValue(b, a.Result(ag, k))
}

// reset empties a (as newAcc; no aggregate of a running result holds a
// set).
func (a *accum) reset() {
	a.Records = 0
	clear(a.Slots)
}

// compare orders two numbers or two strings.
func compare(a, b any) (int, error) {
	if x, ok := expr.Number(a); ok {
		y, ok := expr.Number(b)
		if !ok {
			return 0, fmt.Errorf("cannot compare %v with %v", a, b)
		}
		switch {
		case x < y:
			return -1, nil
		case x > y:
			return 1, nil
		}
		return 0, nil
	}
	x, ok1 := a.(string)
	y, ok2 := b.(string)
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("min and max take numbers or strings, not %v and %v", a, b)
	}
	return strings.Compare(x, y), nil
}

// distinctKey is the canonical form of a value for countDistinct: numbers
// equal as numbers are the same value.
func distinctKey(v any) string {
	if f, ok := expr.Number(v); ok {
		if f == math.Trunc(f) && math.Abs(f) < 1e15 {
			return strconv.FormatInt(int64(f), 10)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// accCodec encodes an accumulator in snapshots (version 1): the record
// count, then per slot its fields; values as JSON text.
type accCodec struct{ aggs []aggregate }

func (c accCodec) Append(dst []byte, a *accum) []byte {
	e := state.AppendEncoder(dst, 1)
	e.Varint(a.Records)
	e.Uvarint(uint64(len(a.Slots)))
	for k := range a.Slots {
		s := &a.Slots[k]
		e.Varint(s.N)
		e.Varint(s.ISum)
		e.Uvarint(math.Float64bits(s.FSum))
		e.Bool(s.Float)
		e.Bytes(jsonValue(s.V))
		e.Uvarint(math.Float64bits(s.Key))
		e.Varint(s.TS)
		e.Uvarint(uint64(len(s.Set)))
		for v := range s.Set {
			e.String(v)
		}
	}
	return e.Encoded()
}

func (c accCodec) Decode(b []byte) (*accum, error) {
	d := state.NewDecoder("window accumulator", b, 1)
	a := newAcc(c.aggs)
	a.Records = d.Varint()
	n := d.Uvarint()
	if d.Err() == nil && n != uint64(len(c.aggs)) {
		d.Fail("%d aggregates in the snapshot, %d in the job: the window's aggregates changed (give it a new uid to start it without state)", n, len(c.aggs))
	}
	for k := 0; k < len(a.Slots) && d.Err() == nil; k++ {
		s := &a.Slots[k]
		s.N, s.ISum = d.Varint(), d.Varint()
		s.FSum = math.Float64frombits(d.Uvarint())
		s.Float = d.Bool()
		if raw := d.Bytes(); len(raw) > 0 && d.Err() == nil {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				d.Fail("value: %v", err)
			}
			s.V = expr.Normalize(v)
		}
		s.Key = math.Float64frombits(d.Uvarint())
		s.TS = d.Varint()
		m := d.Uvarint()
		for i := uint64(0); i < m && d.Err() == nil; i++ {
			if s.Set == nil {
				s.Set = map[string]struct{}{}
			}
			s.Set[d.String()] = struct{}{}
		}
	}
	return a, d.Finish()
}

func jsonValue(v any) []byte {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(v))
	}
	return b
}
