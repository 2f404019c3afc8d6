package expr

import (
	"bytes"
	"math"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/expr-lang/expr/ast"

	"github.com/flinkgo/flinkgo/pkg/internal/itoa"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/jsonstring"
)

// native evaluates the common shapes of expressions without the expr VM
// and without decoding the record into a map: comparisons, arithmetic and
// boolean logic over top-level JSON members, literals, timestamp and key,
// membership in a literal set of strings, and, for map's values, an object
// literal of such expressions. It reads each member's raw JSON in one scan
// that stops once it has them all.
//
// It gives the VM's result or none: whenever a value is not what the fast
// path handles (a member holding an object, a string with escapes, a type
// mismatch the VM would report or convert, a division by zero), it reports
// !ok and the caller evaluates the expression with the VM, which then also
// produces the error, if any. native_test.go checks the two agree over a
// corpus of expressions and records.
//
// Nodes are closures (a call through an interface method returning a
// struct cost three times as much), predicates return plain bools, and
// values are three words, so they stay in registers.
type native struct {
	extra []string // variables the caller binds: never native (plain mode)
	// acc, in plain mode, is a bound variable whose members are read as
	// row accRow (reduce's accumulator, fold.go); "": none.
	acc string
	// fold: the values become an accumulator kept as its JSON (fold.go).
	fold bool
	// Row mode (a RowSet): the rows' names, whose members the expressions
	// read as row.member, and the variables the caller binds.
	rows   []string
	vars   []string
	fields []fieldRef // the members read, by index
	perRow [][]int    // the indexes of fields of each row
	value  nexpr      // nil: no value form
	pred   npred      // nil: no predicate form
	object *nobject   // the root is an object literal (map's values)
	// bare is 1 + the field the root is when it is a bare member of the
	// record (0: it is not): appendValue copies its raw JSON when that is
	// what the general path would write (keyBy auction: no decoding and
	// formatting of the number).
	bare int
}

// fieldRef is a member of a row (0, the record, in plain mode).
type fieldRef struct {
	row  int
	name string
	// num: an operand decodes it (arithmetic, comparisons), so scanRow
	// computes an integer's value as it scans its digits, into dec.
	num bool
}

// Kinds of native values; nVM is a bound variable the fast path cannot
// represent (the VM must evaluate what reads it).
const (
	nNil uint8 = iota
	nBool
	nInt
	nFloat
	nStr
	nVM
)

// nval is a native value: i holds an int, a bool (0 or 1) or a float's
// bits; s a string, which may point into the record (valid during the
// evaluation only).
type nval struct {
	k uint8
	i int
	s string
}

func boolVal(b bool) nval {
	if b {
		return nval{k: nBool, i: 1}
	}
	return nval{k: nBool}
}

func floatVal(f float64) nval { return nval{k: nFloat, i: int(math.Float64bits(f))} }

func (v nval) b() bool    { return v.i != 0 }
func (v nval) f() float64 { return math.Float64frombits(uint64(v.i)) }

// nctx is one evaluation: the raw JSON of each member (absent: nil), the
// bound variables (row mode) and the record (plain mode).
type nctx struct {
	// slots[i] is member i of the record scanned: one slice of structs,
	// so that the scan's handing over of a member is one bounds check.
	slots []slot
	vars  []nval
	rec   *runtime.Record
	// shapes[row] is the member orders scanRow met in the row's last
	// records (see shapeSet): records of a stream mostly share their
	// members' order, or one of a few.
	shapes   []shapeSet
	interned map[string]string // see keyString
	// gen counts the scans (every change of the members: newRecord).
	gen   uint64
	sink  rowSink // scanRow's, kept here so that it does not escape per record
	found []found // scanRow's, kept for the next record
}

// slot is a member of the record scanned.
type slot struct {
	// raw is the member's raw JSON while gen is the scan's (c.gen); any
	// other raw is a record before (member). Stamps instead of clearing
	// raw for every record: clearing slices is a call, with write
	// barriers.
	raw []byte
	gen uint64
	// canon == c.gen: scanRow saw the member to be canonical (see
	// canonical) while it scanned it, so appendObject need not look
	// again.
	canon uint64
	dec   decoded // the member decoded, valid while its gen is c.gen
	num   bool    // the field's num (see fieldRef)
}

