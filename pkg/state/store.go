package state

import (
	"encoding/binary"
	"fmt"
	"iter"
)

// Store is an ordered key-value store that a KeyedBackend can keep its
// value state in instead of Go maps (the pebble backend,
// docs/state-backends.md). It is used from the subtask's goroutine only.
// Snapshots do not change: the backend encodes the store's entries into
// the same state file as the maps'.
type Store interface {
	// Get returns key's value, valid until the next call on the store.
	Get(key []byte) (value []byte, ok bool, err error)
	// Set sets key to value; the store copies both.
	Set(key, value []byte) error
	// Delete removes key (a missing key is not an error).
	Delete(key []byte) error
	// SetAll sets every entry of seq, in batches: a restore's bulk load.
	// The slices are valid during the yield only.
	SetAll(seq iter.Seq2[[]byte, []byte]) error
	// Scan calls fn with each entry whose key is in [lo, hi), in key
	// order; the slices are valid during the call only. fn may write to
	// the store: the scan does not see those writes.
	Scan(lo, hi []byte, fn func(key, value []byte) error) error
	// Close releases the store (its files are the opener's to remove).
	Close() error
}

// StoredDecoder is implemented by a codec that can read what it wrote
// into a Store faster than Decode reads a snapshot's bytes, skipping
// checks its writes and a restore's Decode made already.
type StoredDecoder[T any] interface {
	DecodeStored(b []byte) (T, error)
}

// NewKeyedBackendOn returns an empty backend for key groups rng whose
// value state lives in store. Only value state can (map, list and timer
// state are refused at declaration until they are built); the backend
// owns store and closes it in Close.
func NewKeyedBackendOn(maxParallelism int, rng KeyGroupRange, store Store) *KeyedBackend {
	b := NewKeyedBackend(maxParallelism, rng)
	b.store = store
	return b
}

// OnStore reports whether the backend keeps its state in a Store.
func (b *KeyedBackend) OnStore() bool { return b.store != nil }

// Close releases the backend's store, if it has one.
func (b *KeyedBackend) Close() error {
	if b.store == nil {
		return nil
	}
	s := b.store
	b.store = nil
	return s.Close()
}

// storeFailed is what a state handle does with an error of the store on
// the record path, where the handles return none: the subtask fails (the
// engine turns a panic into a task failure) and restarts from its last
// checkpoint, which the store is not part of.
func storeFailed(op, table string, err error) {
	panic(fmt.Sprintf("keyed state %q: %s: %v", table, op, err))
}

// storeKeyPrefix is the length of a store key's table id and key group.
const storeKeyPrefix = 4

// appendStoreKey appends the store key of key in key group kg of table
// id: the id and the group big endian, so a group is one key range.
func appendStoreKey(dst []byte, id uint16, kg int, key []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, id)
	dst = binary.BigEndian.AppendUint16(dst, uint16(kg))
	return append(dst, key...)
}

// groupBounds returns the key range [lo, hi) of key group kg of table id.
func groupBounds(id uint16, kg int) (lo, hi []byte) {
	lo = appendStoreKey(nil, id, kg, nil)
	hi = appendStoreKey(nil, id, kg+1, nil)
	if kg+1 > 0xFFFF { // the last possible group: the next table's start
		hi = appendStoreKey(nil, id+1, 0, nil)
	}
	return lo, hi
}

// kvTable is a value table's place in the store: its id, its entries per
// key group (counted, as a snapshot writes a group's count first), and
// what it knows of the current key.
type kvTable struct {
	b      *KeyedBackend
	name   string
	id     uint16
	counts []int // entries per group index
	key    []byte
	keyGen uint64 // the backend's keyGen key was built for (0: none)
	// exists is whether key has a value, known for keyGen known: a Put
	// after a Get of the same key counts without a second lookup.
	known  uint64
	exists bool
	val    []byte // scratch for encoding
}

