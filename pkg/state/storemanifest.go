package state

import (
	"fmt"
	"sort"
)

// An incremental checkpoint of a store (the pebble backend's) keeps the
// store's files, not its entries in the state file. What the backend knows
// of the store beside its entries (each value table's name, id and entries
// per key group) goes into the store too, under storeManifestKey, before
// the files are taken: a backend restored from the files reads it back
// (RestoreStore) and needs nothing else.

// storeManifestKey is below every table's keys (table ids start at 1), so
// no scan of a table sees it.
var storeManifestKey = []byte{0, 0, 'm'}

const storeManifestVersion = 1

// inStorer is implemented by the tables whose entries are in the store.
type inStorer interface{ inStore() bool }

func inStore(t table) bool {
	s, ok := t.(inStorer)
	return ok && s.inStore()
}

// storeTables returns the backend's tables in the store, by name.
func (b *KeyedBackend) storeTables() []*kvTable {
	var out []*kvTable
	for _, t := range b.tables {
		switch x := t.(type) {
		case *storedTable:
			out = append(out, x.kv)
		case interface{ kvTable() *kvTable }:
			if kv := x.kvTable(); kv != nil {
				out = append(out, kv)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// WriteStoreManifest writes the manifest of the backend's store tables
// into the store: at an incremental checkpoint's barrier, before the
// store's files are taken.
func (b *KeyedBackend) WriteStoreManifest() error {
	if b.store == nil {
		return fmt.Errorf("keyed state is not in a store (bug: incremental checkpoint of a heap backend)")
	}
	e := &encoder{}
	e.uvarint(storeManifestVersion)
	e.uvarint(uint64(b.maxParallelism))
	e.uvarint(uint64(b.rng.Start))
	e.uvarint(uint64(b.rng.End))
	ts := b.storeTables()
	e.uvarint(uint64(len(ts)))
	for _, t := range ts {
		e.str(t.name)
		e.uvarint(uint64(t.id))
		for _, c := range t.counts {
			e.uvarint(uint64(c))
		}
	}
	return b.store.Set(storeManifestKey, e.buf)
}

// RestoreStore makes the tables of a store opened from an incremental
// checkpoint's files the backend's: each is restored state, kept in the
// store, and the operator's declaration of the same name takes it over.
// It must run before any declaration; a store without a manifest (a new
// one) restores nothing.
func (b *KeyedBackend) RestoreStore() error {
	if b.store == nil {
		return fmt.Errorf("keyed state is not in a store (bug)")
	}
	data, ok, err := b.store.Get(storeManifestKey)
	if err != nil || !ok {
		return err
	}
	d := &decoder{buf: append([]byte(nil), data...)}
	if v := d.uvarint(); v != storeManifestVersion && d.err == nil {
		return fmt.Errorf("the pebble state's manifest has version %d, this flinkgo reads %d: restore with the flinkgo that wrote it, or from a savepoint", v, storeManifestVersion)
	}
	mp, start, end := int(d.uvarint()), int(d.uvarint()), int(d.uvarint())
	if d.err == nil && (mp != b.maxParallelism || start != b.rng.Start || end != b.rng.End) {
		return fmt.Errorf("the pebble state holds key groups %d-%d of %d, this subtask owns %s of %d: an incremental checkpoint restores at the parallelism that took it only (take a savepoint to change it)", start, end, mp, b.rng, b.maxParallelism)
	}
	n := d.uvarint()
	for i := uint64(0); i < n && d.err == nil; i++ {
		name := string(d.bytes())
		id := d.uvarint()
		t := &kvTable{b: b, name: name, id: uint16(id), counts: make([]int, b.rng.Len())}
		for g := range t.counts {
			t.counts[g] = int(d.uvarint())
		}
		if d.err != nil {
			break
		}
		if id == 0 || id > 0xFFFF {
			return fmt.Errorf("the pebble state's manifest is damaged: table %q has id %d", name, id)
		}
		b.tables[name] = &storedTable{kv: t}
		b.restored[name] = true
		b.nextTableID = max(b.nextTableID, uint16(id))
	}
	if d.err != nil {
		return fmt.Errorf("the pebble state's manifest is damaged: %w", d.err)
	}
	return nil
}

// storedTable is a value table restored in a store and not declared
// (yet): snapshots carry it as it is, and NewValue of its name takes it.
type storedTable struct{ kv *kvTable }

func (s *storedTable) kind() tableKind               { return kindValue }
func (s *storedTable) numKeys() int                  { return s.kv.numKeys() }
func (s *storedTable) groupLen(g int) int            { return s.kv.counts[g] }
func (s *storedTable) encodeGroup(g int, e *encoder) { s.kv.encodeGroup(g, e) }
func (s *storedTable) inStore() bool                 { return true }
func (s *storedTable) decodeEntry(int, []byte, []byte) error {
	return fmt.Errorf("keyed state %q is restored in the store (bug: decoded as a snapshot)", s.kv.name)
}

// takeStored returns the restored store table name, removed from the
// backend's tables for its declaration; nil when there is none.
func (b *KeyedBackend) takeStored(name string) *kvTable {
	st, ok := b.tables[name].(*storedTable)
	if !ok {
		return nil
	}
	delete(b.tables, name)
	return st.kv
}
