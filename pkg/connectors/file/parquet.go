package file

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// format: parquet (docs/formats.md). A bulk format: a part file is one
// Parquet file whose footer is written when the part is rolled, so a part
// cannot be resumed after a restore. The writer therefore rolls every
// parquet part at every checkpoint (Flink's bulk formats do the same): a
// snapshot never holds an in-progress parquet part, only pending ones,
// whose files are complete. Whatever a crashed attempt wrote after the
// barrier is in hidden files no snapshot refers to, which the restore
// deletes; the restored job writes those records again from the replay.

// colKind is the type of a parquet column.
type colKind uint8

const (
	colInt64 colKind = iota + 1
	colInt32
	colDouble
	colBool
	colString
	colTimestamp // INT64, TIMESTAMP(MILLIS, UTC)
	colJSON      // a string holding the member's JSON text
)

var colKindNames = map[colKind]string{colInt64: "int64", colInt32: "int32", colDouble: "double",
	colBool: "boolean", colString: "string", colTimestamp: "timestamp(ms)", colJSON: "json"}

func (k colKind) String() string { return colKindNames[k] }

// columnTypes are the accepted spellings of each column type.
var columnTypes = map[string]colKind{
	"int64": colInt64, "bigint": colInt64, "long": colInt64,
	"int32": colInt32, "integer": colInt32,
	"double": colDouble, "float64": colDouble,
	"boolean": colBool, "bool": colBool,
	"string": colString, "varchar": colString,
	"timestamp": colTimestamp, "timestamp(ms)": colTimestamp,
	"json": colJSON,
}

// columnTypeList is the message's list of column types.
const columnTypeList = "int64 (bigint), int32, double, boolean, string, timestamp(ms), json"

// column is one column of a parquet part: a top-level member of the
// record's JSON object.
type column struct {
	name     string
	kind     colKind
	nullable bool
}

// columnSpec is a column as written in the spec (columns:).
type columnSpec struct {
	Name     string `yaml:"name,required"`
	Type     string `yaml:"type,required"`
	Nullable bool   `yaml:"nullable"`
}

// parseColumnType reads a column type, with a hint for near misses.
func parseColumnType(t string) (colKind, string) {
	s := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(t), " ", ""))
	if k, ok := columnTypes[s]; ok {
		return k, ""
	}
	hint := ""
	switch s {
	case "int":
		hint = "; write int64 (bigint) or int32"
	case "float", "number", "float32", "real":
		hint = "; write double (a 64-bit float)"
	case "text", "str":
		hint = "; write string"
	case "list", "map", "any", "object", "array":
		hint = "; write json (the member's JSON text in a string column)"
	}
	if strings.HasPrefix(s, "timestamp(") {
		hint = "; only millisecond timestamps are written: timestamp(ms)"
	}
	return 0, fmt.Sprintf("unknown column type %q (types: %s)%s", t, columnTypeList, hint)
}

// checkColumnName returns what is wrong with a column name.
func checkColumnName(n string) string {
	switch {
	case strings.TrimSpace(n) == "":
		return "must not be empty"
	case strings.ContainsAny(n, ",\x00"):
		return "must not contain ',' or NUL (Parquet tools read the name as a list)"
	case strings.Contains(n, "."):
		return "must not contain '.' (Parquet readers read it as a nested column path)"
	}
	return ""
}

// columnsFromSchema are the columns of a source's schema: by name, every
// one nullable (a record may lack a declared field or hold null there);
// list, map and any become json columns.
func columnsFromSchema(s *api.Schema) []column {
	var cols []column
	for _, name := range s.Names() {
		k := colJSON
		switch s.Fields[name] {
		case api.FieldString:
			k = colString
		case api.FieldInt:
			k = colInt64
		case api.FieldFloat:
			k = colDouble
		case api.FieldBool:
			k = colBool
		}
		cols = append(cols, column{name: name, kind: k, nullable: true})
	}
	return cols
}

// codecs are the compression option's values.
var codecs = map[string]compress.Codec{"snappy": &parquet.Snappy, "zstd": &parquet.Zstd, "gzip": &parquet.Gzip,
	"none": &parquet.Uncompressed, "uncompressed": &parquet.Uncompressed}

