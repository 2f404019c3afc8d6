package state

// Codec encodes state values for snapshots. Decode must not keep b: it
// points into a snapshot buffer.
type Codec[T any] interface {
	Append(dst []byte, v T) []byte
	Decode(b []byte) (T, error)
}

// ValueState is one value per key (Flink's ValueState).
type ValueState[T any] struct {
	b      *KeyedBackend
	groups []map[string]T
	codec  Codec[T]
}

// ValueOf declares (or returns the restored) value state name.
func ValueOf[T any](b *KeyedBackend, name string, codec Codec[T]) (*ValueState[T], error) {
	s := &ValueState[T]{b: b, groups: make([]map[string]T, b.rng.Len()), codec: codec}
	for i := range s.groups {
		s.groups[i] = map[string]T{}
	}
	if err := b.declare(name, KindValue, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Get returns the value of the current key.
func (s *ValueState[T]) Get() (T, bool) {
	v, ok := s.groups[s.b.curKG][string(s.b.curKey)]
	return v, ok
}

// Put sets the value of the current key.
func (s *ValueState[T]) Put(v T) {
	g := s.groups[s.b.curKG]
	if _, ok := g[string(s.b.curKey)]; ok {
		g[string(s.b.curKey)] = v // no key allocation on update
		return
	}
	g[string(s.b.curKey)] = v
}

// Delete removes the current key's value.
func (s *ValueState[T]) Delete() { delete(s.groups[s.b.curKG], string(s.b.curKey)) }

func (s *ValueState[T]) kind() Kind { return KindValue }

func (s *ValueState[T]) presize(g, n int) {
	if len(s.groups[g]) == 0 {
		s.groups[g] = make(map[string]T, n)
	}
}

func (s *ValueState[T]) numKeys() int {
	n := 0
	for _, g := range s.groups {
		n += len(g)
	}
	return n
}

func (s *ValueState[T]) groupLen(g int) int { return len(s.groups[g]) }

func (s *ValueState[T]) encodeGroup(g int, e *encoder) {
	for k, v := range s.groups[g] {
		e.str(k)
		e.lenPrefixed(func(dst []byte) []byte { return s.codec.Append(dst, v) })
	}
}

func (s *ValueState[T]) decodeEntry(g int, key, value []byte) error {
	v, err := s.codec.Decode(value)
	if err != nil {
		return err
	}
	s.groups[g][string(key)] = v
	return nil
}

// ReducingState keeps one value per key, combined with each added value by
// a reduce function (Flink's ReducingState).
type ReducingState[T any] struct {
	*ValueState[T]
	reduce func(acc, v T) (T, error)
}

// ReducingOf declares a reducing state.
func ReducingOf[T any](b *KeyedBackend, name string, codec Codec[T], reduce func(acc, v T) (T, error)) (*ReducingState[T], error) {
	v, err := ValueOf(b, name, codec)
	if err != nil {
		return nil, err
	}
	return &ReducingState[T]{ValueState: v, reduce: reduce}, nil
}

// Add combines v into the current key's value and returns the result.
func (s *ReducingState[T]) Add(v T) (T, error) {
	acc, ok := s.Get()
	if !ok {
		s.Put(v)
		return v, nil
	}
	out, err := s.reduce(acc, v)
	if err != nil {
		return out, err
	}
	s.Put(out)
	return out, nil
}

// MapState is a map of user keys to values per key (Flink's MapState).
type MapState[T any] struct {
	b      *KeyedBackend
	groups []map[string]map[string]T
	codec  Codec[T]
}

// MapOf declares a map state.
func MapOf[T any](b *KeyedBackend, name string, codec Codec[T]) (*MapState[T], error) {
	s := &MapState[T]{b: b, groups: make([]map[string]map[string]T, b.rng.Len()), codec: codec}
	for i := range s.groups {
		s.groups[i] = map[string]map[string]T{}
	}
	if err := b.declare(name, KindMap, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Get returns the value at user key uk of the current key.
func (s *MapState[T]) Get(uk string) (T, bool) {
	v, ok := s.groups[s.b.curKG][string(s.b.curKey)][uk]
	return v, ok
}

// Put sets user key uk of the current key.
func (s *MapState[T]) Put(uk string, v T) {
	g := s.groups[s.b.curKG]
	m := g[string(s.b.curKey)]
	if m == nil {
		m = map[string]T{}
		g[string(s.b.curKey)] = m
	}
	m[uk] = v
}

// Remove deletes user key uk of the current key.
func (s *MapState[T]) Remove(uk string) {
	g := s.groups[s.b.curKG]
	if m := g[string(s.b.curKey)]; m != nil {
		delete(m, uk)
		if len(m) == 0 {
			delete(g, string(s.b.curKey))
		}
	}
}

// Range calls fn for every user key of the current key until fn returns false.
func (s *MapState[T]) Range(fn func(uk string, v T) bool) {
	for k, v := range s.groups[s.b.curKG][string(s.b.curKey)] {
		if !fn(k, v) {
			return
		}
	}
}

func (s *MapState[T]) kind() Kind { return KindMap }

func (s *MapState[T]) numKeys() int {
	n := 0
	for _, g := range s.groups {
		n += len(g)
	}
	return n
}

// Map entries are encoded as key → (count, then user key and value pairs).
func (s *MapState[T]) groupLen(g int) int { return len(s.groups[g]) }

func (s *MapState[T]) encodeGroup(g int, e *encoder) {
	for k, m := range s.groups[g] {
		e.str(k)
		e.lenPrefixed(func(dst []byte) []byte {
			inner := encoder{buf: dst}
			inner.uvarint(uint64(len(m)))
			for uk, v := range m {
				inner.str(uk)
				inner.lenPrefixed(func(d []byte) []byte { return s.codec.Append(d, v) })
			}
			return inner.buf
		})
	}
}

func (s *MapState[T]) decodeEntry(g int, key, value []byte) error {
	d := decoder{buf: value}
	n := d.uvarint()
	m := make(map[string]T, min(n, uint64(len(value)))) // a corrupt count must not allocate
	for i := uint64(0); i < n && d.err == nil; i++ {
		uk := d.bytes()
		v, err := s.codec.Decode(d.bytes())
		if err != nil {
			return err
		}
		m[string(uk)] = v
	}
	if d.err != nil {
		return d.err
	}
	s.groups[g][string(key)] = m
	return nil
}

// SetKey selects the current key of the state's backend (shorthand for
// KeyedBackend.SetCurrentKey).
func (s *ValueState[T]) SetKey(key []byte) { s.b.SetCurrentKey(key) }