// member is the raw JSON of member i of the record scanned (nil: absent).
func (c *nctx) member(i int) []byte {
	if s := &c.slots[i]; s.gen == c.gen {
		return s.raw
	}
	return nil
}

// canon reports whether scanRow saw member i to be canonical.
func (c *nctx) canon(i int) bool { return c.slots[i].canon == c.gen }

type decoded struct {
	gen uint64
	v   nval
	ok  bool
}

// newRecord empties raw for the members of the next record (and so
// invalidates what was decoded from the last one).
func (c *nctx) newRecord() {
	c.gen++ // and so every raw member is absent (see member)
}

func (n *native) newCtx() nctx {
	c := nctx{slots: make([]slot, len(n.fields)), vars: make([]nval, len(n.vars)),
		shapes: make([]shapeSet, len(n.perRow)), gen: 1}
	for i := range c.slots {
		c.slots[i].num = n.fields[i].num
	}
	return c
}

// nexpr evaluates a node to a value; npred to a bool (b), ok false: use
// the VM.
type (
	nexpr func(c *nctx) (nval, bool)
	npred func(c *nctx) (b, ok bool)
)

// compileNative returns the native form of node, or nil when it has a part
// the fast path does not handle.
func compileNative(node ast.Node, extra []string) *native {
	n := &native{extra: extra}
	if !n.compileRoot(node) {
		return nil
	}
	return n
}

// compileRoot compiles node as the expression of n (false: not native).
func (n *native) compileRoot(node ast.Node) bool {
	if m, ok := node.(*ast.MapNode); ok {
		n.object = n.compileObject(m)
		return n.object != nil
	}
	if i, ok := n.fieldOf(node); ok && n.fields[i].row == 0 && n.rows == nil {
		// A bare member: appendValue copies it, so its value is only a
		// fallback and does not make it num.
		n.bare = 1 + i
		n.pred, n.value = n.predicate(node), n.fieldValue(i)
		return true
	}
	n.pred = n.predicate(node)
	n.value = n.compile(node)
	return n.pred != nil || n.value != nil
}

func (n *native) field(row int, name string) int {
	for i, f := range n.fields {
		if f.row == row && f.name == name {
			return i
		}
	}
	n.fields = append(n.fields, fieldRef{row: row, name: name})
	for len(n.perRow) <= row {
		n.perRow = append(n.perRow, nil)
	}
	n.perRow[row] = append(n.perRow[row], len(n.fields)-1)
	return len(n.fields) - 1
}

// fieldOf returns the index of the member node reads: an identifier in
// plain mode, row.member in row mode.
func (n *native) fieldOf(node ast.Node) (int, bool) {
	if n.rows != nil {
		m, ok := node.(*ast.MemberNode)
		if !ok || m.Method {
			return 0, false
		}
		id, ok := m.Node.(*ast.IdentifierNode)
		prop, isStr := m.Property.(*ast.StringNode)
		if !ok || !isStr {
			return 0, false
		}
		for r, name := range n.rows {
			if name == id.Value {
				return n.field(r, prop.Value), true
			}
		}
		return 0, false
	}
	if m, ok := node.(*ast.MemberNode); ok && n.acc != "" {
		id, isID := m.Node.(*ast.IdentifierNode)
		prop, isStr := m.Property.(*ast.StringNode)
		if isID && isStr && id.Value == n.acc && !m.Method && !m.Optional {
			return n.field(accRow, prop.Value), true
		}
		return 0, false
	}
	id, ok := node.(*ast.IdentifierNode)
	if !ok || id.Value == VarValue || id.Value == VarTimestamp || id.Value == VarKey {
		return 0, false
	}
	for _, e := range n.extra {
		if e == id.Value {
			return 0, false
		}
	}
	return n.field(0, id.Value), true
}

func literal(node ast.Node) (nval, bool) {
	switch x := node.(type) {
	case *ast.NilNode:
		return nval{}, true
	case *ast.BoolNode:
		return boolVal(x.Value), true
	case *ast.IntegerNode:
		return nval{k: nInt, i: x.Value}, true
	case *ast.FloatNode:
		return floatVal(x.Value), true
	case *ast.StringNode:
		return nval{k: nStr, s: x.Value}, true
	}
	return nval{}, false
}

