package transform

import (
	"encoding/binary"

	"github.com/flinkgo/flinkgo/pkg/state"
)

// accum is a reduce's accumulator in keyed state: its JSON when a Fold
// can read it (expr.ExactJSON: the JSON decodes as the value), else the
// VM's value. Either way a snapshot holds the JSON the JSON codec writes,
// so the two forms and older snapshots restore alike.
type accum struct {
	json []byte  // the accumulator, when !vm; owned by the state
	at   []int32 // where a Fold's members are in json (expr.Fold.Places); empty: unknown
	v    any     // the accumulator, when vm
	vm   bool
	// ts is the latest timestamp of the key's records, kept by a reduce
	// with a ttl (hasTS: known; not after a restore of a snapshot taken
	// without a ttl).
	ts    int64
	hasTS bool
}

// seen notes a record (or, for an accumulator restored without one, a
// watermark) at ts.
func (a *accum) seen(ts int64) {
	if !a.hasTS || ts > a.ts {
		a.ts, a.hasTS = ts, true
	}
}

// expired reports whether time now is more than ttl past the latest
// record (never when that is unknown).
func (a *accum) expired(now, ttl int64) bool {
	return a.hasTS && now > a.ts && uint64(now)-uint64(a.ts) > uint64(ttl)
}

// value is the accumulator as the VM reads it.
func (a *accum) value() (any, error) {
	if a.vm {
		return a.v, nil
	}
	return jsonCodec{}.Decode(a.json)
}

// setJSON keeps b (copied into the accumulator's own buffer) with the
// places of its members (nil: unknown).
func (a *accum) setJSON(b []byte, at []int32) {
	a.json, a.at, a.v, a.vm = append(a.json[:0], b...), append(a.at[:0], at...), nil, false
}

func (a *accum) setValue(v any) { a.json, a.at, a.v, a.vm = a.json[:0], a.at[:0], v, true }

// accumCodec writes an accumulator in format version 2 (state.Encoder):
// whether its timestamp follows (only with timestamps: a reduce with a
// ttl), the timestamp, then its JSON. Either form restores into either kind
// of reduce.
//
// It reads the two forms written before the version byte as well (the
// golden savepoints of internal/engine hold them): the JSON alone, or
// legacyTS and 8 bytes little endian of timestamp, then the JSON. The
// first byte tells the three apart: legacyTS, a byte a JSON text starts
// with, or a version (2 is neither).
type accumCodec struct{ timestamps bool }

const (
	accumVersion = 2
	legacyTS     = 0x01
)

func (c accumCodec) Append(dst []byte, a *accum) []byte {
	e := state.AppendEncoder(dst, accumVersion)
	hasTS := c.timestamps && a.hasTS
	e.Bool(hasTS)
	if hasTS {
		e.Varint(a.ts)
	}
	if a.vm {
		e.Bytes(jsonCodec{}.Append(nil, a.v))
	} else {
		e.Bytes(a.json)
	}
	return e.Encoded()
}

func (accumCodec) Decode(b []byte) (*accum, error) {
	if len(b) > 0 && (b[0] == legacyTS || startsJSON(b[0])) {
		return decodeLegacyAccum(b)
	}
	d := state.NewDecoder("reduce accumulator", b, accumVersion)
	a := &accum{}
	if d.Bool() {
		a.ts, a.hasTS = d.Varint(), true
	}
	raw := d.Bytes()
	if err := d.Finish(); err != nil {
		return nil, err
	}
	return a, a.keepJSON(raw)
}

// DecodeStored reads an accumulator this codec wrote into a state store
// (state.StoredDecoder): its JSON was checked when it was restored or
// built, so it is not parsed again on every read.
func (accumCodec) DecodeStored(b []byte) (*accum, error) {
	if len(b) > 0 && (b[0] == legacyTS || startsJSON(b[0])) {
		return decodeLegacyAccum(b)
	}
	d := state.NewDecoder("reduce accumulator", b, accumVersion)
	a := &accum{}
	if d.Bool() {
		a.ts, a.hasTS = d.Varint(), true
	}
	raw := d.Bytes()
	if err := d.Finish(); err != nil {
		return nil, err
	}
	a.json = append(a.json, raw...)
	return a, nil
}

// decodeLegacyAccum reads the forms written before the version byte.
func decodeLegacyAccum(b []byte) (*accum, error) {
	a := &accum{}
	if b[0] == legacyTS {
		if len(b) < 9 {
			return nil, state.Corrupt("reduce accumulator", "its timestamp is cut short")
		}
		a.ts, a.hasTS = int64(binary.LittleEndian.Uint64(b[1:9])), true
		b = b[9:]
	}
	return a, a.keepJSON(b)
}

// keepJSON keeps a copy of raw, the restored accumulator's JSON, once it
// is known to decode.
func (a *accum) keepJSON(raw []byte) error {
	if _, err := (jsonCodec{}).Decode(raw); err != nil {
		return state.Corrupt("reduce accumulator", "not JSON: "+err.Error())
	}
	a.json = append([]byte(nil), raw...)
	return nil
}

// startsJSON reports whether a JSON text may start with c.
func startsJSON(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '{', '[', '"', '-', 't', 'f', 'n':
		return true
	}
	return c >= '0' && c <= '9'
}