// bulkFormat is the validated parquet format of a sink, shared read-only
// by its subtasks.
type bulkFormat struct {
	cols   []column
	index  map[string]int
	schema *parquet.Schema
	codec  compress.Codec
}

func newBulkFormat(cols []column, codec compress.Codec) *bulkFormat {
	f := &bulkFormat{cols: cols, index: make(map[string]int, len(cols)), codec: codec}
	g := make(orderedGroup, len(cols))
	for i, c := range cols {
		f.index[c.name] = i
		var n parquet.Node
		switch c.kind {
		case colInt64:
			n = parquet.Int(64)
		case colInt32:
			n = parquet.Int(32)
		case colDouble:
			n = parquet.Leaf(parquet.DoubleType)
		case colBool:
			n = parquet.Leaf(parquet.BooleanType)
		case colString, colJSON:
			// json too: a STRING column holding the JSON text, which
			// every reader shows as text (the JSON logical type reads as
			// binary in Arrow and pandas).
			n = parquet.String()
		case colTimestamp:
			n = parquet.Timestamp(parquet.Millisecond)
		}
		if c.nullable {
			n = parquet.Optional(n)
		}
		g[i] = &namedField{Node: n, name: c.name}
	}
	f.schema = parquet.NewSchema("record", g)
	return f
}

// orderedGroup is a parquet group whose columns keep the declared order
// (parquet.Group, a map, sorts them by name).
type orderedGroup []parquet.Field

func (g orderedGroup) ID() int                     { return 0 }
func (g orderedGroup) String() string              { return parquet.Group(g.asGroup()).String() }
func (g orderedGroup) Type() parquet.Type          { return parquet.Group{}.Type() }
func (g orderedGroup) Optional() bool              { return false }
func (g orderedGroup) Repeated() bool              { return false }
func (g orderedGroup) Required() bool              { return true }
func (g orderedGroup) Leaf() bool                  { return false }
func (g orderedGroup) Fields() []parquet.Field     { return g }
func (g orderedGroup) Encoding() encoding.Encoding { return nil }
func (g orderedGroup) Compression() compress.Codec { return nil }
func (g orderedGroup) GoType() reflect.Type        { return g.asGroup().GoType() }
func (g orderedGroup) asGroup() parquet.Group {
	m := parquet.Group{}
	for _, f := range g {
		m[f.Name()] = f
	}
	return m
}

// namedField is a column of an orderedGroup. Rows are built as
// parquet.Row values, never from Go values, so Value is not used.
type namedField struct {
	parquet.Node
	name string
}

func (f *namedField) Name() string                      { return f.name }
func (f *namedField) Value(reflect.Value) reflect.Value { return reflect.Value{} }

// rowGroupBytes bounds a row group's buffered (uncompressed) size: the
// row group is written out when it reaches it, which bounds a part's
// memory whatever its number of rows.
const rowGroupBytes = 32 << 20

// batchRows is how many rows a part collects before handing them to the
// parquet writer at once (column by column: much cheaper than row by row).
const batchRows = 128

// bulkPart is the parquet side of an open part file. Rows are collected
// in batch first, and those refer to the bytes of the records they came
// from: flushRows must run before those records change (the sink calls
// writer.FlushRows at the end of each Process; rolling flushes too).
type bulkPart struct {
	pw    *parquet.Writer
	out   countingWriter
	rows  int64         // rows handed to pw
	batch []parquet.Row // rows not yet handed to pw: batch[:n]
	n     int
	size  int64 // the size estimate at the last flushRows
}

// countingWriter counts the bytes the parquet writer hands to the part's
// buffer: after the footer, the part file's size.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// newBulkPart starts a parquet file writing to w (reusing a pooled
// parquet writer, whose column buffers are the costly part).
func (f *bulkFormat) newBulkPart(w io.Writer, pool *[]*parquet.Writer) *bulkPart {
	b := &bulkPart{out: countingWriter{w: w}}
	if n := len(*pool); n > 0 {
		b.pw = (*pool)[n-1]
		*pool = (*pool)[:n-1]
		b.pw.Reset(&b.out)
		return b
	}
	b.pw = parquet.NewWriter(&b.out, f.schema, parquet.Compression(f.codec),
		parquet.CreatedBy("flinkgo", "", ""))
	return b
}