// compile returns the value form of node (nil: none).
func (n *native) compile(node ast.Node) nexpr {
	if v := n.operand(node); v != nil {
		return v
	}
	// A boolean expression as a value.
	if p := n.predicate(node); p != nil {
		return func(c *nctx) (nval, bool) {
			b, ok := p(c)
			return boolVal(b), ok
		}
	}
	return nil
}

// fieldValue is the value form of field i: its member decoded.
func (n *native) fieldValue(i int) nexpr {
	decode := decodeRaw
	if n.fields[i].row == accRow && n.acc != "" {
		decode = decodeAcc
	}
	// A member read twice (dateTime - dateTime % 10000) is decoded once
	// per record: the value is kept for this scan's generation (scanRow
	// fills it already for the integers of num fields).
	return func(c *nctx) (nval, bool) {
		d := &c.slots[i].dec
		if d.gen != c.gen {
			d.v, d.ok = decode(c.member(i))
			d.gen = c.gen
		}
		return d.v, d.ok
	}
}

// operand returns the value form of a node that is not a boolean
// operation (nil: none).
func (n *native) operand(node ast.Node) nexpr {
	if v, ok := literal(node); ok {
		return func(*nctx) (nval, bool) { return v, true }
	}
	if i, ok := n.fieldOf(node); ok {
		// (An accumulator's members decode as decodeAcc says.)
		n.fields[i].num = n.fields[i].row != accRow || n.acc == ""
		return n.fieldValue(i)
	}
	switch x := node.(type) {
	case *ast.IdentifierNode:
		if n.rows != nil {
			for i, v := range n.vars {
				if v == x.Value {
					return func(c *nctx) (nval, bool) { return c.vars[i], c.vars[i].k != nVM }
				}
			}
			return nil
		}
		switch x.Value {
		case VarTimestamp:
			if n.fold {
				return nil // the VM's is an int64: an accumulator must keep it (fold.go)
			}
			return func(c *nctx) (nval, bool) { return nval{k: nInt, i: int(c.rec.Timestamp)}, true }
		case VarKey:
			return func(c *nctx) (nval, bool) { return nval{k: nStr, s: view(c.rec.Key)}, true }
		}
		return nil
	case *ast.CallNode:
		if id, ok := x.Callee.(*ast.IdentifierNode); ok && id.Value == "round" && len(x.Arguments) >= 1 && len(x.Arguments) <= 2 {
			places := 0
			if len(x.Arguments) == 2 {
				lit, ok := x.Arguments[1].(*ast.IntegerNode)
				if !ok || lit.Value < -15 || lit.Value > 15 {
					return nil // places computed, or out of range: the VM's (its error)
				}
				places = lit.Value
			}
			if in := n.compile(x.Arguments[0]); in != nil {
				return roundNative(in, places)
			}
		}
		return nil
	case *ast.BuiltinNode:
		if x.Name == "int" && len(x.Arguments) == 1 {
			if in := n.compile(x.Arguments[0]); in != nil {
				return toInt(in)
			}
		}
		if (x.Name == "max" || x.Name == "min") && len(x.Arguments) == 2 {
			l, r := n.compile(x.Arguments[0]), n.compile(x.Arguments[1])
			if l != nil && r != nil {
				return minMax(x.Name == "max", l, r)
			}
		}
		return nil
	case *ast.UnaryNode:
		if x.Operator == "-" {
			if in := n.compile(x.Node); in != nil {
				return neg(in)
			}
			return nil
		}
	case *ast.BinaryNode:
		switch x.Operator {
		case "+", "-", "*", "/", "%":
			l, r := n.compile(x.Left), n.compile(x.Right)
			if l == nil || r == nil {
				return nil
			}
			return arithmetic(opOf(x.Operator), l, r)
		}
	}
	return nil
}

// predicate returns the boolean form of node (nil: none).
func (n *native) predicate(node ast.Node) npred {
	switch x := node.(type) {
	case *ast.BoolNode:
		b := x.Value
		return func(*nctx) (bool, bool) { return b, true }
	case *ast.UnaryNode:
		if x.Operator == "!" || x.Operator == "not" {
			if p := n.predicate(x.Node); p != nil {
				return func(c *nctx) (bool, bool) {
					b, ok := p(c)
					return !b, ok
				}
			}
		}
		return nil
	case *ast.BinaryNode:
		return n.binaryPredicate(x)
	case *ast.IdentifierNode, *ast.MemberNode:
		if i, ok := n.fieldOf(x); ok && (n.fields[i].row != accRow || n.acc == "") {
			// A member that is a flag (filter _keep): its raw JSON is the
			// answer; anything but true or false is decoded (and not a bool).
			v := n.fieldValue(i)
			return func(c *nctx) (bool, bool) {
				switch raw := c.member(i); string(raw) {
				case "true":
					return true, true
				case "false":
					return false, true
				}
				r, ok := v(c)
				return r.b(), ok && r.k == nBool
			}
		}
		v := n.operand(x)
		if v == nil {
			return nil
		}
		return func(c *nctx) (bool, bool) {
			r, ok := v(c)
			return r.b(), ok && r.k == nBool
		}
	}
	return nil
}

