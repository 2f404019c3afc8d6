package state

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sort"
)

// State file format (one file per subtask and checkpoint):
//
//	magic "FGSTATE\n" | version u16 LE
//	operator state: uvarint lists; per list: name, mode byte, uvarint items, items
//	keyed state: byte present; if 1: uvarint maxParallelism, start, end,
//	    uvarint tables; per table: name, kind byte, uvarint groups;
//	    per group: uvarint key group, uvarint entries; per entry: key, value
//	crc32c (Castagnoli) of everything before, u32 LE
//
// Strings and byte slices are uvarint-length-prefixed.
const (
	fileMagic   = "FGSTATE\n"
	fileVersion = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum is the CRC-32C used by every flinkgo file format.
func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Summary describes an encoded snapshot for checkpoint metadata.
type Summary struct {
	Keys int64 `json:"keys,omitempty"`
	// TimerKeys counts the keys with timers (savepoint inspect).
	TimerKeys int64          `json:"timerKeys,omitempty"`
	KeyGroups *KeyGroupRange `json:"keyGroups,omitempty"`
	Lists     map[string]int `json:"lists,omitempty"` // list name → items
}

// Encoded is an encoded state file held in chunks.
type Encoded struct {
	Chunks   [][]byte
	Size     int64
	Checksum uint32 // the CRC-32C in its footer: of every byte before it
}

// WriteTo writes the file's bytes to w.
func (en *Encoded) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, c := range en.Chunks {
		k, err := w.Write(c)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Bytes returns the file as one slice.
func (en *Encoded) Bytes() []byte {
	if len(en.Chunks) == 1 {
		return en.Chunks[0]
	}
	out := make([]byte, 0, en.Size)
	for _, c := range en.Chunks {
		out = append(out, c...)
	}
	return out
}

// Encode serializes a subtask's state into one slice (see EncodeChunks).
func Encode(ops *OperatorState, kb *KeyedBackend) ([]byte, Summary) {
	en, sum := EncodeChunks(ops, kb)
	return en.Bytes(), sum
}

// EncodeChunks serializes a subtask's state. kb may be nil (not a keyed
// operator). This is the synchronous part of a snapshot: it copies
// everything, so the operator may go on changing its state while the
// chunks are written.
func EncodeChunks(ops *OperatorState, kb *KeyedBackend) (*Encoded, Summary) {
	return encodeChunks(ops, kb, false)
}

// EncodeChunksWithoutStore is EncodeChunks for an incremental checkpoint:
// the tables in kb's store are left out (the store's files hold them,
// with their manifest: WriteStoreManifest). Its summary counts them.
func EncodeChunksWithoutStore(ops *OperatorState, kb *KeyedBackend) (*Encoded, Summary) {
	return encodeChunks(ops, kb, true)
}

func encodeChunks(ops *OperatorState, kb *KeyedBackend, skipStore bool) (*Encoded, Summary) {
	e := &encoder{buf: make([]byte, 0, 4096), cut: true}
	e.buf = append(e.buf, fileMagic...)
	e.buf = binary.LittleEndian.AppendUint16(e.buf, fileVersion)
	var sum Summary
	lists := ops.Lists()
	e.uvarint(uint64(len(lists)))
	if len(lists) > 0 {
		sum.Lists = map[string]int{}
	}
	for _, l := range lists {
		e.str(l.Name)
		e.buf = append(e.buf, byte(l.Mode))
		e.uvarint(uint64(len(l.Items)))
		for _, it := range l.Items {
			e.bytes(it)
		}
		sum.Lists[l.Name] = len(l.Items)
	}
	if kb == nil {
		e.buf = append(e.buf, 0)
	} else {
		e.buf = append(e.buf, 1)
		encodeKeyed(e, kb, skipStore)
		rng := kb.rng
		sum.KeyGroups = &rng
		sum.Keys = kb.NumKeys()
		sum.TimerKeys = kb.NumTimerKeys()
	}
	en := &Encoded{Chunks: append(e.chunks, e.buf)}
	var crc uint32
	for _, c := range en.Chunks {
		crc = crc32.Update(crc, castagnoli, c)
		en.Size += int64(len(c))
	}
	last := &en.Chunks[len(en.Chunks)-1]
	*last = binary.LittleEndian.AppendUint32(*last, crc)
	en.Size += 4
	en.Checksum = crc
	return en, sum
}

func encodeKeyed(e *encoder, kb *KeyedBackend, skipStore bool) {
	e.uvarint(uint64(kb.maxParallelism))
	e.uvarint(uint64(kb.rng.Start))
	e.uvarint(uint64(kb.rng.End))
	names := kb.names()
	if skipStore {
		names = slices.DeleteFunc(names, func(n string) bool { t, ok := kb.tables[n]; return ok && inStore(t) })
	}
	e.uvarint(uint64(len(names)))
	for _, name := range names {
		e.str(name)
		if t, ok := kb.tables[name]; ok {
			e.buf = append(e.buf, byte(t.kind()))
			e.uvarint(uint64(kb.rng.Len()))
			for g := 0; g < kb.rng.Len(); g++ {
				e.uvarint(uint64(kb.rng.Start + g))
				e.uvarint(uint64(t.groupLen(g)))
				t.encodeGroup(g, e)
			}
			continue
		}
		r := kb.raw[name]
		e.buf = append(e.buf, byte(r.Kind))
		groups := make([]int, 0, len(r.Groups))
		for kg := range r.Groups {
			groups = append(groups, kg)
		}
		sort.Ints(groups)
		e.uvarint(uint64(len(groups)))
		for _, kg := range groups {
			e.uvarint(uint64(kg))
			e.uvarint(uint64(r.groupCount(kg)))
			for _, part := range r.Groups[kg] {
				e.buf = append(e.buf, part.Data...) // the same encoding
				e.maybeCut()
			}
		}
	}
}

// Snapshot is a decoded state file, opaque: the format is this package's,
// not part of its API. Hand it to RestoreOperatorState and
// KeyedBackend.Restore (the engine does at a restore; an operator's test
// does for a snapshot round trip). Its slices point into the file's bytes.
type Snapshot struct {
	lists          []ItemList
	keyed          bool
	maxParallelism int
	rng            KeyGroupRange
	tables         []*rawTable
}

// Decode parses and verifies a state file.
func Decode(data []byte) (*Snapshot, error) {
	if len(data) < len(fileMagic) || string(data[:len(fileMagic)]) != fileMagic {
		return nil, fmt.Errorf("not a flinkgo state file (bad magic)")
	}
	if len(data) < len(fileMagic)+2+4 {
		return nil, fmt.Errorf("state file is truncated (%d bytes)", len(data))
	}
	if v := binary.LittleEndian.Uint16(data[len(fileMagic):]); v != fileVersion {
		return nil, fmt.Errorf("state file format version %d is not supported (this build reads version %d); it was written by a different flinkgo version", v, fileVersion)
	}
	body, footer := data[:len(data)-4], data[len(data)-4:]
	if checksum(body) != binary.LittleEndian.Uint32(footer) {
		return nil, fmt.Errorf("state file checksum mismatch: the file is corrupt or truncated")
	}
	d := &decoder{buf: body[len(fileMagic)+2:]}
	s := &Snapshot{}
	nl := d.uvarint()
	for i := uint64(0); i < nl && d.err == nil; i++ {
		l := ItemList{Name: string(d.bytes()), Mode: Redistribution(d.byte())}
		ni := d.uvarint()
		for j := uint64(0); j < ni && d.err == nil; j++ {
			l.Items = append(l.Items, d.bytes())
		}
		s.lists = append(s.lists, l)
	}
	if d.byte() == 1 {
		s.keyed = true
		decodeKeyed(d, s)
	}
	if d.err != nil {
		return nil, fmt.Errorf("state file is malformed: %w", d.err)
	}
	if len(d.buf) != 0 {
		return nil, fmt.Errorf("state file is malformed: %d trailing bytes", len(d.buf))
	}
	return s, nil
}

func decodeKeyed(d *decoder, s *Snapshot) {
	s.maxParallelism = int(d.uvarint())
	s.rng = KeyGroupRange{Start: int(d.uvarint()), End: int(d.uvarint())}
	nt := d.uvarint()
	for i := uint64(0); i < nt && d.err == nil; i++ {
		t := &rawTable{Name: string(d.bytes()), Kind: tableKind(d.byte()), Groups: map[int][]rawGroup{}}
		ng := d.uvarint()
		for g := uint64(0); g < ng && d.err == nil; g++ {
			kg := int(d.uvarint())
			ne := d.uvarint()
			if ne > uint64(len(d.buf)) {
				d.err = errTruncated
				return
			}
			// Check the entries' framing now, keep their bytes as they are.
			start := d.buf
			for j := uint64(0); j < ne && d.err == nil; j++ {
				d.bytes()
				d.bytes()
			}
			if d.err == nil && ne > 0 {
				t.Groups[kg] = []rawGroup{{Count: int(ne), Data: start[:len(start)-len(d.buf)]}}
			}
		}
		s.tables = append(s.tables, t)
	}
}
