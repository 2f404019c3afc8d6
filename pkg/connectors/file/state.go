package file

import (
	"fmt"
	"slices"

	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// pending is a committable: a closed, synced part file waiting, under its
// hidden name, for a checkpoint >= Checkpoint to complete.
type pending struct {
	Bucket     string // directory relative to the sink's path ("" for none)
	Hidden     string // current (hidden) file name
	Final      string // name it is committed to
	Index      int    // subtask index in its name
	Part       int64
	Size       int64 // bytes, checked when a restore finds it committed
	Checkpoint int64 // the checkpoint that pre-committed it
	// In object storage: the multipart upload of Final and its parts
	// (every byte of the part is in them); "" for a part with no bytes.
	Upload string
	Parts  []vfs.Part
}

// resumable is an in-progress part file as of a checkpoint: on restore it
// is truncated to Length and written on.
type resumable struct {
	Bucket string
	Hidden string
	Final  string
	Index  int
	Part   int64
	Length int64 // bytes made durable by the checkpoint
	// In object storage: the multipart upload of Final ("" while it has
	// no part), its uploaded parts and the bytes after them (less than a
	// part), which together are the Length bytes.
	Upload string
	Parts  []vfs.Part
	Tail   []byte
}

// counters is one subtask's entry in the union list: the next part number
// of every subtask index it owns, and the hidden files its split state
// refers to, so that every subtask restored from the snapshot knows which
// hidden files are still in use whoever gets them.
type counters struct {
	Subtask    int
	Next       map[int]int64
	Referenced []string // bucket/hidden, "/"-separated, relative to the path
}

// snapshot is what the writer records at a checkpoint.
type snapshot struct {
	Pending    []pending
	InProgress []resumable
	Counters   counters
}

// restored is what a subtask receives back: its share of the split lists
// and every subtask's counters.
type restored struct {
	Pending    []pending
	InProgress []resumable
	Counters   []counters
}

// Operator state lists. Pending files and in-progress files are dealt out
// on rescale (split); counters go to every subtask (union).
const (
	listPending    = "pending"
	listInProgress = "in-progress"
	listCounters   = "part-counters"
)

// Item format: version byte, kind byte, then varint/length-prefixed
// fields. A reader refuses an unknown version. Version 2 adds, for parts
// in object storage, the upload id, its parts and (in-progress) the tail;
// parts on a disk are still written as version 1.
const (
	stateVersion   = 2
	stateVersionV1 = 1
)

const (
	kindPending    = 'P'
	kindInProgress = 'I'
	kindCounters   = 'C'
)

// putState stores s in o (called in SnapshotState).
func putState(o *state.OperatorState, s snapshot) {
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

// getState reads restored lists from o; ok is false when o holds no state
// of this sink (a fresh start, or a new operator in a restored job).
func getState(o *state.OperatorState) (r restored, ok bool, err error) {
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
	return fmt.Errorf("%w (list %q, item %d)", err, list, i)
}

// newEnc starts an item of the given kind and version.
func newEnc(kind, version byte) *state.Encoder {
	e := state.NewEncoder(version)
	e.Byte(kind)
	return e
}

func objectVersion(upload string, parts []vfs.Part, tail []byte) byte {
	if upload != "" || len(parts) > 0 || len(tail) > 0 {
		return stateVersion
	}
	return stateVersionV1
}

func encodeUpload(e *state.Encoder, upload string, parts []vfs.Part) {
	e.String(upload)
	e.Varint(int64(len(parts)))
	for _, p := range parts {
		e.Varint(int64(p.Number))
		e.String(p.ETag)
		e.Varint(p.Size)
	}
}

func decodeUpload(d *state.Decoder) (string, []vfs.Part) {
	upload := d.String()
	n := d.Varint()
	if n < 0 || n > 10000 {
		d.Fail("%d parts (S3 allows 10000)", n)
		return upload, nil
	}
	var parts []vfs.Part
	for i := int64(0); i < n && d.Err() == nil; i++ {
		parts = append(parts, vfs.Part{Number: int(d.Varint()), ETag: d.String(), Size: d.Varint()})
	}
	return upload, parts
}

func (p pending) encode() []byte {
	v := objectVersion(p.Upload, p.Parts, nil)
	e := newEnc(kindPending, v)
	e.String(p.Bucket)
	e.String(p.Hidden)
	e.String(p.Final)
	e.Varint(int64(p.Index))
	e.Varint(p.Part)
	e.Varint(p.Size)
	e.Varint(p.Checkpoint)
	if v >= 2 {
		encodeUpload(e, p.Upload, p.Parts)
	}
	return e.Encoded()
}

func (r resumable) encode() []byte {
	v := objectVersion(r.Upload, r.Parts, r.Tail)
	e := newEnc(kindInProgress, v)
	e.String(r.Bucket)
	e.String(r.Hidden)
	e.String(r.Final)
	e.Varint(int64(r.Index))
	e.Varint(r.Part)
	e.Varint(r.Length)
	if v >= 2 {
		encodeUpload(e, r.Upload, r.Parts)
		e.Bytes(r.Tail)
	}
	return e.Encoded()
}

func (c counters) encode() []byte {
	e := newEnc(kindCounters, stateVersionV1)
	e.Varint(int64(c.Subtask))
	idx := make([]int, 0, len(c.Next))
	for i := range c.Next {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	e.Varint(int64(len(idx)))
	for _, i := range idx {
		e.Varint(int64(i))
		e.Varint(c.Next[i])
	}
	e.Varint(int64(len(c.Referenced)))
	for _, s := range c.Referenced {
		e.String(s)
	}
	return e.Encoded()
}

// newDec starts reading an item that must be of the given kind.
func newDec(b []byte, kind byte) *state.Decoder {
	d := state.NewDecoder("file sink state", b, stateVersion)
	if k := d.Byte(); d.Version() != 0 && k != kind {
		d.Fail("item of kind %q where %q was expected: the state does not belong to a file sink", k, kind)
	}
	return d
}

func decodePending(b []byte) (pending, error) {
	d := newDec(b, kindPending)
	p := pending{Bucket: d.String(), Hidden: d.String(), Final: d.String(), Index: int(d.Varint()), Part: d.Varint(), Size: d.Varint(), Checkpoint: d.Varint()}
	if d.Version() >= 2 {
		p.Upload, p.Parts = decodeUpload(d)
	}
	return p, d.Finish()
}

func decodeResumable(b []byte) (resumable, error) {
	d := newDec(b, kindInProgress)
	r := resumable{Bucket: d.String(), Hidden: d.String(), Final: d.String(), Index: int(d.Varint()), Part: d.Varint(), Length: d.Varint()}
	if d.Version() >= 2 {
		r.Upload, r.Parts = decodeUpload(d)
		r.Tail = append([]byte(nil), d.Bytes()...)
	}
	return r, d.Finish()
}

func decodeCounters(b []byte) (counters, error) {
	d := newDec(b, kindCounters)
	c := counters{Subtask: int(d.Varint()), Next: map[int]int64{}}
	n := d.Varint()
	for i := int64(0); i < n && d.Err() == nil; i++ {
		idx := int(d.Varint())
		c.Next[idx] = d.Varint()
	}
	m := d.Varint()
	for i := int64(0); i < m && d.Err() == nil; i++ {
		c.Referenced = append(c.Referenced, d.String())
	}
	return c, d.Finish()
}
