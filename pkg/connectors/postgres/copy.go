package postgres

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"

	"github.com/jackc/pgx/v5/pgtype"
)

// The append modes send rows with COPY … FROM STDIN BINARY, encoded here
// as each record is processed: the common column types directly, the
// others through pgx's encode plan for the converted value, cached per
// column and Go type. pgx's own CopyFrom looks up a plan for every value;
// this halves the sink's encoding cost (BenchmarkSinkVsCopy).

// copyHeader starts a binary COPY stream: signature, flags, extension
// length.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// fieldEncoder appends one field (int32 length and bytes, or -1 for NULL)
// for a converted value.
type fieldEncoder func(dst []byte, v any) ([]byte, error)

func appendNull(dst []byte) []byte { return binary.BigEndian.AppendUint32(dst, math.MaxUint32) }

func encoderFor(m *pgtype.Map, oid uint32) fieldEncoder {
	switch oid {
	case oidInt8:
		return func(dst []byte, v any) ([]byte, error) {
			if v == nil {
				return appendNull(dst), nil
			}
			dst = binary.BigEndian.AppendUint32(dst, 8)
			return binary.BigEndian.AppendUint64(dst, uint64(v.(int64))), nil
		}
	case oidInt4, oidInt2:
		size, lo, hi := int64(4), int64(math.MinInt32), int64(math.MaxInt32)
		if oid == oidInt2 {
			size, lo, hi = 2, math.MinInt16, math.MaxInt16
		}
		return func(dst []byte, v any) ([]byte, error) {
			if v == nil {
				return appendNull(dst), nil
			}
			x := v.(int64)
			if x < lo || x > hi {
				return dst, fmt.Errorf("%d is out of range for a %d-byte integer", x, size)
			}
			dst = binary.BigEndian.AppendUint32(dst, uint32(size))
			if size == 2 {
				return binary.BigEndian.AppendUint16(dst, uint16(x)), nil
			}
			return binary.BigEndian.AppendUint32(dst, uint32(x)), nil
		}
	case oidFloat8, oidFloat4:
		return func(dst []byte, v any) ([]byte, error) {
			if v == nil {
				return appendNull(dst), nil
			}
			if oid == oidFloat4 {
				dst = binary.BigEndian.AppendUint32(dst, 4)
				return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(v.(float64)))), nil
			}
			dst = binary.BigEndian.AppendUint32(dst, 8)
			return binary.BigEndian.AppendUint64(dst, math.Float64bits(v.(float64))), nil
		}
	case oidText, oidVarchar, oidBPChar, oidName, oidJSON, oidJSONB:
		jsonb := oid == oidJSONB
		return func(dst []byte, v any) ([]byte, error) {
			var s string
			switch x := v.(type) {
			case nil:
				return appendNull(dst), nil
			case string:
				s = x
			case json.RawMessage:
				s = string(x)
			}
			n := len(s)
			if jsonb {
				n++
			}
			dst = binary.BigEndian.AppendUint32(dst, uint32(n))
			if jsonb {
				dst = append(dst, 1) // jsonb's binary format version
			}
			return append(dst, s...), nil
		}
	}
	plans := map[reflect.Type]pgtype.EncodePlan{}
	return func(dst []byte, v any) ([]byte, error) {
		if v == nil {
			return appendNull(dst), nil
		}
		t := reflect.TypeOf(v)
		plan, ok := plans[t]
		if !ok {
			if plan = m.PlanEncode(oid, pgtype.BinaryFormatCode, v); plan == nil {
				return dst, fmt.Errorf("cannot encode %T for this column in binary", v)
			}
			plans[t] = plan
		}
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		out, err := plan.Encode(v, dst)
		if err != nil {
			return dst[:at], err
		}
		if out == nil {
			return appendNull(dst[:at]), nil
		}
		binary.BigEndian.PutUint32(out[at:], uint32(len(out)-at-4))
		return out, nil
	}
}
