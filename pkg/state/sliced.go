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
	// keys[g] counts, per key of key group g (index into the range), the
	// slices holding it: what a snapshot encodes group by group.
	keys  []map[string]int32
	nkeys int
	n     int       // entries, over all slices
	last  *Slice[V] // the slice Get or Put found last
}

// Slice is one time slice: the value of each key that has one.
type Slice[V any] struct {
	Start int64
	m     map[string]V
}

// Len is the number of keys with a value in the slice.
func (sl *Slice[V]) Len() int { return len(sl.m) }

// Get returns key's value in the slice.
func (sl *Slice[V]) Get(key []byte) (V, bool) {
	v, ok := sl.m[string(key)]
	return v, ok
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
	s := &Sliced[V]{b: b, vc: vc, slices: map[int64]*Slice[V]{}, keys: make([]map[string]int32, b.rng.Len())}
	for i := range s.keys {
		s.keys[i] = map[string]int32{}
	}
	if err := b.declare(name, KindMap, s); err != nil {
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
	return s.count(s.b.curKG, k)
}

// count adds a value of key k (of group index g) and reports whether it is
// the key's first.
func (s *Sliced[V]) count(g int, k string) (newKey bool) {
	s.n++
	c := s.keys[g][k]
	s.keys[g][k] = c + 1
	if c == 0 {
		s.nkeys++
	}
	return c == 0
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
		if c := s.keys[g][k]; c > 1 {
			s.keys[g][k] = c - 1
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

func (s *Sliced[V]) kind() Kind { return KindMap }

func (s *Sliced[V]) numKeys() int { return s.nkeys }

func (s *Sliced[V]) groupLen(g int) int { return len(s.keys[g]) }

// encodeGroup writes what Map.encodeGroup writes: per key, its count, then
// each slice start (Int64Codec) and value, length-prefixed.
func (s *Sliced[V]) encodeGroup(g int, e *encoder) {
	for k, n := range s.keys[g] {
		e.str(k)
		e.lenPrefixed(func(dst []byte) []byte {
			inner := encoder{buf: dst}
			inner.uvarint(uint64(n))
			for _, start := range s.starts {
				v, ok := s.slices[start].m[k]
				if !ok {
					continue
				}
				inner.lenPrefixed(func(d []byte) []byte { return Int64Codec{}.Append(d, start) })
				inner.lenPrefixed(func(d []byte) []byte { return s.vc.Append(d, v) })
			}
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
			s.count(g, k)
		}
		sl.m[k] = v
	}
	return d.err
}
