package file

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/flinkgo/flinkgo/pkg/state"
)

// Pending is a committable: a closed, synced part file waiting, under its
// hidden name, for a checkpoint >= Checkpoint to complete.
type Pending struct {
	Bucket     string // directory relative to the sink's path ("" for none)
	Hidden     string // current (hidden) file name
	Final      string // name it is committed to
	Index      int    // subtask index in its name
	Part       int64
	Size       int64 // bytes, checked when a restore finds it committed
	Checkpoint int64 // the checkpoint that pre-committed it
}

// Resumable is an in-progress part file as of a checkpoint: on restore it
// is truncated to Length and written on.
type Resumable struct {
	Bucket string
	Hidden string
	Final  string
	Index  int
	Part   int64
	Length int64 // bytes made durable by the checkpoint
}

// Counters is one subtask's entry in the union list: the next part number
// of every subtask index it owns, and the hidden files its split state
// refers to, so that every subtask restored from the snapshot knows which
// hidden files are still in use whoever gets them.
type Counters struct {
	Subtask    int
	Next       map[int]int64
	Referenced []string // bucket/hidden, "/"-separated, relative to the path
}

// Snapshot is what the writer records at a checkpoint.
type Snapshot struct {
	Pending    []Pending
	InProgress []Resumable
	Counters   Counters
}

// Restored is what a subtask receives back: its share of the split lists
// and every subtask's counters.
type Restored struct {
	Pending    []Pending
	InProgress []Resumable
	Counters   []Counters
}

// Operator state lists. Pending files and in-progress files are dealt out
// on rescale (split); counters go to every subtask (union).
const (
	listPending    = "pending"
	listInProgress = "in-progress"
	listCounters   = "part-counters"
)

// Item format: version byte, kind byte, then varint/length-prefixed
// fields. A reader refuses an unknown version.
const stateVersion = 1

const (
	kindPending    = 'P'
	kindInProgress = 'I'
	kindCounters   = 'C'
)

// PutState stores s in o (called in SnapshotState).
func PutState(o *state.OperatorState, s Snapshot) {
	pend := make([][]byte, len(s.Pending))
	for i, p := range s.Pending {
		pend[i] = p.encode()
	}
	prog := make([][]byte, len(s.InProgress))
	for i, r := range s.InProgress {
		prog[i] = r.encode()
	}
	o.Set(listPending, state.Split, pend)
	o.Set(listInProgress, state.Split, prog)
	o.Set(listCounters, state.Union, [][]byte{s.Counters.encode()})
}

// GetState reads restored lists from o; ok is false when o holds no state
// of this sink (a fresh start, or a new operator in a restored job).
func GetState(o *state.OperatorState) (r Restored, ok bool, err error) {
	counters := o.Get(listCounters)
	if len(counters) == 0 {
		return r, false, nil
	}
	for i, b := range counters {
		c, err := decodeCounters(b)
		if err != nil {
			return r, false, itemErr(listCounters, i, err)
		}
		r.Counters = append(r.Counters, c)
	}
	for i, b := range o.Get(listPending) {
		p, err := decodePending(b)
		if err != nil {
			return r, false, itemErr(listPending, i, err)
		}
		r.Pending = append(r.Pending, p)
	}
	for i, b := range o.Get(listInProgress) {
		p, err := decodeResumable(b)
		if err != nil {
			return r, false, itemErr(listInProgress, i, err)
		}
		r.InProgress = append(r.InProgress, p)
	}
	return r, true, nil
}

func itemErr(list string, i int, err error) error {
	return fmt.Errorf("file sink state, list %q item %d: %w", list, i, err)
}

type enc struct{ b []byte }

func newEnc(kind byte) *enc { return &enc{b: []byte{stateVersion, kind}} }

func (e *enc) str(s string) { e.b = binary.AppendUvarint(e.b, uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) int(v int64)  { e.b = binary.AppendVarint(e.b, v) }

func (p Pending) encode() []byte {
	e := newEnc(kindPending)
	e.str(p.Bucket)
	e.str(p.Hidden)
	e.str(p.Final)
	e.int(int64(p.Index))
	e.int(p.Part)
	e.int(p.Size)
	e.int(p.Checkpoint)
	return e.b
}

func (r Resumable) encode() []byte {
	e := newEnc(kindInProgress)
	e.str(r.Bucket)
	e.str(r.Hidden)
	e.str(r.Final)
	e.int(int64(r.Index))
	e.int(r.Part)
	e.int(r.Length)
	return e.b
}

func (c Counters) encode() []byte {
	e := newEnc(kindCounters)
	e.int(int64(c.Subtask))
	idx := make([]int, 0, len(c.Next))
	for i := range c.Next {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	e.int(int64(len(idx)))
	for _, i := range idx {
		e.int(int64(i))
		e.int(c.Next[i])
	}
	e.int(int64(len(c.Referenced)))
	for _, s := range c.Referenced {
		e.str(s)
	}
	return e.b
}

var errTruncated = errors.New("truncated item (the state file is damaged)")

type dec struct {
	b   []byte
	err error
}

func newDec(b []byte, kind byte) *dec {
	d := &dec{b: b}
	switch {
	case len(b) < 2:
		d.err = errTruncated
	case b[0] != stateVersion:
		d.err = fmt.Errorf("format version %d is not supported (this build reads %d): the snapshot was written by another flinkgo version", b[0], stateVersion)
	case b[1] != kind:
		d.err = fmt.Errorf("item of kind %q where %q was expected: the state does not belong to a file sink", b[1], kind)
	default:
		d.b = b[2:]
	}
	return d
}

func (d *dec) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errTruncated
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string {
	if d.err != nil {
		return ""
	}
	n, k := binary.Uvarint(d.b)
	if k <= 0 || n > uint64(len(d.b)-k) {
		d.err = errTruncated
		return ""
	}
	s := string(d.b[k : k+int(n)])
	d.b = d.b[k+int(n):]
	return s
}

func (d *dec) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d unexpected trailing bytes", len(d.b))
	}
	return d.err
}

func decodePending(b []byte) (Pending, error) {
	d := newDec(b, kindPending)
	p := Pending{Bucket: d.str(), Hidden: d.str(), Final: d.str(), Index: int(d.int()), Part: d.int(), Size: d.int(), Checkpoint: d.int()}
	return p, d.done()
}

func decodeResumable(b []byte) (Resumable, error) {
	d := newDec(b, kindInProgress)
	r := Resumable{Bucket: d.str(), Hidden: d.str(), Final: d.str(), Index: int(d.int()), Part: d.int(), Length: d.int()}
	return r, d.done()
}

func decodeCounters(b []byte) (Counters, error) {
	d := newDec(b, kindCounters)
	c := Counters{Subtask: int(d.int()), Next: map[int]int64{}}
	n := d.int()
	for i := int64(0); i < n && d.err == nil; i++ {
		idx := int(d.int())
		c.Next[idx] = d.int()
	}
	m := d.int()
	for i := int64(0); i < m && d.err == nil; i++ {
		c.Referenced = append(c.Referenced, d.str())
	}
	return c, d.done()
}
