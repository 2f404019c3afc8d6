package state

import (
	"encoding/binary"
	"errors"
)

// encoder appends the primitives of the state file format. Output is cut
// into chunks of about chunkSize bytes, so encoding hundreds of megabytes
// never copies a growing buffer; chunks is nil for small outputs.
type encoder struct {
	buf     []byte
	scratch []byte
	chunks  [][]byte
	cut     bool // cut into chunks (the top-level encoder only)
}

const chunkSize = 1 << 20

// maybeCut starts a new chunk once the current one is full.
func (e *encoder) maybeCut() {
	if e.cut && len(e.buf) >= chunkSize {
		e.chunks = append(e.chunks, e.buf)
		e.buf = make([]byte, 0, chunkSize+chunkSize/8)
	}
}

func (e *encoder) uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }

func (e *encoder) varint(v int64) { e.buf = binary.AppendVarint(e.buf, v) }

func (e *encoder) bytes(b []byte) {
	e.uvarint(uint64(len(b)))
	e.buf = append(e.buf, b...)
}

func (e *encoder) str(s string) {
	e.uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// lenPrefixed appends what fn appends, prefixed by its length.
func (e *encoder) lenPrefixed(fn func([]byte) []byte) {
	e.scratch = fn(e.scratch[:0])
	e.bytes(e.scratch)
	e.maybeCut()
}

var errTruncated = errors.New("truncated")

// decoder reads the primitives; the first error sticks.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.err = errTruncated
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.err = errTruncated
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// bytes returns a length-prefixed slice pointing into the buffer.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.buf)) {
		d.err = errTruncated
		return nil
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.buf) == 0 {
		d.err = errTruncated
		return 0
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	return b
}