func (n *native) binaryPredicate(x *ast.BinaryNode) npred {
	switch x.Operator {
	case "&&", "and", "||", "or":
		l, r := n.predicate(x.Left), n.predicate(x.Right)
		if l == nil || r == nil {
			return nil
		}
		if x.Operator == "&&" || x.Operator == "and" {
			return func(c *nctx) (bool, bool) {
				if b, ok := l(c); !ok || !b {
					return false, ok
				}
				return r(c)
			}
		}
		return func(c *nctx) (bool, bool) {
			if b, ok := l(c); !ok || b {
				return b, ok
			}
			return r(c)
		}
	case "in":
		return n.inSet(x)
	case "==", "!=":
		want := x.Operator == "=="
		if p := n.fieldEquals(x.Left, x.Right, want); p != nil {
			return p
		}
		if p := n.fieldEquals(x.Right, x.Left, want); p != nil {
			return p
		}
		l, r := n.compile(x.Left), n.compile(x.Right)
		if l == nil || r == nil {
			return nil
		}
		return func(c *nctx) (bool, bool) {
			a, ok := l(c)
			if !ok {
				return false, false
			}
			b, ok := r(c)
			if !ok {
				return false, false
			}
			e, ok := equal(a, b)
			return e == want, ok
		}
	case "<", "<=", ">", ">=":
		l, r := n.compile(x.Left), n.compile(x.Right)
		if l == nil || r == nil {
			return nil
		}
		op := opOf(x.Operator)
		return func(c *nctx) (bool, bool) {
			a, ok := l(c)
			if !ok {
				return false, false
			}
			b, ok := r(c)
			if !ok {
				return false, false
			}
			return ordered(op, a, b)
		}
	}
	return nil
}

// fieldEquals is member == literal read straight from the member's raw
// JSON: a canonical integer or a string without escapes compares as bytes.
func (n *native) fieldEquals(f, lit ast.Node, want bool) npred {
	v, ok := literal(lit)
	if !ok || (v.k != nInt && v.k != nStr) {
		return nil
	}
	i, ok := n.fieldOf(f)
	if !ok || (n.acc != "" && n.fields[i].row == accRow) {
		return nil // an accumulator's numbers decode as decodeAcc says
	}
	if v.k == nInt {
		text := strconv.Itoa(v.i)
		return func(c *nctx) (bool, bool) {
			if c.canon(i) { // a canonical integer is equal if it is the same digits
				return (string(c.member(i)) == text) == want, true
			}
			raw := c.member(i)
			if x, ok := parseInt(raw); ok {
				return (x == v.i) == want, true
			}
			return generalEquals(raw, v, want)
		}
	}
	return func(c *nctx) (bool, bool) {
		raw := c.member(i)
		if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
			return (string(raw[1:len(raw)-1]) == v.s) == want, true
		}
		return generalEquals(raw, v, want)
	}
}

func generalEquals(raw []byte, lit nval, want bool) (bool, bool) {
	x, ok := decodeRaw(raw)
	if !ok {
		return false, false
	}
	e, ok := equal(x, lit)
	return e == want, ok
}

// inSet is x in a literal set of strings (the optimizer turns an array of
// string literals into a set).
func (n *native) inSet(x *ast.BinaryNode) npred {
	c, ok := x.Right.(*ast.ConstantNode)
	if !ok {
		return nil
	}
	set, ok := c.Value.(map[string]struct{})
	if !ok {
		return nil
	}
	l := n.compile(x.Left)
	if l == nil {
		return nil
	}
	return func(c *nctx) (bool, bool) {
		v, ok := l(c)
		if !ok || v.k != nStr {
			return false, false
		}
		_, in := set[v.s]
		return in, true
	}
}

