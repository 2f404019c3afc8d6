package api

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Node is a parsed YAML value that keeps its position. Operator options stay
// Nodes until the operator type that owns them decodes them, so an error in
// an option still names its line and column.
type Node struct {
	n ast.Node
}

// IsZero reports whether the node is absent.
func (n Node) IsZero() bool { return n.n == nil }

// Pos is where the node starts.
func (n Node) Pos() Pos { return nodePos(n.n) }

// Value converts the node to plain Go values (map[string]any, []any, string,
// int64, float64, bool, nil).
func (n Node) Value() any { return plain(n.n) }

// Decoder turns YAML nodes into Go structs, collecting every problem with its
// position instead of stopping at the first.
//
// Struct fields are named by `yaml:"name"` tags; `yaml:"name,required"` makes
// a field mandatory; `yaml:",remain"` on a map[string]Node field collects the
// keys no other field claimed (an operator's type-specific options).
type Decoder struct {
	File   string
	Errors SpecError
	// Positions of every decoded field by path ("operators[2].parallelism"),
	// so later validation can point at the line of a value.
	Positions map[string]Pos
	anchors   map[string]ast.Node
	// What following aliases has added to the document (chargeAlias).
	expanded        int
	expansionFailed bool
	sizes           map[ast.Node]int
}

// NewDecoder returns a decoder whose errors name file.
func NewDecoder(file string) *Decoder {
	return &Decoder{File: file, Positions: map[string]Pos{}, anchors: map[string]ast.Node{}}
}

// ParseYAML parses a single YAML document. A syntax error is recorded on the
// decoder and the zero Node returned, as is a document past the bounds of
// CheckBounds (checked first, before the parser sees it).
func (d *Decoder) ParseYAML(src []byte) Node {
	if !d.CheckBounds(src) {
		return Node{}
	}
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		d.syntaxError(err)
		return Node{}
	}
	// Documents with nothing in them ("---" alone, comments, null) do not
	// count: a leading or trailing separator is not a second job.
	var bodies []ast.Node
	for _, doc := range f.Docs {
		if !emptyNode(doc.Body) {
			bodies = append(bodies, doc.Body)
		}
	}
	if len(bodies) == 0 {
		d.Errorf(Pos{Line: 1, Column: 1}, "", "the file is empty; a job needs at least name and operators")
		return Node{}
	}
	if len(bodies) > 1 {
		d.Errorf(nodePos(bodies[1]), "", "more than one YAML document; put one job per file")
	}
	return Node{n: bodies[0]}
}

// emptyNode reports whether n holds no value: nothing, null or comments,
// possibly under a tag or an anchor.
func emptyNode(n ast.Node) bool {
	for {
		switch t := n.(type) {
		case nil, *ast.NullNode, *ast.CommentGroupNode:
			return true
		case *ast.TagNode:
			n = t.Value
		case *ast.AnchorNode:
			n = t.Value
		default:
			return false
		}
	}
}

func (d *Decoder) syntaxError(err error) {
	// goccy's parse errors carry the offending token; report its position
	// and the bare message instead of its colored source excerpt.
	if te, ok := err.(interface {
		GetToken() *token.Token
		GetMessage() string
	}); ok {
		pos := Pos{}
		if tk := te.GetToken(); tk != nil && tk.Position != nil {
			pos = Pos{Line: tk.Position.Line, Column: tk.Position.Column}
		}
		d.Errorf(pos, "", "YAML syntax error: %s", te.GetMessage())
		return
	}
	d.Errorf(Pos{}, "", "YAML syntax error: %s", strings.SplitN(err.Error(), "\n", 2)[0])
}

