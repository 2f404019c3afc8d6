package state

// Map is a map of user keys to values per key (Flink's MapState). User keys
// are encoded with their own codec (StringCodec for strings).
type Map[K comparable, V any] struct {
	b      *KeyedBackend
	groups []map[string]map[K]V
	kc     Codec[K]
	vc     Codec[V]
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
	v, ok := s.groups[s.b.curKG][string(s.b.curKey)][uk]
	return v, ok
}

// Put sets user key uk of the current key.
func (s *Map[K, V]) Put(uk K, v V) {
	g := s.groups[s.b.curKG]
	m := g[string(s.b.curKey)]
	if m == nil {
		m = map[K]V{}
		g[string(s.b.curKey)] = m
	}
	m[uk] = v
}

// Remove deletes user key uk of the current key.
func (s *Map[K, V]) Remove(uk K) {
	g := s.groups[s.b.curKG]
	if m := g[string(s.b.curKey)]; m != nil {
		delete(m, uk)
		if len(m) == 0 {
			delete(g, string(s.b.curKey))
		}
	}
}

// Len is the number of user keys of the current key.
func (s *Map[K, V]) Len() int { return len(s.groups[s.b.curKG][string(s.b.curKey)]) }

// Clear removes every user key of the current key.
func (s *Map[K, V]) Clear() { delete(s.groups[s.b.curKG], string(s.b.curKey)) }

// Range calls fn for every user key of the current key, in no order, until
// fn returns false. fn must not modify the map.
func (s *Map[K, V]) Range(fn func(uk K, v V) bool) {
	for k, v := range s.groups[s.b.curKG][string(s.b.curKey)] {
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