// nobject is an object literal: its members in the order AppendJSON
// writes a map (sorted keys), each with its `"key":` prefix encoded.
type nobject struct {
	keys  []string
	items []objItem // per member, in keys' order
}

// objItem is a member of an object literal: what appendObject writes of
// it, in one struct so that reading it is one bounds check.
type objItem struct {
	// short is prefix zero-padded to a word pair when it fits (shortLen
	// its length; 0: it does not), copied in one store.
	short    [16]byte
	shortLen int
	prefix   []byte // `,"key":` (no comma before the first)
	value    nexpr
	member   int // the field the value just reads (raw copy), or -1
}

func (n *native) compileObject(m *ast.MapNode) *nobject {
	type member struct {
		key   string
		val   nexpr
		field int
	}
	var ms []member
	seen := map[string]bool{}
	for _, p := range m.Pairs {
		pair, ok := p.(*ast.PairNode)
		if !ok {
			return nil
		}
		k, ok := pair.Key.(*ast.StringNode)
		if !ok || seen[k.Value] {
			return nil
		}
		seen[k.Value] = true
		// A member that is a field is copied raw (appendObject); its
		// decoded value is only the fallback, and does not make it num.
		var v nexpr
		f, ok := n.fieldOf(pair.Value)
		if ok {
			v = n.fieldValue(f)
		} else if f, v = -1, n.compile(pair.Value); v == nil {
			return nil
		}
		ms = append(ms, member{k.Value, v, f})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].key < ms[j].key })
	o := &nobject{}
	for i, m := range ms {
		var p []byte
		if i > 0 {
			p = append(p, ',')
		}
		p = append(jsonstring.Append(p, m.key), ':')
		o.keys = append(o.keys, m.key)
		it := objItem{prefix: p, value: m.val, member: m.field}
		if len(p) <= len(it.short) {
			copy(it.short[:], p)
			it.shortLen = len(p)
		}
		o.items = append(o.items, it)
	}
	return o
}

// scan fills c.raw (read through c.member) with the members' raw JSON
// (plain mode: the record).
// !ok: the value is not a JSON object the fast path reads (the VM reports
// what is wrong) or a key is escaped.
func (n *native) scan(data []byte, c *nctx) bool {
	c.newRecord()
	if len(n.fields) == 0 {
		return true
	}
	return n.scanRow(data, 0, c)
}

// scanRow fills the raw JSON of the fields of row (an index of perRow),
// reading the whole record (scanMembers): a field named twice is the
// last one.
func (n *native) scanRow(data []byte, row int, c *nctx) bool {
	if len(n.perRow[row]) == 0 {
		return true
	}
	got, ok := scanFast(data, &c.shapes[row], c.found[:0])
	if !ok {
		c.sink = rowSink{n: n, c: c, row: row}
		if got, ok = scanMembers(data, &c.shapes[row], &c.sink, c.found[:0]); !ok {
			return false
		}
		c.found = got[:0] // its capacity, for the next record
	}
	// Each member found becomes its field's, in order: one named twice
	// is the last, and nothing decoded from the one before it is kept.
	// (slots in a local: read through c, it would be loaded again after
	// every store.)
	slots, gen := c.slots, c.gen
	for k := range got {
		m := &got[k]
		s, v := &slots[m.field], data[m.valAt:m.valEnd]
		s.raw, s.gen, s.canon, s.dec.gen = v, gen, 0, 0
		if m.canon {
			s.canon = gen
			if s.num && v[0] != '"' {
				// Canonical: at most 18 digits, which parseInt reads.
				i, _ := parseInt(v)
				s.dec = decoded{gen: gen, v: nval{k: nInt, i: i}, ok: true}
			}
		}
	}
	return true
}

// rowSink is scanRow's side of scanMembers.
type rowSink struct {
	n   *native
	c   *nctx
	row int
}

func (s *rowSink) lookup(key []byte, escaped bool, _ int) (int, string, bool) {
	if escaped {
		return -1, "", false // the VM decodes it
	}
	n := s.n
	f := n.fieldAmong(n.perRow[s.row], key)
	return f, n.keyString(s.c, key, f), true
}

// fieldAmong is the field (an index of n.fields) among fields named key;
// -1: none.
func (n *native) fieldAmong(fields []int, key []byte) int {
	for _, f := range fields {
		if n.fields[f].name == string(key) {
			return f
		}
	}
	return -1
}