// Errorf records a problem at pos.
func (d *Decoder) Errorf(pos Pos, field, format string, args ...any) {
	d.Errors.Errors = append(d.Errors.Errors, FieldError{File: d.File, Pos: pos, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// ErrorAt records a problem at the recorded position of field (or at the
// closest recorded parent).
func (d *Decoder) ErrorAt(field, format string, args ...any) {
	d.Errorf(d.PosOf(field), field, format, args...)
}

// PosOf returns the recorded position of path or of its nearest parent.
func (d *Decoder) PosOf(path string) Pos {
	for p := path; p != ""; p = parentPath(p) {
		if pos, ok := d.Positions[p]; ok {
			return pos
		}
	}
	return Pos{}
}

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i <= 0 {
		return ""
	}
	return p[:i]
}

// Decode fills out (a pointer) from n. Problems are recorded, not returned.
func (d *Decoder) Decode(n Node, path string, out any) {
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		panic("api: Decode needs a non-nil pointer (bug)")
	}
	d.decode(n.n, path, v.Elem())
}

var (
	nodeType     = reflect.TypeOf(Node{})
	durationType = reflect.TypeOf(Duration(0))
	byteSizeType = reflect.TypeOf(ByteSize(0))
)

func (d *Decoder) resolve(n ast.Node) ast.Node {
	var via []string // aliases followed so far: &a *a must not loop forever
	for n != nil {
		switch t := n.(type) {
		case *ast.AnchorNode:
			d.anchors[t.Name.GetToken().Value] = t.Value
			n = t.Value
		case *ast.AliasNode:
			name := t.Value.GetToken().Value
			a, ok := d.anchors[name]
			if !ok {
				d.Errorf(nodePos(n), "", "alias *%s refers to no anchor defined before it", name)
				return nil
			}
			if contains(via, name) {
				d.Errorf(nodePos(n), "", "alias *%s refers to itself", name)
				return nil
			}
			if !d.chargeAlias(n, a) {
				return nil
			}
			via = append(via, name)
			n = a
		case *ast.TagNode:
			n = t.Value
		case *ast.CommentGroupNode:
			return nil
		default:
			return n
		}
	}
	return nil
}

func (d *Decoder) decode(n ast.Node, path string, v reflect.Value) {
	n = d.resolve(n)
	if n == nil {
		return
	}
	if path != "" {
		d.Positions[path] = nodePos(n)
	}
	switch v.Type() {
	case nodeType:
		v.Set(reflect.ValueOf(Node{n: n}))
		return
	case durationType:
		d.decodeDuration(n, path, v)
		return
	case byteSizeType:
		d.decodeByteSize(n, path, v)
		return
	case namedStringsType:
		d.decodeNamedStrings(n, path, v)
		return
	}
	if _, isNull := n.(*ast.NullNode); isNull {
		return // leave the zero value: "key:" with nothing means unset
	}
	switch v.Kind() {
	case reflect.Pointer:
		// Leave a pointer to a scalar nil when its value did not decode, so
		// validation does not report the field again with a zero value.
		before := len(d.Errors.Errors)
		elem := reflect.New(v.Type().Elem())
		d.decode(n, path, elem.Elem())
		if len(d.Errors.Errors) == before || elem.Elem().Kind() == reflect.Struct {
			v.Set(elem)
		}
	case reflect.Struct:
		d.decodeStruct(n, path, v)
	case reflect.Slice:
		d.decodeSlice(n, path, v)
	case reflect.Map:
		d.decodeMap(n, path, v)
	case reflect.String:
		s, ok := scalarString(n)
		if !ok {
			s, ok = hostPort(n)
		}
		if !ok {
			d.typeError(n, path, "a string")
			return
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := n.(*ast.BoolNode)
		if !ok {
			d.typeError(n, path, "true or false")
			return
		}
		v.SetBool(b.Value)
	case reflect.Int, reflect.Int32, reflect.Int64:
		i, ok := intValue(n)
		if !ok {
			d.typeError(n, path, "an integer")
			return
		}
		if v.OverflowInt(i) {
			d.Errorf(nodePos(n), path, "%d is out of range", i)
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		f, ok := floatValue(n)
		if !ok {
			d.typeError(n, path, "a number")
			return
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			d.Errorf(nodePos(n), path, "expected a finite number, got %s", describe(n))
			return
		}
		v.SetFloat(f)
	case reflect.Interface:
		v.Set(reflect.ValueOf(plain(n)))
	default:
		panic(fmt.Sprintf("api: cannot decode into %s (bug)", v.Type()))
	}
}

func (d *Decoder) typeError(n ast.Node, path, want string) {
	d.Errorf(nodePos(n), path, "expected %s, got %s", want, describe(n))
}

func (d *Decoder) decodeStruct(n ast.Node, path string, v reflect.Value) {
	m, ok := n.(*ast.MappingNode)
	if !ok {
		if mv, isMV := n.(*ast.MappingValueNode); isMV {
			m = &ast.MappingNode{Values: []*ast.MappingValueNode{mv}}
		} else {
			d.typeError(n, path, "a mapping")
			return
		}
	}
	fields := structFields(v.Type())
	seen := map[string]bool{}
	var remain reflect.Value
	for _, f := range fields {
		if f.remain {
			remain = v.Field(f.index)
		}
	}
	for _, kv := range m.Values {
		key, _ := scalarString(d.resolve(kv.Key))
		sub := joinPath(path, key)
		if seen[key] {
			d.Errorf(nodePos(kv.Key), sub, "duplicate key")
			continue
		}
		seen[key] = true
		f, ok := findField(fields, key)
		if !ok {
			if remain.IsValid() {
				if remain.IsNil() {
					remain.Set(reflect.MakeMap(remain.Type()))
				}
				d.Positions[sub] = nodePos(kv.Key)
				remain.SetMapIndex(reflect.ValueOf(key), reflect.ValueOf(Node{n: d.resolve(kv.Value)}))
				continue
			}
			d.unknownField(kv.Key, sub, key, fields)
			continue
		}
		d.decode(kv.Value, sub, v.Field(f.index))
		if _, has := d.Positions[sub]; !has {
			d.Positions[sub] = nodePos(kv.Key)
		}
	}
	for _, f := range fields {
		if f.required && !seen[f.name] {
			d.Errorf(nodePos(m), joinPath(path, f.name), "missing required field %q", f.name)
		}
	}
}

// UnknownKey records an unknown key with a suggestion taken from known.
func (d *Decoder) UnknownKey(path, key string, known []string) {
	msg := fmt.Sprintf("unknown field %q", key)
	if s := closest(key, known); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else if len(known) > 0 {
		msg += fmt.Sprintf(" (known fields: %s)", strings.Join(known, ", "))
	}
	d.Errorf(d.PosOf(path), path, "%s", msg)
}

func (d *Decoder) unknownField(keyNode ast.Node, path, key string, fields []fieldInfo, alsoKnown ...string) {
	if keyNode != nil {
		if key == "" { // not a plain scalar: a merge key (<<), a complex or empty key
			d.Errorf(nodePos(keyNode), path, "unsupported key %s: use plain field names", keyNode)
			return
		}
		d.Positions[path] = nodePos(keyNode)
	}
	var known []string
	for _, f := range fields {
		if f.name != "" {
			known = append(known, f.name)
		}
	}
	// A common field wins only when it is strictly closer than every
	// option of the type (format stays format, form becomes from).
	if s, dist := nearest(key, alsoKnown); s != "" {
		if _, own := nearest(key, known); dist < own {
			d.Errorf(d.PosOf(path), path, "unknown field %q; did you mean %q?", key, s)
			return
		}
	}
	d.UnknownKey(path, key, known)
}

func (d *Decoder) decodeSlice(n ast.Node, path string, v reflect.Value) {
	var values []ast.Node
	switch seq := n.(type) {
	case *ast.SequenceNode:
		values = seq.Values
	default:
		items, ok := listItems(n)
		if !ok || (v.Type().Elem().Kind() != reflect.String && v.Type().Elem() != nodeType) {
			d.typeError(n, path, "a list")
			return
		}
		values = items
	}
	s := reflect.MakeSlice(v.Type(), len(values), len(values))
	for i, item := range values {
		sub := fmt.Sprintf("%s[%d]", path, i)
		item = d.resolve(item) // once: an alias error is reported once
		if item == nil {
			continue
		}
		if _, isNull := item.(*ast.NullNode); isNull && s.Index(i).Kind() == reflect.Struct {
			d.typeError(item, sub, "a mapping") // an empty "-" would skip the required fields
			continue
		}
		d.decode(item, sub, s.Index(i))
	}
	v.Set(s)
}

// listItems reads a scalar where a list of scalars is expected as the list
// it abbreviates (SplitList): `from: in` is [in], `brokers:
// a:9092,b:9092` is [a:9092, b:9092], each item at the scalar's position.
// ok false: n is no scalar. The one rule for every list-valued key of a
// spec (operator options included); the daemon's config keys split the
// same way.
func listItems(n ast.Node) ([]ast.Node, bool) {
	str, ok := scalarString(n)
	if !ok {
		return nil, false
	}
	parts := SplitList(str)
	items := make([]ast.Node, len(parts))
	for i, part := range parts {
		tk := *n.GetToken()
		tk.Value = part
		items[i] = ast.String(&tk)
	}
	return items, true
}

// SplitList splits a comma-separated list, trimming spaces and dropping
// empty items: "a:9092, b:9092" is [a:9092 b:9092].
func SplitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// mappingValues are the entries of a mapping node (a one-entry mapping
// parses as its MappingValueNode); false: n is not a mapping.
func mappingValues(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}, true
	}
	return nil, false
}

func (d *Decoder) decodeMap(n ast.Node, path string, v reflect.Value) {
	values, ok := mappingValues(n)
	if !ok {
		d.typeError(n, path, "a mapping")
		return
	}
	if v.Type().Key().Kind() != reflect.String {
		panic("api: map keys must be strings (bug)")
	}
	out := reflect.MakeMapWithSize(v.Type(), len(values))
	for _, kv := range values {
		key, _ := scalarString(d.resolve(kv.Key))
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(kv.Value, joinPath(path, key), elem)
		out.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), elem)
	}
	v.Set(out)
}

