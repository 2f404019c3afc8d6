package postgrescdc

import (
	"strconv"

	"github.com/jackc/pglogrepl"

	"github.com/flinkgo/flinkgo/pkg/runtime/jsonstring"
)

// Type OIDs with a JSON form other than a string.
const (
	oidBool    = 16
	oidInt8    = 20
	oidInt2    = 21
	oidInt4    = 23
	oidOID     = 26
	oidJSON    = 114
	oidFloat4  = 700
	oidFloat8  = 701
	oidNumeric = 1700
	oidJSONB   = 3802
)

// unavailable stands for an unchanged TOASTed value, which pgoutput does
// not send (Debezium's placeholder, so consumers that know it skip it).
const unavailable = "__debezium_unavailable_value"

// column is a column of a table: its name and type.
type column struct {
	name string
	oid  uint32
}

// relation is a table as the source decodes it.
type relation struct {
	table tableName
	cols  []column
	key   []int // the primary key's columns (indexes into cols); empty: none
}

// appendValue appends the JSON form of a value in PostgreSQL's text
// format: integers and finite floats and numerics as numbers, booleans as
// booleans, json and jsonb as they are, everything else as a string of its
// text. The snapshot reads columns as ::text, so both phases agree.
func appendValue(dst []byte, oid uint32, text []byte) []byte {
	switch oid {
	case oidBool:
		if len(text) > 0 && text[0] == 't' { // t (pgoutput) or true (::text)
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case oidInt2, oidInt4, oidInt8, oidOID:
		return append(dst, text...)
	case oidFloat4, oidFloat8, oidNumeric:
		if _, err := strconv.ParseFloat(string(text), 64); err == nil && isFinite(text) {
			return append(dst, text...)
		}
	case oidJSON, oidJSONB:
		return append(dst, text...)
	}
	return jsonstring.AppendBytes(dst, text)
}

// isFinite: not NaN or ±Infinity (which JSON has no number for).
func isFinite(text []byte) bool {
	for _, c := range text {
		if c == 'N' || c == 'n' || c == 'I' || c == 'i' {
			return false
		}
	}
	return true
}

// appendTuple appends a row as a JSON object of its columns.
func appendTuple(dst []byte, rel *relation, t *pglogrepl.TupleData) []byte {
	if t == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '{')
	for i, c := range t.Columns {
		if i >= len(rel.cols) {
			break
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonstring.Append(dst, rel.cols[i].name)
		dst = append(dst, ':')
		switch c.DataType {
		case pglogrepl.TupleDataTypeText:
			dst = appendValue(dst, rel.cols[i].oid, c.Data)
		case pglogrepl.TupleDataTypeToast:
			dst = jsonstring.Append(dst, unavailable)
		default: // null, or binary (never asked for)
			dst = append(dst, "null"...)
		}
	}
	return append(dst, '}')
}

// appendKey appends the primary key's columns of a row as a JSON object
// (Debezium's key), or null for a table without one.
func appendKey(dst []byte, rel *relation, t *pglogrepl.TupleData) []byte {
	if len(rel.key) == 0 || t == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '{')
	for n, i := range rel.key {
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = jsonstring.Append(dst, rel.cols[i].name)
		dst = append(dst, ':')
		if i < len(t.Columns) && t.Columns[i].DataType == pglogrepl.TupleDataTypeText {
			dst = appendValue(dst, rel.cols[i].oid, t.Columns[i].Data)
		} else {
			dst = append(dst, "null"...)
		}
	}
	return append(dst, '}')
}

// change is one change to emit.
type change struct {
	op            byte // c, u, d, r
	rel           *relation
	before, after *pglogrepl.TupleData
	lsn           pglogrepl.LSN
	xid           uint32
	commitMs      int64
	db            string
}

// appendEnvelope appends the change in Debezium's JSON envelope.
func appendEnvelope(dst []byte, c *change, nowMs int64) []byte {
	dst = append(dst, `{"before":`...)
	dst = appendTuple(dst, c.rel, c.before)
	dst = append(dst, `,"after":`...)
	dst = appendTuple(dst, c.rel, c.after)
	dst = append(dst, `,"source":{"connector":"postgresql","db":`...)
	dst = jsonstring.Append(dst, c.db)
	dst = append(dst, `,"schema":`...)
	dst = jsonstring.Append(dst, c.rel.table.schema)
	dst = append(dst, `,"table":`...)
	dst = jsonstring.Append(dst, c.rel.table.name)
	dst = append(dst, `,"lsn":`...)
	dst = strconv.AppendUint(dst, uint64(c.lsn), 10)
	if c.op == 'r' {
		dst = append(dst, `,"txId":null,"snapshot":"true"`...)
	} else {
		dst = append(dst, `,"txId":`...)
		dst = strconv.AppendUint(dst, uint64(c.xid), 10)
		dst = append(dst, `,"snapshot":"false"`...)
	}
	dst = append(dst, `,"ts_ms":`...)
	dst = strconv.AppendInt(dst, c.commitMs, 10)
	dst = append(dst, `},"op":"`...)
	dst = append(dst, c.op)
	dst = append(dst, `","ts_ms":`...)
	dst = strconv.AppendInt(dst, nowMs, 10)
	return append(dst, '}')
}
