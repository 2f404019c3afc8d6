package state

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// Int64Codec encodes int64 values as varints.
type Int64Codec struct{}

func (Int64Codec) Append(dst []byte, v int64) []byte { return binary.AppendVarint(dst, v) }

func (Int64Codec) Decode(b []byte) (int64, error) {
	v, n := binary.Varint(b)
	if n <= 0 || n != len(b) {
		return 0, fmt.Errorf("bad int64 value (%d bytes)", len(b))
	}
	return v, nil
}

// BytesCodec stores byte slices as they are (copied on decode).
type BytesCodec struct{}

func (BytesCodec) Append(dst []byte, v []byte) []byte { return append(dst, v...) }

func (BytesCodec) Decode(b []byte) ([]byte, error) { return append([]byte(nil), b...), nil }

// StringCodec stores strings as they are.
type StringCodec struct{}

func (StringCodec) Append(dst []byte, v string) []byte { return append(dst, v...) }

func (StringCodec) Decode(b []byte) (string, error) { return string(b), nil }

// Float64Codec stores float64 values as 8 bytes, little endian.
type Float64Codec struct{}

func (Float64Codec) Append(dst []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
}

func (Float64Codec) Decode(b []byte) (float64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("bad float64 value (%d bytes)", len(b))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

// JSONCodec stores values of any JSON-encodable type as JSON text: slower
// than a binary codec, but readable and tolerant of added fields.
type JSONCodec[T any] struct{}

func (JSONCodec[T]) Append(dst []byte, v T) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("state: JSONCodec cannot encode %T: %v (bug: use a type encoding/json accepts)", v, err))
	}
	return append(dst, b...)
}

func (JSONCodec[T]) Decode(b []byte) (T, error) {
	var v T
	err := json.Unmarshal(b, &v)
	return v, err
}