func newKVTable(b *KeyedBackend, name string) *kvTable {
	b.nextTableID++
	return &kvTable{b: b, name: name, id: b.nextTableID, counts: make([]int, b.rng.Len())}
}

// curKey returns the store key of the backend's current key.
func (t *kvTable) curKey() []byte {
	if t.keyGen != t.b.keyGen {
		t.key = appendStoreKey(t.key[:0], t.id, t.b.rng.Start+t.b.curKG, t.b.curKey)
		t.keyGen = t.b.keyGen
	}
	return t.key
}

// get returns the current key's encoded value.
func (t *kvTable) get() ([]byte, bool) {
	v, ok, err := t.b.store.Get(t.curKey())
	if err != nil {
		storeFailed("get", t.name, err)
	}
	t.known, t.exists = t.b.keyGen, ok
	return v, ok
}

// put sets the current key's encoded value.
func (t *kvTable) put(v []byte) {
	if t.known != t.b.keyGen {
		t.get()
	}
	if err := t.b.store.Set(t.curKey(), v); err != nil {
		storeFailed("put", t.name, err)
	}
	if !t.exists {
		t.counts[t.b.curKG]++
		t.exists = true
	}
}

func (t *kvTable) delete() {
	if t.known != t.b.keyGen {
		t.get()
	}
	if !t.exists {
		return
	}
	if err := t.b.store.Delete(t.curKey()); err != nil {
		storeFailed("delete", t.name, err)
	}
	t.counts[t.b.curKG]--
	t.exists = false
}

// scanGroup calls fn with the user key and value of every entry of group
// index g.
func (t *kvTable) scanGroup(g int, fn func(storeKey, key, value []byte) error) error {
	lo, hi := groupBounds(t.id, t.b.rng.Start+g)
	return t.b.store.Scan(lo, hi, func(k, v []byte) error { return fn(k, k[storeKeyPrefix:], v) })
}

func (t *kvTable) numKeys() int {
	n := 0
	for _, c := range t.counts {
		n += c
	}
	return n
}

// encodeGroup appends group g's entries as the heap backend does: the key,
// then the codec's bytes, which is what the store holds.
func (t *kvTable) encodeGroup(g int, e *encoder) {
	n := 0
	err := t.scanGroup(g, func(_, k, v []byte) error {
		e.bytes(k)
		e.bytes(v)
		e.maybeCut()
		n++
		return nil
	})
	if err != nil {
		storeFailed("snapshot", t.name, err)
	}
	if n != t.counts[g] { // the count was written before the entries
		panic(fmt.Sprintf("keyed state %q: key group %d has %d entries, counted %d (bug)", t.name, t.b.rng.Start+g, n, t.counts[g]))
	}
}

// restoreGroup loads restored parts of group index g, each value checked
// by check (its codec) first, as the heap backend decodes each.
func (t *kvTable) restoreGroup(g int, parts []rawGroup, check func([]byte) error) error {
	if len(parts) > 1 { // overlapping old snapshots: a key may repeat
		t.known = 0
		for _, part := range parts {
			err := part.Each(func(k, v []byte) error {
				if err := check(v); err != nil {
					return err
				}
				sk := appendStoreKey(nil, t.id, t.b.rng.Start+g, k)
				if _, ok, err := t.b.store.Get(sk); err != nil {
					return err
				} else if !ok {
					t.counts[g]++
				}
				return t.b.store.Set(sk, v)
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	var failed error
	var sk []byte
	n := 0
	err := t.b.store.SetAll(func(yield func([]byte, []byte) bool) {
		failed = parts[0].Each(func(k, v []byte) error {
			if err := check(v); err != nil {
				return err
			}
			sk = appendStoreKey(sk[:0], t.id, t.b.rng.Start+g, k)
			n++
			if !yield(sk, v) {
				return errStopped
			}
			return nil
		})
	})
	if failed != nil {
		return failed
	}
	t.counts[g] += n
	return err
}

var errStopped = fmt.Errorf("stopped")
