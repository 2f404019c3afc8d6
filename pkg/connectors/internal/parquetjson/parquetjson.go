// Package parquetjson reads the rows of a flat Parquet file as JSON
// objects, one per row, with a member per column: what a source emits as
// records, the inverse of the file sink's format parquet.
//
// Columns map to JSON as: BOOLEAN → true/false; INT32, INT64 (DATE as its
// day number) → an integer; a TIMESTAMP → integer Unix milliseconds
// (micro- and nanoseconds rounded down); FLOAT, DOUBLE → a number (NaN
// and ±Inf → null); STRING, ENUM and un-annotated BYTE_ARRAY → a string;
// JSON → the JSON value embedded as it is; null → null. Nested, repeated,
// DECIMAL, INT96, FIXED_LEN_BYTE_ARRAY and other columns are refused at
// Open, naming the column.
package parquetjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/flinkgo/flinkgo/pkg/runtime/jsonstring"
)

// kind is how a column's values become JSON.
type kind uint8

const (
	kBool kind = iota + 1
	kInt
	kFloat
	kString
	kJSON
	kMillis // an INT64 timestamp in ms
	kMicros
	kNanos
)

type column struct {
	key  []byte // `"name":`
	kind kind
}

// Reader reads one file's rows in order. Not safe for concurrent use.
type Reader struct {
	r    *parquet.Reader
	cols []column
	rows []parquet.Row
	n, i int   // rows[i:n] not returned yet
	pos  int64 // rows returned or skipped
	eof  bool
}

// batch is how many rows are read from the file at once.
const batch = 128

// Open reads the footer of the Parquet file ra of size bytes and returns
// a Reader positioned at row skip (a position Rows returned before).
func Open(ra io.ReaderAt, size, skip int64) (*Reader, error) {
	f, err := parquet.OpenFile(ra, size, parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("not a readable Parquet file: %w", err)
	}
	r := &Reader{rows: make([]parquet.Row, batch), pos: skip}
	for _, fd := range f.Schema().Fields() {
		k, err := kindOf(fd)
		if err != nil {
			return nil, err
		}
		key := jsonstring.Append(nil, fd.Name())
		r.cols = append(r.cols, column{key: append(key, ':'), kind: k})
	}
	if skip > f.NumRows() {
		return nil, fmt.Errorf("the position to resume from is row %d, and the file has %d rows: was it replaced?", skip, f.NumRows())
	}
	r.r = parquet.NewReader(f)
	if skip > 0 {
		if err := r.r.SeekToRow(skip); err != nil {
			return nil, fmt.Errorf("seek to row %d: %w", skip, err)
		}
	}
	return r, nil
}

func kindOf(fd parquet.Field) (kind, error) {
	bad := func(what string) (kind, error) {
		return 0, fmt.Errorf("column %q is %s: only flat files of boolean, integer, float, string, json and timestamp columns are read", fd.Name(), what)
	}
	if !fd.Leaf() {
		return bad("a group (nested)")
	}
	if fd.Repeated() {
		return bad("repeated (a list)")
	}
	t := fd.Type()
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		switch v := lt.Value.(type) {
		case *format.TimestampType:
			switch v.Unit.Value.(type) {
			case *format.MilliSeconds:
				return kMillis, nil
			case *format.MicroSeconds:
				return kMicros, nil
			case *format.NanoSeconds:
				return kNanos, nil
			}
		case *format.StringType, *format.EnumType:
			return kString, nil
		case *format.JsonType:
			return kJSON, nil
		case *format.IntType:
			if v.IsSigned || v.BitWidth < 64 {
				return kInt, nil
			}
		case *format.DateType:
			return kInt, nil
		}
		return bad(lt.String())
	}
	switch t.Kind() {
	case parquet.Boolean:
		return kBool, nil
	case parquet.Int32, parquet.Int64:
		return kInt, nil
	case parquet.Float, parquet.Double:
		return kFloat, nil
	case parquet.ByteArray:
		return kString, nil
	}
	return bad(t.Kind().String())
}

// Rows is the position after the last row Next returned: rows read or
// skipped from the start of the file. Open(…, Rows()) resumes there.
func (r *Reader) Rows() int64 { return r.pos }

// Next appends the next row as a JSON object to dst, or returns io.EOF
// after the last one.
func (r *Reader) Next(dst []byte) ([]byte, error) {
	if r.i == r.n {
		if r.eof {
			return dst, io.EOF
		}
		n, err := r.r.ReadRows(r.rows)
		r.i, r.n = 0, n
		if errors.Is(err, io.EOF) {
			r.eof = true
		} else if err != nil {
			return dst, fmt.Errorf("row %d: %w", r.pos, err)
		}
		if n == 0 {
			return dst, io.EOF
		}
	}
	row := r.rows[r.i]
	r.i++
	r.pos++
	dst = append(dst, '{')
	for c := range r.cols {
		if c > 0 {
			dst = append(dst, ',')
		}
		col := &r.cols[c]
		dst = append(dst, col.key...)
		var v parquet.Value
		if c < len(row) {
			v = row[c]
		}
		dst = appendValue(dst, col.kind, v)
	}
	return append(dst, '}'), nil
}

func appendValue(dst []byte, k kind, v parquet.Value) []byte {
	if v.IsNull() {
		return append(dst, "null"...)
	}
	switch k {
	case kBool:
		return strconv.AppendBool(dst, v.Boolean())
	case kInt:
		return strconv.AppendInt(dst, v.Int64(), 10)
	case kMillis:
		return strconv.AppendInt(dst, v.Int64(), 10)
	case kMicros:
		return strconv.AppendInt(dst, floorDiv(v.Int64(), 1e3), 10)
	case kNanos:
		return strconv.AppendInt(dst, floorDiv(v.Int64(), 1e6), 10)
	case kFloat:
		x := v.Double()
		if v.Kind() == parquet.Float {
			x = float64(v.Float())
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return append(dst, "null"...)
		}
		return strconv.AppendFloat(dst, x, 'g', -1, 64)
	case kJSON:
		if b := v.ByteArray(); json.Valid(b) {
			return append(dst, b...)
		}
		return jsonstring.AppendBytes(dst, v.ByteArray())
	}
	return jsonstring.AppendBytes(dst, v.ByteArray())
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Close releases the reader (the file is the caller's to close).
func (r *Reader) Close() error { return r.r.Close() }