func (d *Decoder) decodeDuration(n ast.Node, path string, v reflect.Value) {
	var dur Duration
	var err error
	if i, ok := intValue(n); ok {
		dur, err = durationOfMillis(i) // bare numbers are milliseconds, as in Flink
	} else if s, ok := n.(*ast.StringNode); ok {
		dur, err = ParseDuration(s.Value)
	} else {
		d.typeError(n, path, `a duration such as "500ms", "10s" or "5m"`)
		return
	}
	if err != nil {
		d.Errorf(nodePos(n), path, "%v", err)
		return
	}
	v.SetInt(int64(dur))
}

func (d *Decoder) decodeByteSize(n ast.Node, path string, v reflect.Value) {
	if i, ok := intValue(n); ok {
		if i < 0 {
			d.Errorf(nodePos(n), path, "size %d is negative", i)
			return
		}
		v.SetInt(i)
		return
	}
	s, ok := n.(*ast.StringNode)
	if !ok {
		d.typeError(n, path, `a size in bytes or with a unit such as "128MiB"`)
		return
	}
	b, err := ParseByteSize(s.Value)
	if err != nil {
		d.Errorf(nodePos(n), path, "%v", err)
		return
	}
	v.SetInt(int64(b))
}

type fieldInfo struct {
	name     string
	index    int
	required bool
	remain   bool
}

