package state

// Map is a map of user keys to values per key (Flink's MapState). User keys
// are encoded with their own codec (StringCodec for strings).
type Map[K comparable, V any] struct {
	b      *KeyedBackend
	groups []map[string]map[K]V
	kc     Codec[K]
	vc     Codec[V]
	// The current key's map, valid while the backend's keyGen is cacheGen
	// (several calls per record look the key up once).
	cacheGen uint64
	cache    map[K]V
}

// current returns the current key's map (nil when it has none).
func (s *Map[K, V]) current() map[K]V {
	if s.cacheGen == s.b.keyGen && s.cacheGen != 0 {
		return s.cache
	}
	m := s.groups[s.b.curKG][string(s.b.curKey)]
	s.cacheGen, s.cache = s.b.keyGen, m
	return m
}

// NewMap declares (or returns the restored) map state name.
func NewMap[K comparable, V any](b *KeyedBackend, name string, kc Codec[K], vc Codec[V]) (*Map[K, V], error) {
	s := &Map[K, V]{b: b, groups: make([]map[string]map[K]V, b.rng.Len()), kc: kc, vc: vc}
	for i := range s.groups {
		s.groups[i] = map[string]map[K]V{}
	}
	if err := b.declare(name, KindMap, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Get returns the value at user key uk of the current key.
func (s *Map[K, V]) Get(uk K) (V, bool) {
	v, ok := s.current()[uk]
	return v, ok
}

// Put sets user key uk of the current key.
func (s *Map[K, V]) Put(uk K, v V) {
	m := s.current()
	if m == nil {
		m = map[K]V{}
		s.groups[s.b.curKG][string(s.b.curKey)] = m
		s.cache = m
	}
	m[uk] = v
}

// Remove deletes user key uk of the current key.
func (s *Map[K, V]) Remove(uk K) {
	if m := s.current(); m != nil {
		delete(m, uk)
		if len(m) == 0 {
			delete(s.groups[s.b.curKG], string(s.b.curKey))
			s.cache = nil
		}
	}
}

// Len is the number of user keys of the current key.
func (s *Map[K, V]) Len() int { return len(s.current()) }

// Clear removes every user key of the current key.
func (s *Map[K, V]) Clear() {
	delete(s.groups[s.b.curKG], string(s.b.curKey))
	s.cache, s.cacheGen = nil, 0
}

// Range calls fn for every user key of the current key, in no order, until
// fn returns false. fn must not modify the map.
func (s *Map[K, V]) Range(fn func(uk K, v V) bool) {
	for k, v := range s.current() {
		if !fn(k, v) {
			return
		}
	}
}

func (s *Map[K, V]) kind() Kind { return KindMap }

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
	for k, m := range s.groups[g] {
		e.str(k)
		e.lenPrefixed(func(dst []byte) []byte {
			inner := encoder{buf: dst}
			inner.uvarint(uint64(len(m)))
			for uk, v := range m {
				inner.lenPrefixed(func(d []byte) []byte { return s.kc.Append(d, uk) })
				inner.lenPrefixed(func(d []byte) []byte { return s.vc.Append(d, v) })
			}
			return inner.buf
		})
	}
}

func (s *Map[K, V]) decodeEntry(g int, key, value []byte) error {
	s.cacheGen, s.cache = 0, nil
	d := decoder{buf: value}
	n := d.uvarint()
	m := make(map[K]V, min(n, uint64(len(value)))) // a corrupt count must not allocate
	for i := uint64(0); i < n && d.err == nil; i++ {
		uk, err := s.kc.Decode(d.bytes())
		if err != nil {
			return err
		}
		v, err := s.vc.Decode(d.bytes())
		if err != nil {
			return err
		}
		m[uk] = v
	}
	if d.err != nil {
		return d.err
	}
	s.groups[g][string(key)] = m
	return nil
}

// NumKeys is the number of keys with entries (for metrics).
func (s *Map[K, V]) NumKeys() int { return s.numKeys() }

// TotalLen is the number of user keys over all keys (for metrics).
func (s *Map[K, V]) TotalLen() int {
	n := 0
	for _, g := range s.groups {
		for _, m := range g {
			n += len(m)
		}
	}
	return n
}
