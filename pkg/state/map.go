package state

// Map is a map of user keys to values per key (Flink's MapState). User keys
// are encoded with their own codec (StringCodec for strings).
//
// A key's entries are a small slice while there are few of them (a window
// key has one to a few panes: a Go map per key cost more than the panes),
// and a map past smallMax.
type Map[K comparable, V any] struct {
	b      *KeyedBackend
	groups []map[string]*keyMap[K, V]
	kc     Codec[K]
	vc     Codec[V]
	// The current key's entries, valid while the backend's keyGen is
	// cacheGen (several calls per record look the key up once).
	cacheGen uint64
	cache    *keyMap[K, V]
}

// smallMax is how many user keys a key holds in a slice before a map.
const smallMax = 8

// keyMap is one key's entries.
type keyMap[K comparable, V any] struct {
	small  []mapEntry[K, V] // while m is nil
	m      map[K]V
	aux    any
	inline [2]mapEntry[K, V]
}

type mapEntry[K comparable, V any] struct {
	k K
	v V
}

func newKeyMap[K comparable, V any](n int) *keyMap[K, V] {
	km := &keyMap[K, V]{}
	switch {
	case n <= len(km.inline):
		km.small = km.inline[:0]
	case n <= smallMax:
		km.small = make([]mapEntry[K, V], 0, n)
	default:
		km.m = make(map[K]V, n)
	}
	return km
}

func (km *keyMap[K, V]) get(uk K) (V, bool) {
	if km.m != nil {
		v, ok := km.m[uk]
		return v, ok
	}
	for i := range km.small {
		if km.small[i].k == uk {
			return km.small[i].v, true
		}
	}
	var zero V
	return zero, false
}

func (km *keyMap[K, V]) put(uk K, v V) {
	if km.m != nil {
		km.m[uk] = v
		return
	}
	for i := range km.small {
		if km.small[i].k == uk {
			km.small[i].v = v
			return
		}
	}
	if len(km.small) < smallMax {
		km.small = append(km.small, mapEntry[K, V]{uk, v})
		return
	}
	km.m = make(map[K]V, 2*smallMax)
	for _, e := range km.small {
		km.m[e.k] = e.v
	}
	km.m[uk] = v
	km.small = nil
	clear(km.inline[:])
}

func (km *keyMap[K, V]) remove(uk K) {
	if km.m != nil {
		delete(km.m, uk)
		return
	}
	for i := range km.small {
		if km.small[i].k == uk {
			last := len(km.small) - 1
			km.small[i] = km.small[last]
			km.small[last] = mapEntry[K, V]{}
			km.small = km.small[:last]
			return
		}
	}
}

func (km *keyMap[K, V]) len() int {
	if km.m != nil {
		return len(km.m)
	}
	return len(km.small)
}

func (km *keyMap[K, V]) each(fn func(uk K, v V) bool) {
	if km.m != nil {
		for k, v := range km.m {
			if !fn(k, v) {
				return
			}
		}
		return
	}
	for _, e := range km.small {
		if !fn(e.k, e.v) {
			return
		}
	}
}

// current returns the current key's entries (nil when it has none).
func (s *Map[K, V]) current() *keyMap[K, V] {
	if s.cacheGen == s.b.keyGen && s.cacheGen != 0 {
		return s.cache
	}
	km := s.groups[s.b.curKG][string(s.b.curKey)]
	s.cacheGen, s.cache = s.b.keyGen, km
	return km
}

