package state

// List is a list of values per key (Flink's ListState), in the order they
// were added.
type List[T any] struct {
	b      *KeyedBackend
	groups []map[string][]T
	codec  Codec[T]
}

// NewList declares (or returns the restored) list state name.
func NewList[T any](b *KeyedBackend, name string, codec Codec[T]) (*List[T], error) {
	s := &List[T]{b: b, groups: make([]map[string][]T, b.rng.Len()), codec: codec}
	for i := range s.groups {
		s.groups[i] = map[string][]T{}
	}
	if err := b.declare(name, kindList, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Get returns the current key's values (nil when none). The slice is the
// state's own: append through Add, not to it.
func (s *List[T]) Get() []T { return s.groups[s.b.curKG][string(s.b.curKey)] }

// Add appends v to the current key's values.
func (s *List[T]) Add(v T) {
	g := s.groups[s.b.curKG]
	g[string(s.b.curKey)] = append(g[string(s.b.curKey)], v)
}

// Update replaces the current key's values (deleting them when vs is empty).
func (s *List[T]) Update(vs []T) {
	if len(vs) == 0 {
		s.Clear()
		return
	}
	s.groups[s.b.curKG][string(s.b.curKey)] = vs
}

// Clear removes the current key's values.
func (s *List[T]) Clear() { delete(s.groups[s.b.curKG], string(s.b.curKey)) }

func (s *List[T]) kind() tableKind { return kindList }

func (s *List[T]) numKeys() int {
	n := 0
	for _, g := range s.groups {
		n += len(g)
	}
	return n
}

func (s *List[T]) groupLen(g int) int { return len(s.groups[g]) }

// List entries are encoded as key → (count, then each value length-prefixed).
func (s *List[T]) encodeGroup(g int, e *encoder) {
	for k, vs := range s.groups[g] {
		e.str(k)
		e.lenPrefixed(func(dst []byte) []byte {
			inner := encoder{buf: dst}
			inner.uvarint(uint64(len(vs)))
			for _, v := range vs {
				inner.lenPrefixed(func(d []byte) []byte { return s.codec.Append(d, v) })
			}
			return inner.buf
		})
	}
}

func (s *List[T]) decodeEntry(g int, key, value []byte) error {
	d := decoder{buf: value}
	n := d.uvarint()
	vs := make([]T, 0, min(n, uint64(len(value))))
	for i := uint64(0); i < n && d.err == nil; i++ {
		v, err := s.codec.Decode(d.bytes())
		if err != nil {
			return err
		}
		vs = append(vs, v)
	}
	if d.err != nil {
		return d.err
	}
	s.groups[g][string(key)] = vs
	return nil
}
