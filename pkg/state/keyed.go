package state

import (
	"bytes"
	"fmt"
	"sort"
)

// KeyedBackend holds the keyed state of one subtask: named tables of
// values per key, each partitioned by the key groups the subtask owns.
// It is used only from the subtask's goroutine.
//
// Operators declare their states (NewValue, NewMap, NewList) in Open; state restored
// from a snapshot before the declaration is kept in encoded form and
// decoded by the declaration's codec.
type KeyedBackend struct {
	maxParallelism int
	rng            KeyGroupRange
	tables         map[string]table
	raw            map[string]*rawTable // restored, not yet declared
	restored       map[string]bool      // tables restored and declared since

	// store, when set, holds the value tables (NewKeyedBackendOn).
	store       Store
	nextTableID uint16

	curKey []byte
	curKG  int    // index into group slices (key group - rng.Start)
	keyGen uint64 // counts SetCurrentKey calls: handles cache per current key
}

// NewKeyedBackend returns an empty backend for key groups rng.
func NewKeyedBackend(maxParallelism int, rng KeyGroupRange) *KeyedBackend {
	return &KeyedBackend{maxParallelism: maxParallelism, rng: rng, tables: map[string]table{}, raw: map[string]*rawTable{}, restored: map[string]bool{}}
}

// Range is the key groups this backend owns.
func (b *KeyedBackend) Range() KeyGroupRange { return b.rng }

// MaxParallelism is the number of key groups of the job.
func (b *KeyedBackend) MaxParallelism() int { return b.maxParallelism }

// SetCurrentKey selects the key the states read and write. The key must
// belong to this backend's key groups (the hash partitioner guarantees it);
// a key of another subtask is a bug.
//
// Setting the key that is current already (consecutive records of a hot
// key) keeps the states' lookups of it (keyGen) and does not hash it again;
// the same slice again is looked up anew (a caller may reuse a buffer). A
// key's bytes must not change while it is current.
func (b *KeyedBackend) SetCurrentKey(key []byte) {
	if b.sameKey(key) {
		b.curKey = key
		return
	}
	kg := KeyGroup(key, b.maxParallelism)
	if !b.rng.Contains(kg) {
		panic(fmt.Sprintf("state: key group %d of key %q is outside %s (bug: record routed to the wrong subtask)", kg, key, b.rng))
	}
	b.curKey = key
	b.curKG = kg - b.rng.Start
	b.keyGen++
}

// sameKey reports whether key equals the current key and is another slice.
func (b *KeyedBackend) sameKey(key []byte) bool {
	if b.keyGen == 0 || len(key) != len(b.curKey) {
		return false
	}
	if len(key) == 0 {
		return true
	}
	return &key[0] != &b.curKey[0] && bytes.Equal(key, b.curKey)
}

// setCurrent is SetCurrentKey for a key whose group index (kg, into the
// range) is known: a timer's.
func (b *KeyedBackend) setCurrent(key []byte, kg int) {
	b.curKey, b.curKG = key, kg
	b.keyGen++
}

// CurrentKey returns the key set by SetCurrentKey.
func (b *KeyedBackend) CurrentKey() []byte { return b.curKey }

// Restored reports whether the restored snapshots have a table called
// name, declared since or not.
func (b *KeyedBackend) Restored(name string) bool {
	_, raw := b.raw[name]
	return raw || b.restored[name]
}

// NumKeys counts the entries of all state tables, timers aside (for
// inspect and metrics).
func (b *KeyedBackend) NumKeys() int64 { return b.count(false) }

// NumTimerKeys counts the keys with timers.
func (b *KeyedBackend) NumTimerKeys() int64 { return b.count(true) }

func (b *KeyedBackend) count(timers bool) int64 {
	var n int64
	for _, t := range b.tables {
		if (t.kind() == kindTimers) == timers {
			n += int64(t.numKeys())
		}
	}
	for _, r := range b.raw {
		if (r.Kind == kindTimers) == timers {
			n += int64(r.numKeys())
		}
	}
	return n
}

// tableKind of a keyed state table.
type tableKind uint8

const (
	kindValue tableKind = iota + 1
	kindMap
	kindList
	kindTimers
)

