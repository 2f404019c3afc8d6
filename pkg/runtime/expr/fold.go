package expr

import (
	"math"
	"unicode/utf8"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// accRow is the row of the accumulator's members in a fold (row 0 is the
// record).
const accRow = 1

// Fold is the VM-free form of a reduce: an expression whose root is an
// object literal over the record's members and acc.member (and an init of
// that shape), evaluated over the accumulator's JSON without decoding it.
// The new accumulator is written as JSON once: it is the emitted record and
// the state.
//
// The contract that keeps it equal to the VM path: an accumulator held as
// JSON reads back, member by member, as the VM's value would be after a
// restore (the JSON codec: encoding/json, then Normalize; decodeAcc), and a
// fold writes only accumulators for which that is the value the VM would
// have computed (exactNative, exactRaw; ExactJSON for the VM's results).
// Anything else, or any value the native form does not handle, gives !ok:
// the caller evaluates that record with the VM.
type Fold struct {
	step, init *native
	// places[i]: the accumulator field (an index of step.perRow[accRow])
	// that member i of the step's object is, or -1.
	places  []int
	sc, ic  nctx
	initBuf []byte
	at      []int32 // Places
}

// NewFold returns the fold of a reduce expression p reading variable acc
// and its init (nil: none), or nil when they have no native form (or read
// fields a schema types: those are checked by the VM path).
func NewFold(p, init *Program, acc string) *Fold {
	step := compileFold(p, acc)
	if step == nil {
		return nil
	}
	f := &Fold{step: step}
	accFields := step.perRow[accRow]
	for _, key := range step.object.keys {
		k := -1
		for j, fi := range accFields {
			if step.fields[fi].name == key {
				k = j
			}
		}
		f.places = append(f.places, k)
	}
	if init != nil {
		f.init = compileFold(init, "")
	}
	return f.Clone()
}

func compileFold(p *Program, acc string) *native {
	if len(p.schema) > 0 {
		return nil
	}
	n := &native{extra: p.extra, acc: acc, fold: true}
	if !n.compileRoot(p.prog.Node()) || n.object == nil {
		return nil
	}
	for len(n.perRow) <= accRow {
		n.perRow = append(n.perRow, nil)
	}
	return n
}

// Clone returns an independent copy for another subtask.
func (f *Fold) Clone() *Fold {
	c := &Fold{step: f.step, init: f.init, places: f.places, sc: f.step.newCtx(),
		at: make([]int32, 2*len(f.step.perRow[accRow]))}
	if f.init != nil {
		c.ic = f.init.newCtx()
	}
	return c
}

// Append appends the JSON of the accumulator after r: the expression over
// r and acc, the current accumulator's JSON (nil: none yet, the init's
// value). at is where acc's members are (Places of the Append that wrote
// acc; empty: unknown, acc is scanned). !ok: evaluate this record with
// the VM (dst may hold a partial result). As with Program.AppendValue,
// dst's spare capacity past the result may be overwritten.
func (f *Fold) Append(dst []byte, r *runtime.Record, acc []byte, at []int32) ([]byte, bool) {
	if acc == nil {
		if f.init == nil {
			return dst, false
		}
		c := &f.ic
		if !f.init.scan(r.Value, c) {
			return dst, false
		}
		c.rec = r
		var ok bool
		if f.initBuf, ok = f.init.appendObject(f.initBuf[:0], c, true, nil, nil); !ok {
			return dst, false
		}
		acc, at = f.initBuf, nil
	}
	c := &f.sc
	if !f.step.scan(r.Value, c) {
		return dst, false
	}
	if accFields := f.step.perRow[accRow]; len(at) == 2*len(accFields) && len(at) > 0 {
		for k, fi := range accFields {
			if s := at[2*k]; s >= 0 {
				sl := &c.slots[fi]
				sl.raw, sl.gen, sl.canon = acc[s:at[2*k+1]], c.gen, 0 // canonical() decides
			}
		}
	} else if !f.step.scanRow(acc, accRow, c) {
		return dst, false
	}
	c.rec = r
	for i := range f.at {
		f.at[i] = -1 // a field no member writes is absent from the result
	}
	return f.step.appendObject(dst, c, true, f.places, f.at)
}

// Places is where the accumulator's members are in the last result of
// Append, for the next Append over it (valid until the next Append).
func (f *Fold) Places() []int32 { return f.at }

// decodeAcc reads an accumulator member's raw JSON as the JSON codec does
// (a number is a float64, an int when whole and within ±1e15: Normalize).
func decodeAcc(raw []byte) (nval, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return decodeRaw(raw)
	}
	if i, ok := parseInt(raw); ok && i < 1e15 && i > -1e15 {
		return nval{k: nInt, i: i}, true
	}
	v, ok := decodeRaw(raw)
	if !ok {
		return v, false
	}
	if v.k == nInt { // 16 to 18 digits: encoding/json reads a float64
		v = floatVal(float64(v.i))
	}
	if f := v.f(); f < 1e15 && f > -1e15 && f == math.Trunc(f) {
		return nval{k: nInt, i: int(f)}, true
	}
	return v, true
}

// exactFloat reports whether a float64 reads back from AppendJSON's text as
// a float64 of the same value (a whole one within ±1e15 becomes an int).
func exactFloat(f float64) bool {
	return !math.IsNaN(f) && !math.IsInf(f, 0) && !(f < 1e15 && f > -1e15 && f == math.Trunc(f))
}

func exactInt(i int) bool { return i < 1e15 && i > -1e15 }

// exactNative reports whether v, written by appendNative, reads back with
// decodeAcc as v (strings appendNative refuses itself).
func exactNative(v nval) bool {
	switch v.k {
	case nInt:
		return exactInt(v.i)
	case nFloat:
		return exactFloat(v.f())
	}
	return true
}

// exactRaw reports whether a canonical member, copied as it is, reads back
// with decodeAcc as the VM read it from the record (decodeRaw).
func exactRaw(raw []byte) bool {
	if raw[0] == '"' {
		return true
	}
	digits := len(raw)
	if raw[0] == '-' {
		digits--
	}
	return digits <= 15
}

// ExactJSON reports whether v, a reduce expression's result on the VM, is
// an object whose JSON (AppendJSON) decodes with the JSON codec as v: an
// accumulator that may be kept as its JSON and read by a Fold.
func ExactJSON(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, e := range m {
		switch x := e.(type) {
		case nil, bool:
		case string:
			if !utf8.ValidString(x) {
				return false
			}
		case int:
			if !exactInt(x) {
				return false
			}
		case float64:
			if !exactFloat(x) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