func structFields(t reflect.Type) []fieldInfo {
	var out []fieldInfo
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("yaml")
		if !ok || tag == "-" || !sf.IsExported() {
			continue
		}
		parts := strings.Split(tag, ",")
		fi := fieldInfo{name: parts[0], index: i}
		for _, opt := range parts[1:] {
			switch opt {
			case "required":
				fi.required = true
			case "remain":
				fi.remain = true
			}
		}
		out = append(out, fi)
	}
	return out
}

func findField(fields []fieldInfo, key string) (fieldInfo, bool) {
	for _, f := range fields {
		if f.name == key && !f.remain {
			return f, true
		}
	}
	return fieldInfo{}, false
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func nodePos(n ast.Node) Pos {
	if n == nil {
		return Pos{}
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return Pos{}
	}
	return Pos{Line: tk.Position.Line, Column: tk.Position.Column}
}

// hostPort reads what YAML parses as a one-pair mapping of scalars as the
// "key:value" text it was written as: in a flow list, [localhost:9092]
// is a list of one mapping to the YAML library, but a host:port to anyone
// who writes it where a string is expected.
func hostPort(n ast.Node) (string, bool) {
	var kv *ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingValueNode:
		kv = m
	case *ast.MappingNode:
		if len(m.Values) != 1 {
			return "", false
		}
		kv = m.Values[0]
	default:
		return "", false
	}
	// Only "a:b" with nothing between the colon and the value: "a: b" is
	// a mapping the user meant.
	colon, val := kv.Start, kv.Value.GetToken()
	if colon == nil || val == nil || colon.Position == nil || val.Position == nil ||
		colon.Position.Line != val.Position.Line || colon.Position.Column+1 != val.Position.Column {
		return "", false
	}
	k, ok := scalarString(kv.Key)
	if !ok {
		return "", false
	}
	v, ok := scalarString(kv.Value)
	if !ok {
		return "", false
	}
	return k + ":" + v, true
}

func scalarString(n ast.Node) (string, bool) {
	switch t := n.(type) {
	case *ast.StringNode:
		return t.Value, true
	case *ast.LiteralNode:
		return t.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		return t.GetToken().Value, true
	}
	return "", false
}