func (k tableKind) String() string {
	switch k {
	case kindValue:
		return "value"
	case kindMap:
		return "map"
	case kindList:
		return "list"
	case kindTimers:
		return "timers"
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// table is a declared state; it encodes itself group by group.
type table interface {
	kind() tableKind
	numKeys() int
	// groupLen is the number of entries of group g (index into the range).
	groupLen(g int) int
	// encodeGroup appends the entries of group g.
	encodeGroup(g int, e *encoder)
	decodeEntry(g int, key, value []byte) error
}

// presizer is implemented by tables that can size a group before a restore
// fills it (rebuilding a big map is much cheaper without rehashing).
type presizer interface{ presize(g, n int) }

// groupLoader is implemented by tables that load a restored group
// themselves when loads says so (a value table in a Store).
type groupLoader interface {
	loads() bool
	loadGroup(g int, parts []rawGroup) error
}

// entry is one key/value of a restored table.
type entry struct {
	Key, Value []byte
}

// rawGroup is the encoded entries of one key group as a state file holds
// them: Count times a length-prefixed key and value. Restored state stays
// in this form until its table is declared, so a restore neither copies
// nor allocates per entry before the codec decodes each value once.
type rawGroup struct {
	Count int
	Data  []byte
}

// encodeEntries encodes es as a rawGroup.
func encodeEntries(es []entry) rawGroup {
	e := &encoder{}
	for _, en := range es {
		e.bytes(en.Key)
		e.bytes(en.Value)
	}
	return rawGroup{Count: len(es), Data: e.buf}
}

// Each calls fn with every entry of the group (slices into Data).
func (g rawGroup) Each(fn func(key, value []byte) error) error {
	d := decoder{buf: g.Data}
	for i := 0; i < g.Count; i++ {
		k, v := d.bytes(), d.bytes()
		if d.err != nil {
			return fmt.Errorf("entry %d: %w", i, d.err)
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// rawTable is a restored table in encoded form, by key group. A key group
// has several parts only when old snapshots overlapped (never from one
// job's own checkpoints).
type rawTable struct {
	Name   string
	Kind   tableKind
	Groups map[int][]rawGroup // key group → encoded entries
}

func (r *rawTable) groupCount(kg int) int {
	n := 0
	for _, g := range r.Groups[kg] {
		n += g.Count
	}
	return n
}

func (r *rawTable) numKeys() int {
	n := 0
	for kg := range r.Groups {
		n += r.groupCount(kg)
	}
	return n
}

// restoreRaw adds restored entries; the declaration decodes them.
func (b *KeyedBackend) restoreRaw(t *rawTable) {
	have := b.raw[t.Name]
	if have == nil {
		b.raw[t.Name] = &rawTable{Name: t.Name, Kind: t.Kind, Groups: map[int][]rawGroup{}}
		have = b.raw[t.Name]
	}
	for kg, gs := range t.Groups {
		if b.rng.Contains(kg) {
			have.Groups[kg] = append(have.Groups[kg], gs...)
		}
	}
}

// declare registers t under name, decoding restored entries into it.
func (b *KeyedBackend) declare(name string, k tableKind, t table) error {
	if _, dup := b.tables[name]; dup {
		return fmt.Errorf("keyed state %q declared twice", name)
	}
	if b.store != nil && k != kindValue {
		return fmt.Errorf("keyed state %q: %s state is not on the pebble state backend yet (only value state is; docs/state-backends.md)", name, k)
	}
	if r, ok := b.raw[name]; ok {
		if r.Kind != k {
			return fmt.Errorf("keyed state %q was snapshotted as %s state but is declared as %s state", name, r.Kind, k)
		}
		for kg, gs := range r.Groups {
			g := kg - b.rng.Start
			if l, ok := t.(groupLoader); ok && l.loads() {
				if err := l.loadGroup(g, gs); err != nil {
					return fmt.Errorf("restore keyed state %q key group %d: %w", name, kg, err)
				}
				continue
			}
			if p, ok := t.(presizer); ok {
				p.presize(g, r.groupCount(kg))
			}
			for _, part := range gs {
				if err := part.Each(func(k, v []byte) error { return t.decodeEntry(g, k, v) }); err != nil {
					return fmt.Errorf("restore keyed state %q key group %d: %w", name, kg, err)
				}
			}
		}
		delete(b.raw, name)
		b.restored[name] = true
	}
	b.tables[name] = t
	return nil
}

// names returns all table names, declared or raw, sorted.
func (b *KeyedBackend) names() []string {
	out := make([]string, 0, len(b.tables)+len(b.raw))
	for n := range b.tables {
		out = append(out, n)
	}
	for n := range b.raw {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