// le64 is the little-endian word at b[:8] (len(b) >= 8).
func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// maxInterned bounds the keys of members no expression reads that a
// context keeps copies of.
const maxInterned = 256

// keyString is key as a string that outlives the record: the field's
// name, or a copy kept once per context, so that records of alternating
// shapes do not allocate.
func (n *native) keyString(c *nctx, key []byte, f int) string {
	if f >= 0 {
		return n.fields[f].name
	}
	if s, ok := c.interned[string(key)]; ok {
		return s
	}
	s := string(key)
	if c.interned == nil {
		c.interned = map[string]string{}
	}
	if len(c.interned) < maxInterned {
		c.interned[s] = s
	}
	return s
}

// evalBool is the expression's result as a bool (!ok: use the VM).
func (n *native) evalBool(c *nctx) (bool, bool) {
	if n.pred == nil {
		return false, false
	}
	return n.pred(c)
}

// evalAny is the expression's result as the VM returns it.
func (n *native) evalAny(c *nctx) (any, bool) {
	if n.value == nil {
		return nil, false
	}
	v, ok := n.value(c)
	if !ok {
		return nil, false
	}
	return v.any(), true
}

// any is v as the VM gives it (a string copied out of the record).
func (v nval) any() any {
	switch v.k {
	case nBool:
		return v.b()
	case nInt:
		return v.i
	case nFloat:
		return v.f()
	case nStr:
		return strings.Clone(v.s)
	}
	return nil
}

// nativeOf converts a bound variable's value (nVM: one the fast path does
// not represent).
func nativeOf(v any) nval {
	switch x := v.(type) {
	case nil:
		return nval{}
	case bool:
		return boolVal(x)
	case int:
		return nval{k: nInt, i: x}
	case int64:
		return nval{k: nInt, i: int(x)}
	case float64:
		return floatVal(x)
	case string:
		return nval{k: nStr, s: x}
	}
	return nval{k: nVM}
}

// appendValue appends the record bytes of the result (AppendValue).
func (n *native) appendValue(dst []byte, c *nctx) ([]byte, bool) {
	if n.object != nil {
		return n.appendObject(dst, c, false, nil, nil)
	}
	if n.value == nil {
		return dst, false
	}
	if n.bare > 0 {
		f := n.bare - 1
		switch raw := c.member(f); {
		case raw == nil: // absent: null, below
		case raw[0] == '"':
			if bytes.IndexByte(raw, '\\') < 0 {
				return append(dst, raw[1:len(raw)-1]...), true // strings as they are
			}
		case c.canon(f) || canonical(raw):
			return append(dst, raw...), true
		}
	}
	v, ok := n.value(c)
	if !ok {
		return dst, false
	}
	if v.k == nStr {
		return append(dst, v.s...), true // strings as they are
	}
	return appendNative(dst, v)
}

// appendObject appends the object literal's JSON (AppendJSON of the VM's
// map). exact: only values that decode back from it as what the VM gave
// (exactNative, fold.go); !ok otherwise. With places (a fold's: for each
// member, the accumulator field it is, or -1), at[2k:2k+2] is set to where
// accumulator field k's value is in the object.
func (n *native) appendObject(dst []byte, c *nctx, exact bool, places []int, at []int32) ([]byte, bool) {
	start := len(dst)
	dst = append(dst, '{')
	o := n.object
	for i := range o.items {
		it := &o.items[i]
		// Short prefixes and members are copied as a word pair when there
		// is room on both sides: a call to memmove each cost more (q1).
		if l := len(dst); it.shortLen > 0 && cap(dst)-l >= 16 {
			*(*[16]byte)(dst[l : l+16]) = it.short
			dst = dst[:l+it.shortLen]
		} else {
			dst = append(dst, it.prefix...)
		}
		from := len(dst)
		if f := it.member; f >= 0 && (c.canon(f) || canonical(c.member(f))) && (!exact || exactRaw(c.member(f))) {
			raw := c.member(f) // a member as AppendJSON would write it
			if l := len(dst); len(raw) <= 16 && cap(raw) >= 16 && cap(dst)-l >= 16 {
				*(*[16]byte)(dst[l : l+16]) = *(*[16]byte)(raw[:16])
				dst = dst[:l+len(raw)]
			} else {
				dst = append(dst, raw...)
			}
		} else {
			v, ok := it.value(c)
			if !ok || (exact && !exactNative(v)) {
				return dst, false
			}
			if dst, ok = appendNative(dst, v); !ok {
				return dst, false
			}
		}
		if places != nil {
			if k := places[i]; k >= 0 {
				at[2*k], at[2*k+1] = int32(from-start), int32(len(dst)-start)
			}
		}
	}
	return append(dst, '}'), true
}

