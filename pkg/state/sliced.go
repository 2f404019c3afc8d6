package state

import (
	"slices"
	"unsafe"
)

// Sliced is map state from time slices (a window's panes, by start) to a
// value per key, laid out slice by slice: each slice holds the values of
// all its keys. A record updates one entry of its slice, and a window
// reads its slices whole, for every key at once, instead of one key at a
// time; dropping a slice drops it for every key.
//
// It is snapshotted exactly as Map[int64, V] with Int64Codec is (key →
// slice start → value), so either layout restores the other's state.
type Sliced[V any] struct {
	b      *KeyedBackend
	vc     Codec[V]
	slices map[int64]*Slice[V]
	starts []int64 // of slices, ascending
	// keys[g] lists, per key of key group g (index into the range), the
	// slices holding it: a snapshot encodes group by group, key by key,
	// and finds each key's values without probing every slice.
	keys  []map[string]keyStarts
	nkeys int
	n     int       // entries, over all slices
	last  *Slice[V] // the slice Get or Put found last
}

// keyStarts is the starts of the slices holding a key, in no order: one
// inline (most keys are in one or a few), the rest in more.
type keyStarts struct {
	one  int64
	n    int32
	more []int64 // the starts after one, while n > 1
}

func (ks *keyStarts) add(start int64) {
	if ks.n > 0 {
		ks.more = append(ks.more, start)
	} else {
		ks.one = start
	}
	ks.n++
}

// remove drops start, which ks holds.
func (ks *keyStarts) remove(start int64) {
	ks.n--
	if ks.one == start {
		if len(ks.more) > 0 {
			ks.one = ks.more[len(ks.more)-1]
			ks.more = ks.more[:len(ks.more)-1]
		}
	} else if i := slices.Index(ks.more, start); i >= 0 {
		ks.more[i] = ks.more[len(ks.more)-1]
		ks.more = ks.more[:len(ks.more)-1]
	}
	if len(ks.more) == 0 {
		ks.more = nil
	}
}

// each calls fn with every start.
func (ks *keyStarts) each(fn func(start int64)) {
	if ks.n == 0 {
		return
	}
	fn(ks.one)
	for _, st := range ks.more {
		fn(st)
	}
}

// Slice is one time slice: the value of each key that has one.
type Slice[V any] struct {
	Start int64
	m     map[string]V
}

// Range calls fn with every key of the slice and its value, in no order,
// until fn returns false. fn must not add or drop entries.
func (sl *Slice[V]) Range(fn func(key string, v V) bool) {
	for k, v := range sl.m {
		if !fn(k, v) {
			return
		}
	}
}

// NewSliced declares (or returns the restored) sliced map state name.
func NewSliced[V any](b *KeyedBackend, name string, vc Codec[V]) (*Sliced[V], error) {
	s := &Sliced[V]{b: b, vc: vc, slices: map[int64]*Slice[V]{}, keys: make([]map[string]keyStarts, b.rng.Len())}
	for i := range s.keys {
		s.keys[i] = map[string]keyStarts{}
	}
	if err := b.declare(name, kindMap, s); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Sliced[V]) find(start int64) *Slice[V] {
	if s.last != nil && s.last.Start == start {
		return s.last
	}
	sl := s.slices[start]
	if sl != nil {
		s.last = sl
	}
	return sl
}

// Get returns the current key's value in the slice starting at start.
func (s *Sliced[V]) Get(start int64) (V, bool) {
	if sl := s.find(start); sl != nil {
		v, ok := sl.m[string(s.b.curKey)]
		return v, ok
	}
	var zero V
	return zero, false
}

// Put sets the current key's value in the slice starting at start, and
// reports whether the key had no value in any slice before.
func (s *Sliced[V]) Put(start int64, v V) (newKey bool) {
	sl := s.find(start)
	if sl == nil {
		sl = s.slice(start)
	}
	if _, ok := sl.m[string(s.b.curKey)]; ok {
		sl.m[string(s.b.curKey)] = v
		return false
	}
	k := string(s.b.curKey)
	sl.m[k] = v
	return s.count(s.b.curKG, k, start)
}

