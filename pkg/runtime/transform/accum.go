package transform

import (
	"encoding/binary"
	"errors"
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

// accumCodec writes an accumulator as jsonCodec does; with timestamps (a
// reduce with a ttl) a known ts goes first, as tsPrefix and 8 bytes little
// endian: a byte no JSON text starts with, so either form restores into
// either kind of reduce.
type accumCodec struct{ timestamps bool }

const tsPrefix = 0x01

func (c accumCodec) Append(dst []byte, a *accum) []byte {
	if c.timestamps && a.hasTS {
		dst = binary.LittleEndian.AppendUint64(append(dst, tsPrefix), uint64(a.ts))
	}
	if a.vm {
		return jsonCodec{}.Append(dst, a.v)
	}
	return append(dst, a.json...)
}

func (accumCodec) Decode(b []byte) (*accum, error) {
	a := &accum{}
	if len(b) > 0 && b[0] == tsPrefix {
		if len(b) < 9 {
			return nil, errors.New("reduce accumulator: its timestamp is cut short")
		}
		a.ts, a.hasTS = int64(binary.LittleEndian.Uint64(b[1:9])), true
		b = b[9:]
	}
	if _, err := (jsonCodec{}).Decode(b); err != nil {
		return nil, err // as before: a snapshot that is not JSON fails its restore
	}
	a.json = append([]byte(nil), b...)
	return a, nil
}
