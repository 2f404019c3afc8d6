package state

// Codec encodes state values for snapshots. Decode must not keep b: it
// points into a snapshot buffer. Changing a codec's format breaks restoring
// older snapshots: version the format in its first byte when it may change.
type Codec[T any] interface {
	Append(dst []byte, v T) []byte
	Decode(b []byte) (T, error)
}

// Value is one value per key (Flink's ValueState). Like every keyed state
// handle it reads and writes the backend's current key
// (KeyedBackend.SetCurrentKey), and is used from the subtask's goroutine.
type Value[T any] struct {
	b      *KeyedBackend
	groups []map[string]T // nil on a store
	codec  Codec[T]
	kv     *kvTable // nil: the maps
}

// NewValue declares (or returns the restored) value state name.
func NewValue[T any](b *KeyedBackend, name string, codec Codec[T]) (*Value[T], error) {
	s := &Value[T]{b: b, codec: codec}
	if b.store != nil {
		if s.kv = b.takeStored(name); s.kv == nil {
			s.kv = newKVTable(b, name)
		}
	} else {
		s.groups = make([]map[string]T, b.rng.Len())
		for i := range s.groups {
			s.groups[i] = map[string]T{}
		}
	}
	if err := b.declare(name, kindValue, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Get returns the value of the current key. On a store it is a decoded
// copy: Put it back after changing it.
func (s *Value[T]) Get() (T, bool) {
	if s.kv != nil {
		return s.getKV()
	}
	v, ok := s.groups[s.b.curKG][string(s.b.curKey)]
	return v, ok
}

// Copies reports whether Get returns a decoded copy (a store keeps the
// state): a value changed in place must then be Put back. On the heap Get
// returns the stored value itself, and putting it back is a wasted map
// write per record.
func (s *Value[T]) Copies() bool { return s.kv != nil }

// Put sets the value of the current key.
func (s *Value[T]) Put(v T) {
	if s.kv != nil {
		s.kv.val = s.codec.Append(s.kv.val[:0], v)
		s.kv.put(s.kv.val)
		return
	}
	g := s.groups[s.b.curKG]
	if _, ok := g[string(s.b.curKey)]; ok {
		g[string(s.b.curKey)] = v // no key allocation on update
		return
	}
	g[string(s.b.curKey)] = v
}

// Delete removes the current key's value.
func (s *Value[T]) Delete() {
	if s.kv != nil {
		s.kv.delete()
		return
	}
	delete(s.groups[s.b.curKG], string(s.b.curKey))
}

func (s *Value[T]) getKV() (T, bool) {
	var zero T
	b, ok := s.kv.get()
	if !ok {
		return zero, false
	}
	var v T
	var err error
	if d, ok := s.codec.(StoredDecoder[T]); ok {
		v, err = d.DecodeStored(b)
	} else {
		v, err = s.codec.Decode(b)
	}
	if err != nil { // restored values were checked: the store is damaged
		storeFailed("decode", s.kv.name, err)
	}
	return v, true
}

// DeleteWhere removes every key's value for which drop returns true and
// returns how many it removed. It visits all the backend's keys of this
// state, whatever the current key (which it leaves as it is); drop may
// change the value it is given in place (on a store the changed value is
// written back).
func (s *Value[T]) DeleteWhere(drop func(v T) bool) int {
	if s.kv != nil {
		return s.deleteWhereKV(drop)
	}
	n := 0
	for _, g := range s.groups {
		for k, v := range g {
			if drop(v) {
				delete(g, k)
				n++
			}
		}
	}
	return n
}

// SetKey selects the current key of the state's backend (shorthand for
// KeyedBackend.SetCurrentKey).
func (s *Value[T]) SetKey(key []byte) { s.b.SetCurrentKey(key) }

func (s *Value[T]) deleteWhereKV(drop func(v T) bool) int {
	n := 0
	t := s.kv
	t.known = 0 // existence of the current key may change
	for g := range t.counts {
		err := t.scanGroup(g, func(sk, _, b []byte) error {
			v, err := s.codec.Decode(b)
			if err != nil {
				return err
			}
			if drop(v) {
				n++
				t.counts[g]--
				return t.b.store.Delete(sk)
			}
			t.val = s.codec.Append(t.val[:0], v)
			if string(t.val) != string(b) {
				return t.b.store.Set(sk, t.val)
			}
			return nil
		})
		if err != nil {
			storeFailed("delete where", t.name, err)
		}
	}
	return n
}

func (s *Value[T]) kind() tableKind { return kindValue }

func (s *Value[T]) inStore() bool { return s.kv != nil }

func (s *Value[T]) kvTable() *kvTable { return s.kv }

func (s *Value[T]) loads() bool { return s.kv != nil }

func (s *Value[T]) loadGroup(g int, parts []rawGroup) error {
	return s.kv.restoreGroup(g, parts, func(b []byte) error {
		_, err := s.codec.Decode(b)
		return err
	})
}

func (s *Value[T]) presize(g, n int) {
	if s.kv == nil && len(s.groups[g]) == 0 {
		s.groups[g] = make(map[string]T, n)
	}
}

func (s *Value[T]) numKeys() int {
	if s.kv != nil {
		return s.kv.numKeys()
	}
	n := 0
	for _, g := range s.groups {
		n += len(g)
	}
	return n
}

func (s *Value[T]) groupLen(g int) int {
	if s.kv != nil {
		return s.kv.counts[g]
	}
	return len(s.groups[g])
}

func (s *Value[T]) encodeGroup(g int, e *encoder) {
	if s.kv != nil {
		s.kv.encodeGroup(g, e)
		return
	}
	for k, v := range s.groups[g] {
		e.str(k)
		e.lenPrefixed(func(dst []byte) []byte { return s.codec.Append(dst, v) })
	}
}

func (s *Value[T]) decodeEntry(g int, key, value []byte) error {
	v, err := s.codec.Decode(value)
	if err != nil {
		return err
	}
	s.groups[g][string(key)] = v
	return nil
}

// Reducing keeps one value per key, combined with each added value by a
// reduce function (Flink's ReducingState).
type Reducing[T any] struct {
	*Value[T]
	reduce func(acc, v T) (T, error)
}

// NewReducing declares a reducing state.
func NewReducing[T any](b *KeyedBackend, name string, codec Codec[T], reduce func(acc, v T) (T, error)) (*Reducing[T], error) {
	v, err := NewValue(b, name, codec)
	if err != nil {
		return nil, err
	}
	return &Reducing[T]{Value: v, reduce: reduce}, nil
}

// Add combines v into the current key's value and returns the result.
func (s *Reducing[T]) Add(v T) (T, error) {
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