// count adds key k's (of group index g) value in the slice at start, and
// reports whether it is the key's first.
func (s *Sliced[V]) count(g int, k string, start int64) (newKey bool) {
	s.n++
	ks := s.keys[g][k]
	newKey = ks.n == 0
	ks.add(start)
	s.keys[g][k] = ks
	if newKey {
		s.nkeys++
	}
	return newKey
}

// slice returns the slice starting at start, created empty if missing.
func (s *Sliced[V]) slice(start int64) *Slice[V] {
	if sl := s.slices[start]; sl != nil {
		return sl
	}
	sl := &Slice[V]{Start: start, m: map[string]V{}}
	s.slices[start] = sl
	i, _ := slices.BinarySearch(s.starts, start)
	s.starts = slices.Insert(s.starts, i, start)
	s.last = sl
	return sl
}

// Slice returns the slice starting at start (nil when none).
func (s *Sliced[V]) Slice(start int64) *Slice[V] { return s.slices[start] }

// Starts returns the starts of all slices, ascending. The slice is the
// state's own: it is valid until the next Put or Drop, and must not be
// modified.
func (s *Sliced[V]) Starts() []int64 { return s.starts }

// Drop removes the slice starting at start, for every key, and reports how
// many entries and how many keys (those it held the last value of) went
// with it.
func (s *Sliced[V]) Drop(start int64) (entries, keys int) {
	sl := s.slices[start]
	if sl == nil {
		return 0, 0
	}
	for k := range sl.m {
		g := KeyGroup(unsafe.Slice(unsafe.StringData(k), len(k)), s.b.maxParallelism) - s.b.rng.Start
		if ks := s.keys[g][k]; ks.n > 1 {
			ks.remove(start)
			s.keys[g][k] = ks
		} else {
			delete(s.keys[g], k)
			keys++
		}
	}
	entries = len(sl.m)
	s.n -= entries
	s.nkeys -= keys
	delete(s.slices, start)
	i, _ := slices.BinarySearch(s.starts, start)
	s.starts = slices.Delete(s.starts, i, i+1)
	if s.last == sl {
		s.last = nil
	}
	return entries, keys
}

// Len is the number of entries (key and slice) over all slices.
func (s *Sliced[V]) Len() int { return s.n }

// NumKeys is the number of keys with a value in some slice.
func (s *Sliced[V]) NumKeys() int { return s.nkeys }

func (s *Sliced[V]) kind() tableKind { return kindMap }

func (s *Sliced[V]) numKeys() int { return s.nkeys }

func (s *Sliced[V]) groupLen(g int) int { return len(s.keys[g]) }

// encodeGroup writes what Map.encodeGroup writes: per key, its count, then
// each slice start (Int64Codec) and value, length-prefixed (the starts in
// no order, as a Map's user keys).
func (s *Sliced[V]) encodeGroup(g int, e *encoder) {
	for k, ks := range s.keys[g] {
		e.str(k)
		e.lenPrefixed(func(dst []byte) []byte {
			inner := encoder{buf: dst}
			inner.uvarint(uint64(ks.n))
			ks.each(func(start int64) {
				v := s.slices[start].m[k]
				inner.lenPrefixed(func(d []byte) []byte { return Int64Codec{}.Append(d, start) })
				inner.lenPrefixed(func(d []byte) []byte { return s.vc.Append(d, v) })
			})
			return inner.buf
		})
	}
}

func (s *Sliced[V]) decodeEntry(g int, key, value []byte) error {
	d := decoder{buf: value}
	n := d.uvarint()
	k := string(key)
	for i := uint64(0); i < n && d.err == nil; i++ {
		start, err := Int64Codec{}.Decode(d.bytes())
		if err != nil {
			return err
		}
		v, err := s.vc.Decode(d.bytes())
		if err != nil {
			return err
		}
		sl := s.slice(start)
		if _, dup := sl.m[k]; !dup { // parts of one key group from two old snapshots
			s.count(g, k, start)
		}
		sl.m[k] = v
	}
	return d.err
}
