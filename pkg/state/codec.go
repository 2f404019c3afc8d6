package state

import (
	"encoding/binary"
	"fmt"
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