// appendNative appends v as AppendJSON would (!ok: a string AppendJSON
// would escape).
func appendNative(dst []byte, v nval) ([]byte, bool) {
	switch v.k {
	case nNil:
		return append(dst, "null"...), true
	case nBool:
		return strconv.AppendBool(dst, v.b()), true
	case nInt:
		return itoa.AppendInt(dst, int64(v.i)), true
	case nFloat:
		f := v.f()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(dst, "null"...), true
		}
		return appendFloat(dst, f), true
	}
	if !plain(v.s) {
		return dst, false
	}
	dst = append(dst, '"')
	dst = append(dst, v.s...)
	return append(dst, '"'), true
}

// canonical reports whether a member's raw JSON is what AppendJSON writes
// for its decoded value: an integer without leading zeros or a plain
// string (present, not null: those take the general path).
func canonical(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"':
		return len(raw) >= 2 && plain(view(raw[1:len(raw)-1]))
	case c == '-' || (c >= '0' && c <= '9'):
		digits := raw
		if c == '-' {
			digits = raw[1:]
		}
		if len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(digits) > 1) || string(raw) == "-0" {
			return false
		}
		for len(digits) >= 8 && digits8(le64(digits)) {
			digits = digits[8:]
		}
		for _, d := range digits {
			if d < '0' || d > '9' {
				return false
			}
		}
		return true
	}
	return false
}