// add appends a copy of row (whose values may still refer to the
// record's bytes) to the batch, handing the batch to the writer when it
// is full. size is the part's size estimate: bytes written plus the
// buffered row group, uncompressed, as of the last hand-over.
func (b *bulkPart) add(row parquet.Row) (size int64, err error) {
	if b.n == len(b.batch) {
		b.batch = append(b.batch, make(parquet.Row, len(row)))
	}
	b.batch[b.n] = append(b.batch[b.n][:0], row...)
	b.n++
	if b.n == batchRows {
		return b.flushRows()
	}
	return b.size, nil
}

// flushRows hands the batch to the parquet writer, which copies the
// values into its column buffers, and writes the row group out when it
// reached rowGroupBytes.
func (b *bulkPart) flushRows() (size int64, err error) {
	if b.n == 0 {
		return b.size, nil
	}
	n, err := b.pw.WriteRows(b.batch[:b.n])
	b.rows += int64(n)
	b.n = 0
	if err != nil {
		return b.size, err
	}
	b.size = b.pw.Size()
	if b.size-b.out.n >= rowGroupBytes {
		if err := b.pw.Flush(); err != nil {
			return b.size, err
		}
		b.size = b.pw.Size()
	}
	return b.size, nil
}

// finish writes the last rows, row group and the footer; the file then
// has out.n bytes. A part without rows is left without a byte (removed).
func (b *bulkPart) finish() error {
	if _, err := b.flushRows(); err != nil {
		return err
	}
	if b.rows == 0 {
		return nil
	}
	return b.pw.Close()
}

// rowEncoder turns a record's JSON object into a parquet row. Not safe
// for concurrent use; one per writer.
type rowEncoder struct {
	f   *bulkFormat
	row parquet.Row
	set []bool
}

func newRowEncoder(f *bulkFormat) *rowEncoder {
	return &rowEncoder{f: f, row: make(parquet.Row, len(f.cols)), set: make([]bool, len(f.cols))}
}

var errNotObject = errors.New("the record is not a JSON object: format parquet writes the members of a JSON object as columns")

// encode returns the row of v, which refers to v's bytes: write it before
// v changes. A record that does not fit is a *recordError.
func (e *rowEncoder) encode(v []byte) (parquet.Row, error) {
	if !json.Valid(v) {
		return nil, &recordError{errors.New("the record is not valid JSON: format parquet writes the members of a JSON object as columns")}
	}
	clear(e.set)
	i := skipWS(v, 0)
	if i >= len(v) || v[i] != '{' {
		return nil, &recordError{errNotObject}
	}
	i = skipWS(v, i+1)
	for i < len(v) && v[i] != '}' {
		// A member: "key": value, then ',' or '}'. v is valid JSON.
		keyEnd := stringEnd(v, i)
		key := v[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = unquote(v[i:keyEnd])
		}
		i = skipWS(v, keyEnd)
		i = skipWS(v, i+1) // ':'
		end := valueEnd(v, i)
		if c, ok := e.f.index[string(key)]; ok {
			if err := e.value(c, v[i:end]); err != nil {
				return nil, &recordError{err}
			}
			e.set[c] = true
		}
		i = skipWS(v, end)
		if i < len(v) && v[i] == ',' {
			i = skipWS(v, i+1)
		}
	}
	for c, ok := range e.set {
		if ok {
			continue
		}
		col := &e.f.cols[c]
		if !col.nullable {
			return nil, &recordError{fmt.Errorf("the record has no member %q, and column %q (%s) is not nullable", col.name, col.name, col.kind)}
		}
		e.row[c] = parquet.NullValue().Level(0, 0, c)
	}
	return e.row, nil
}