// NewMap declares (or returns the restored) map state name.
func NewMap[K comparable, V any](b *KeyedBackend, name string, kc Codec[K], vc Codec[V]) (*Map[K, V], error) {
	s := &Map[K, V]{b: b, groups: make([]map[string]*keyMap[K, V], b.rng.Len()), kc: kc, vc: vc}
	for i := range s.groups {
		s.groups[i] = map[string]*keyMap[K, V]{}
	}
	if err := b.declare(name, kindMap, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Get returns the value at user key uk of the current key.
func (s *Map[K, V]) Get(uk K) (V, bool) {
	km := s.current()
	if km == nil {
		var zero V
		return zero, false
	}
	return km.get(uk)
}

// Put sets user key uk of the current key.
func (s *Map[K, V]) Put(uk K, v V) {
	km := s.current()
	if km == nil {
		km = newKeyMap[K, V](1)
		s.groups[s.b.curKG][string(s.b.curKey)] = km
		s.cache = km
	}
	km.put(uk, v)
}

// Remove deletes user key uk of the current key.
func (s *Map[K, V]) Remove(uk K) {
	if km := s.current(); km != nil {
		km.remove(uk)
		if km.len() == 0 {
			delete(s.groups[s.b.curKG], string(s.b.curKey))
			s.cache = nil
		}
	}
}

// Len is the number of user keys of the current key.
func (s *Map[K, V]) Len() int {
	if km := s.current(); km != nil {
		return km.len()
	}
	return 0
}

// Clear removes every user key of the current key.
func (s *Map[K, V]) Clear() {
	delete(s.groups[s.b.curKG], string(s.b.curKey))
	s.cache, s.cacheGen = nil, 0
}

// Range calls fn for every user key of the current key, in no order, until
// fn returns false. fn must not modify the map.
func (s *Map[K, V]) Range(fn func(uk K, v V) bool) {
	if km := s.current(); km != nil {
		km.each(fn)
	}
}

// Aux returns the value SetAux attached to the current key's entries (nil
// when none, or when the key has no entries).
func (s *Map[K, V]) Aux() any {
	if km := s.current(); km != nil {
		return km.aux
	}
	return nil
}

// SetAux attaches a to the current key's entries: a value the operator
// derives from them, kept in memory with them (found by the same lookup),
// never snapshotted, and dropped with the key's last entry. A key without
// entries keeps nothing.
func (s *Map[K, V]) SetAux(a any) {
	if km := s.current(); km != nil {
		km.aux = a
	}
}

func (s *Map[K, V]) kind() tableKind { return kindMap }

func (s *Map[K, V]) numKeys() int {
	n := 0
	for _, g := range s.groups {
		n += len(g)
	}
	return n
}

// Map entries are encoded as key → (count, then user key and value pairs,
// each length-prefixed).
func (s *Map[K, V]) groupLen(g int) int { return len(s.groups[g]) }

func (s *Map[K, V]) encodeGroup(g int, e *encoder) {
	for k, km := range s.groups[g] {
		e.str(k)
		e.lenPrefixed(func(dst []byte) []byte {
			inner := encoder{buf: dst}
			inner.uvarint(uint64(km.len()))
			km.each(func(uk K, v V) bool {
				inner.lenPrefixed(func(d []byte) []byte { return s.kc.Append(d, uk) })
				inner.lenPrefixed(func(d []byte) []byte { return s.vc.Append(d, v) })
				return true
			})
			return inner.buf
		})
	}
}

func (s *Map[K, V]) decodeEntry(g int, key, value []byte) error {
	s.cacheGen, s.cache = 0, nil
	d := decoder{buf: value}
	n := d.uvarint()
	km := newKeyMap[K, V](int(min(n, uint64(len(value))))) // a corrupt count must not allocate
	for i := uint64(0); i < n && d.err == nil; i++ {
		uk, err := s.kc.Decode(d.bytes())
		if err != nil {
			return err
		}
		v, err := s.vc.Decode(d.bytes())
		if err != nil {
			return err
		}
		km.put(uk, v)
	}
	if d.err != nil {
		return d.err
	}
	s.groups[g][string(key)] = km
	return nil
}

// NumKeys is the number of keys with entries (for metrics).
func (s *Map[K, V]) NumKeys() int { return s.numKeys() }

// TotalLen is the number of user keys over all keys (for metrics).
func (s *Map[K, V]) TotalLen() int {
	n := 0
	for _, g := range s.groups {
		for _, km := range g {
			n += km.len()
		}
	}
	return n
}
