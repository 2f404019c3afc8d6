package state

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Items of operator state (a source's position, a sink's committable) are
// opaque bytes to the engine: each connector defines its own. Encoder and
// Decoder give them one shape, so that every connector versions its format
// and reports damage alike: a format version byte first, then varints and
// length-prefixed bytes. A decoder refuses an unknown version, keeps the
// first error, and rejects trailing bytes.

// ErrCorrupt marks an item that cannot be decoded: truncated, with trailing
// bytes, or with a value out of range. The snapshot holding it is damaged.
var ErrCorrupt = errors.New("corrupt state")

// Encoder builds one item.
type Encoder struct{ b []byte }

// NewEncoder starts an item of format version (1 to 255).
func NewEncoder(version byte) *Encoder {
	if version == 0 {
		panic("state: format version 0 is reserved (bug)")
	}
	return &Encoder{b: []byte{version}}
}

// AppendEncoder starts an item of format version at the end of dst (for a
// Codec's Append: no copy of the item).
func AppendEncoder(dst []byte, version byte) Encoder {
	if version == 0 {
		panic("state: format version 0 is reserved (bug)")
	}
	return Encoder{b: append(dst, version)}
}

// Uvarint appends v.
func (e *Encoder) Uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

// Varint appends v.
func (e *Encoder) Varint(v int64) { e.b = binary.AppendVarint(e.b, v) }

// Byte appends one byte (a kind tag, a small enum).
func (e *Encoder) Byte(v byte) { e.b = append(e.b, v) }

// Bool appends v as one byte.
func (e *Encoder) Bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// Bytes appends p, prefixed by its length.
func (e *Encoder) Bytes(p []byte) {
	e.Uvarint(uint64(len(p)))
	e.b = append(e.b, p...)
}

// String appends s, prefixed by its length.
func (e *Encoder) String(s string) {
	e.Uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}

// Encoded returns the item.
func (e *Encoder) Encoded() []byte { return e.b }

// Decoder reads one item. Reads after the first error return zero values;
// Finish reports the error.
type Decoder struct {
	what    string
	b       []byte
	version byte
	err     error
}

// NewDecoder starts reading item b of a format whose versions are 1 to
// maxVersion; what names it in errors ("kafka source position").
func NewDecoder(what string, b []byte, maxVersion byte) *Decoder {
	d := &Decoder{what: what}
	switch {
	case len(b) == 0:
		d.corrupt("empty item")
	case b[0] == 0 || b[0] > maxVersion:
		d.err = fmt.Errorf("%s: format version %d is not one this flinkgo reads (1 to %d): the snapshot was written by a newer flinkgo, or is damaged", what, b[0], maxVersion)
	default:
		d.version, d.b = b[0], b[1:]
	}
	return d
}

// Version is the item's format version (0 after an error).
func (d *Decoder) Version() byte { return d.version }

func (d *Decoder) corrupt(detail string) {
	if d.err == nil {
		d.err = Corrupt(d.what, detail)
	}
}

// Corrupt is the error for item what, damaged as detail says: the error a
// Decoder reports, for the read paths of formats older than Decoder (items
// without a version byte, kept to restore old snapshots).
func Corrupt(what, detail string) error {
	return fmt.Errorf("%s: %w (%s): the snapshot is damaged", what, ErrCorrupt, detail)
}

// Fail records a problem the caller found in a decoded value (out of range,
// unknown tag); the first error sticks.
func (d *Decoder) Fail(format string, args ...any) { d.corrupt(fmt.Sprintf(format, args...)) }

// Uvarint reads a uvarint.
func (d *Decoder) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.corrupt("truncated number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Varint reads a varint.
func (d *Decoder) Varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.corrupt("truncated number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Int reads a varint that must fit an int between lo and hi.
func (d *Decoder) Int(lo, hi int) int {
	v := d.Varint()
	if d.err == nil && (v < int64(lo) || v > int64(hi)) {
		d.corrupt(fmt.Sprintf("value %d outside %d..%d", v, lo, hi))
		return 0
	}
	return int(v)
}

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.corrupt("truncated")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// Bool reads a bool written by Encoder.Bool.
func (d *Decoder) Bool() bool {
	switch d.Byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.corrupt("not a bool")
	return false
}

// Bytes reads a length-prefixed byte string. The result points into the
// item: copy it to keep it beyond the restore.
func (d *Decoder) Bytes() []byte {
	n := d.Uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.corrupt("truncated bytes")
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

// String reads a length-prefixed string.
func (d *Decoder) String() string { return string(d.Bytes()) }

// Rest reads everything left: for formats whose last field runs to the end
// of the item (new formats should use Bytes).
func (d *Decoder) Rest() []byte {
	if d.err != nil {
		return nil
	}
	p := d.b
	d.b = nil
	return p
}

// Err returns the first error so far (loops over a decoded count stop on
// it).
func (d *Decoder) Err() error { return d.err }

// Finish returns the first error, or ErrCorrupt when bytes are left over.
func (d *Decoder) Finish() error {
	if d.err == nil && len(d.b) != 0 {
		d.corrupt(fmt.Sprintf("%d unexpected trailing bytes", len(d.b)))
	}
	return d.err
}