// plain reports whether s goes into a JSON string as it is (AppendJSON
// escapes anything else): printable ASCII without '"' and '\\'. Eight
// bytes at a time: the strings are long (Nexmark's extra).
func plain(s string) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8] // one bounds check, one load
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		q, b := x^(lo*'"'), x^(lo*'\\')
		bad := (x - lo*0x20) | (x + lo*0x01) | (q-lo)&^q | (b-lo)&^b
		if (bad|x)&hi != 0 { // a byte < 0x20, = 0x7f, >= 0x80, '"' or '\\'
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// plainString is the end of the JSON string at b[i] (its opening quote)
// if plain (see plain) holds for its contents; 0 otherwise, or when it
// does not end in b. It finds the closing quote and checks the bytes
// before it in one pass (stopIndex).
func plainString(b []byte, i int) (int, bool) {
	if j := stopIndex(b, i+1); j < len(b) && b[j] == '"' {
		return j + 1, true
	}
	return 0, false
}

// view is b as a string without copying (b must not change while the
// string is used: record bytes during an evaluation).
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// decodeRaw reads a member's raw JSON as decodeValue would; objects,
// arrays and strings with escapes go to the VM.
func decodeRaw(raw []byte) (nval, bool) {
	if raw == nil {
		return nval{}, true // absent: nil
	}
	switch raw[0] {
	case '"':
		s := raw[1 : len(raw)-1]
		if bytes.IndexByte(s, '\\') >= 0 {
			return nval{}, false
		}
		return nval{k: nStr, s: view(s)}, true
	case 't':
		return boolVal(true), string(raw) == "true"
	case 'f':
		return boolVal(false), string(raw) == "false"
	case 'n':
		return nval{}, string(raw) == "null"
	case '{', '[':
		return nval{}, false
	}
	if i, ok := parseInt(raw); ok {
		return nval{k: nInt, i: i}, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return floatVal(f), err == nil
}

// toInt is the VM's int(): an int as it is, a float truncated, a string
// parsed as a decimal integer.
func toInt(x nexpr) nexpr {
	return func(c *nctx) (nval, bool) {
		v, ok := x(c)
		switch {
		case !ok:
			return nval{}, false
		case v.k == nInt:
			return v, true
		case v.k == nFloat:
			f := v.f()
			if math.IsNaN(f) || f >= 1<<63 || f < -(1<<63) {
				return nval{}, false
			}
			return nval{k: nInt, i: int(f)}, true
		case v.k == nStr:
			i, err := strconv.Atoi(v.s)
			return nval{k: nInt, i: i}, err == nil
		}
		return nval{}, false
	}
}

// minMax is the VM's max (min) of two numbers: the first unless the
// second is greater (smaller); anything else goes to the VM.
func minMax(max bool, l, r nexpr) nexpr {
	op := opGT
	if max {
		op = opLT
	}
	return func(c *nctx) (nval, bool) {
		a, ok := l(c)
		if !ok {
			return nval{}, false
		}
		b, ok := r(c)
		if !ok || !numeric(a) || !numeric(b) {
			return nval{}, false
		}
		less, ok := ordered(op, a, b)
		if less {
			return b, ok
		}
		return a, ok
	}
}

func neg(x nexpr) nexpr {
	return func(c *nctx) (nval, bool) {
		v, ok := x(c)
		switch {
		case !ok:
			return nval{}, false
		case v.k == nInt:
			return nval{k: nInt, i: -v.i}, true
		case v.k == nFloat:
			return floatVal(-v.f()), true
		}
		return nval{}, false
	}
}

// Operators of the comparison and arithmetic nodes.
const (
	opLT = iota
	opLE
	opGT
	opGE
	opAdd
	opSub
	opMul
	opDiv
	opMod
)

func opOf(s string) int {
	return map[string]int{"<": opLT, "<=": opLE, ">": opGT, ">=": opGE, "+": opAdd, "-": opSub, "*": opMul, "/": opDiv, "%": opMod}[s]
}

func arithmetic(op int, l, r nexpr) nexpr {
	return func(c *nctx) (nval, bool) {
		a, ok := l(c)
		if !ok {
			return nval{}, false
		}
		b, ok := r(c)
		if !ok {
			return nval{}, false
		}
		return arith(op, a, b)
	}
}

func numeric(v nval) bool { return v.k == nInt || v.k == nFloat }

func asFloat(v nval) float64 {
	if v.k == nInt {
		return float64(v.i)
	}
	return v.f()
}

// equal is the VM's ==: numbers by value across int and float, nil only
// equal to nil; other mixed types go to the VM.
func equal(l, r nval) (bool, bool) {
	switch {
	case l.k == nNil || r.k == nNil:
		return l.k == r.k, true
	case l.k == nInt && r.k == nInt:
		return l.i == r.i, true
	case numeric(l) && numeric(r):
		return asFloat(l) == asFloat(r), true
	case l.k == nStr && r.k == nStr:
		return l.s == r.s, true
	case l.k == nBool && r.k == nBool:
		return l.i == r.i, true
	}
	return false, false
}

// ordered is the VM's <, <=, >, >= on two numbers or two strings.
func ordered(op int, l, r nval) (bool, bool) {
	var d int
	switch {
	case l.k == nInt && r.k == nInt:
		d = cmpOrdered(l.i, r.i)
	case numeric(l) && numeric(r):
		a, b := asFloat(l), asFloat(r)
		if math.IsNaN(a) || math.IsNaN(b) {
			return false, false
		}
		d = cmpOrdered(a, b)
	case l.k == nStr && r.k == nStr:
		d = strings.Compare(l.s, r.s)
	default:
		return false, false
	}
	switch op {
	case opLT:
		return d < 0, true
	case opLE:
		return d <= 0, true
	case opGT:
		return d > 0, true
	}
	return d >= 0, true
}

func cmpOrdered[T int | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// arith is the VM's arithmetic on numbers: int with int stays int (/
// always gives a float), anything with a float is a float; % takes ints
// and not 0.
func arith(op int, l, r nval) (nval, bool) {
	if !numeric(l) || !numeric(r) {
		return nval{}, false
	}
	if l.k == nInt && r.k == nInt {
		switch op {
		case opAdd:
			return nval{k: nInt, i: l.i + r.i}, true
		case opSub:
			return nval{k: nInt, i: l.i - r.i}, true
		case opMul:
			return nval{k: nInt, i: l.i * r.i}, true
		case opMod:
			if r.i == 0 {
				return nval{}, false
			}
			return nval{k: nInt, i: l.i % r.i}, true
		}
	}
	a, b := asFloat(l), asFloat(r)
	switch op {
	case opAdd:
		return floatVal(a + b), true
	case opSub:
		return floatVal(a - b), true
	case opMul:
		return floatVal(a * b), true
	case opDiv:
		return floatVal(a / b), true
	}
	return nval{}, false
}