func intValue(n ast.Node) (int64, bool) {
	t, ok := n.(*ast.IntegerNode)
	if !ok {
		return 0, false
	}
	switch x := t.Value.(type) {
	case int64:
		return x, true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

func floatValue(n ast.Node) (float64, bool) {
	switch t := n.(type) {
	case *ast.FloatNode:
		return t.Value, true
	case *ast.IntegerNode:
		i, ok := intValue(t)
		return float64(i), ok
	}
	return 0, false
}

func describe(n ast.Node) string {
	switch t := n.(type) {
	case *ast.StringNode:
		return strconv.Quote(t.Value)
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		return t.GetToken().Value
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode:
		return "null"
	}
	return n.Type().String()
}

func plain(n ast.Node) any {
	switch t := n.(type) {
	case nil, *ast.NullNode:
		return nil
	case *ast.AnchorNode:
		return plain(t.Value)
	case *ast.TagNode:
		return plain(t.Value)
	case *ast.StringNode:
		return t.Value
	case *ast.LiteralNode:
		return t.Value.Value
	case *ast.IntegerNode:
		i, _ := intValue(t)
		return i
	case *ast.FloatNode:
		return t.Value
	case *ast.BoolNode:
		return t.Value
	case *ast.SequenceNode:
		out := make([]any, len(t.Values))
		for i, x := range t.Values {
			out[i] = plain(x)
		}
		return out
	case *ast.MappingValueNode:
		k, _ := scalarString(t.Key)
		return map[string]any{k: plain(t.Value)}
	case *ast.MappingNode:
		out := make(map[string]any, len(t.Values))
		for _, kv := range t.Values {
			k, _ := scalarString(kv.Key)
			out[k] = plain(kv.Value)
		}
		return out
	}
	return n.String()
}

// Closest returns the known name closest to s within a small edit
// distance, or "" (for "did you mean" hints).
func Closest(s string, known []string) string { return closest(s, known) }

// closest returns the known name within edit distance 2 of s, if any.
func closest(s string, known []string) string {
	best, _ := nearest(s, known)
	return best
}

// nearest returns the known name within edit distance 2 of s (case
// ignored) and its distance; "" and 3 when there is none.
func nearest(s string, known []string) (string, int) {
	best, bestD := "", 3
	for _, k := range known {
		if dist := editDistance(strings.ToLower(s), strings.ToLower(k)); dist < bestD {
			best, bestD = k, dist
		}
	}
	return best, bestD
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours cost 1 each, so
// "form" is one step from "from" (and two from "format").
func editDistance(a, b string) int {
	rows := make([][]int, len(a)+1)
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	return rows[len(a)][len(b)]
}

// SortedKeys returns the keys of m in order (for stable error output).
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// DecodeFields fills out (a pointer to a struct with yaml tags) from a set
// of already separated keys, such as an operator's type-specific options;
// keys that match no field are reported as unknown.
func (d *Decoder) DecodeFields(fields map[string]Node, path string, out any) {
	d.DecodeOptions(fields, path, out, nil)
}

// DecodeOptions is DecodeFields whose "did you mean" hints for unknown keys
// also consider alsoKnown (an operator's common fields such as from: a
// misspelled from lands among the type's options).
func (d *Decoder) DecodeOptions(fields map[string]Node, path string, out any, alsoKnown []string) {
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		panic("api: DecodeFields needs a pointer to a struct (bug)")
	}
	v = v.Elem()
	infos := structFields(v.Type())
	var names []string
	for _, f := range infos {
		names = append(names, f.name)
	}
	misspelled := map[string]bool{} // fields an unknown key is one step from
	for _, key := range SortedKeys(fields) {
		sub := joinPath(path, key)
		f, ok := findField(infos, key)
		if !ok {
			d.unknownField(nil, sub, key, infos, alsoKnown...)
			misspelled[closest(key, names)] = true
			continue
		}
		d.decode(fields[key].n, sub, v.Field(f.index))
	}
	for _, f := range infos {
		// "exp: ..." is reported as a misspelled expr, not also as a
		// missing expr.
		if _, set := fields[f.name]; f.required && !set && !misspelled[f.name] {
			d.Errorf(d.PosOf(path), joinPath(path, f.name), "missing required field %q", f.name)
		}
	}
}