// value sets column c from the JSON value tok.
func (e *rowEncoder) value(c int, tok []byte) error {
	col := &e.f.cols[c]
	def := 0
	if col.nullable {
		def = 1
	}
	if tok[0] == 'n' { // null
		if !col.nullable {
			return fmt.Errorf("column %q (%s) is not nullable and the record has null there", col.name, col.kind)
		}
		e.row[c] = parquet.NullValue().Level(0, 0, c)
		return nil
	}
	wrong := func() error {
		return fmt.Errorf("column %q is %s and the record has a JSON %s there (%s)", col.name, col.kind, jsonKind(tok), excerptTok(tok))
	}
	var val parquet.Value
	switch col.kind {
	case colInt64, colInt32:
		if !isNumber(tok) {
			return wrong()
		}
		n, ok := parseInteger(tok)
		if !ok {
			return fmt.Errorf("column %q is %s and %s is not an integer in its range", col.name, col.kind, excerptTok(tok))
		}
		if col.kind == colInt32 {
			if n < math.MinInt32 || n > math.MaxInt32 {
				return fmt.Errorf("column %q is int32 and %s is out of its range", col.name, excerptTok(tok))
			}
			val = parquet.Int32Value(int32(n))
		} else {
			val = parquet.Int64Value(n)
		}
	case colDouble:
		if !isNumber(tok) {
			return wrong()
		}
		x, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(tok), len(tok)), 64)
		if err != nil {
			return fmt.Errorf("column %q is double and %s is beyond a 64-bit float", col.name, excerptTok(tok))
		}
		val = parquet.DoubleValue(x)
	case colBool:
		switch tok[0] {
		case 't':
			val = parquet.BooleanValue(true)
		case 'f':
			val = parquet.BooleanValue(false)
		default:
			return wrong()
		}
	case colString:
		if tok[0] != '"' {
			return wrong()
		}
		s := tok[1 : len(tok)-1]
		if bytes.IndexByte(s, '\\') >= 0 {
			s = unquote(tok)
		}
		val = parquet.ByteArrayValue(s)
	case colJSON:
		val = parquet.ByteArrayValue(tok)
	case colTimestamp:
		ms, err := timestampMillis(tok)
		if err != nil {
			return fmt.Errorf("column %q is timestamp(ms): %v", col.name, err)
		}
		val = parquet.Int64Value(ms)
	}
	e.row[c] = val.Level(0, def, c)
	return nil
}

// timestampMillis reads a timestamp: an integer of Unix milliseconds or
// an RFC 3339 string.
func timestampMillis(tok []byte) (int64, error) {
	switch {
	case isNumber(tok):
		if n, ok := parseInteger(tok); ok {
			return n, nil
		}
		return 0, fmt.Errorf("%s is not an integer of milliseconds since the epoch", excerptTok(tok))
	case tok[0] == '"':
		var s string
		_ = json.Unmarshal(tok, &s)
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0, fmt.Errorf("%s is not an RFC 3339 time such as \"2024-05-01T12:00:00Z\" (nor a number of milliseconds)", excerptTok(tok))
		}
		return t.UnixMilli(), nil
	}
	return 0, fmt.Errorf("the record has a JSON %s there (%s): write milliseconds since the epoch or an RFC 3339 string", jsonKind(tok), excerptTok(tok))
}

// unquote decodes the JSON string tok (valid JSON), which has escapes.
func unquote(tok []byte) []byte {
	var u string
	_ = json.Unmarshal(tok, &u) // valid JSON: cannot fail
	return []byte(u)
}

func isNumber(tok []byte) bool { return tok[0] == '-' || tok[0] >= '0' && tok[0] <= '9' }

// parseInteger reads a JSON number that is an integer in int64's range:
// digits, or a float form with an integral value (1e3, 2.0).
func parseInteger(tok []byte) (int64, bool) {
	neg := tok[0] == '-'
	d := tok
	if neg {
		d = d[1:]
	}
	if len(d) > 0 && len(d) <= 18 {
		var n int64
		ok := true
		for _, c := range d {
			if c < '0' || c > '9' {
				ok = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if ok {
			if neg {
				n = -n
			}
			return n, true
		}
	}
	s := unsafe.String(unsafe.SliceData(tok), len(tok))
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x != math.Trunc(x) || x < -(1<<63) || x >= 1<<63 {
		return 0, false
	}
	return int64(x), true
}

func jsonKind(tok []byte) string {
	switch tok[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func excerptTok(tok []byte) string {
	if len(tok) > 40 {
		return string(tok[:37]) + "..."
	}
	return string(tok)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the JSON string starting at b[i]
// (valid JSON).
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd returns the index after the JSON value starting at b[i]
// (valid JSON).
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\t' && b[j] != '\r' {
		j++
	}
	return j
}
