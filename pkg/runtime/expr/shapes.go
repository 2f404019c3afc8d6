package expr

// memberShape is a member scanMembers met at a position: its key and the
// field it is (-1: none the sink reads). Comparing a key with the one at
// its position last time is one comparison instead of one per field read.
type memberShape struct {
	key   string
	field int
	// `"key":` as three little-endian words, zero-padded, and the masks
	// of its plen bytes. Comparing three words costs less than a call to
	// memequal and the separate checks of the quotes and the colon. plen
	// 0: the key is too long for them (over 20 bytes: a shorter one
	// leaves the value's first byte within the 24 the words were read
	// from, so fastScan need not check it is in the record), and the
	// words match nothing (w[0] is 0 under a full mask, where a key's
	// first byte is a quote).
	w, mask [3]uint64
	plen    int
}

func newShape(key string, f int) memberShape {
	m := memberShape{key: key, field: f, mask: [3]uint64{^uint64(0)}}
	if len(key)+3 < 24 {
		var b [24]byte
		b[0] = '"'
		copy(b[1:], key)
		b[1+len(key)], b[2+len(key)] = '"', ':'
		m.plen = len(key) + 3
		for j := range 3 {
			m.w[j] = le64(b[8*j:])
			if n := m.plen - 8*j; n >= 8 {
				m.mask[j] = ^uint64(0)
			} else if n > 0 {
				m.mask[j] = 1<<(8*n) - 1
			}
		}
	}
	return m
}

// at is the index after the key of m (its closing quote's, the colon not
// checked when data ends too soon for the words) if data[i:] starts with
// it; 0 if not. fastScan makes the same test of the words; this is the
// general loop's, for a member fastScan did not read.
func (m *memberShape) at(data []byte, i int) (end int) {
	if m.plen > 0 && len(data)-i >= 24 {
		w := data[i : i+24 : i+24]
		if le64(w)&m.mask[0] == m.w[0] && le64(w[8:])&m.mask[1] == m.w[1] && le64(w[16:])&m.mask[2] == m.w[2] {
			return i + m.plen - 1
		}
		return 0
	}
	if e := i + 1 + len(m.key); e < len(data) && data[i] == '"' && data[e] == '"' && view(data[i+1:e]) == m.key {
		return e + 1
	}
	return 0
}

const (
	// maxShape bounds the positions remembered (members past it are
	// matched by the sink's lookup).
	maxShape = 64
	// maxShapes bounds the member orders a shapeSet keeps: a stream that
	// interleaves kinds of record (Nexmark's persons, auctions and bids)
	// finds each kind's order when its records come.
	maxShapes = 4
)

// shapeSet is the member orders (shapes) scanMembers met in the last
// records of one reader, so that a key at a position where it was before
// costs three word comparisons instead of a scan of it and a lookup.
// It only predicts: every key is compared with the record's bytes before
// it is trusted, so what it holds decides the cost of a scan, never its
// result. A reader keeps one per row it scans.
type shapeSet struct {
	shapes [maxShapes][]memberShape
	cur    int // the shape tried first: the last one a record used
	next   int // the slot a new shape takes when all are in use (round robin)
	used   int // slots in use
	// fresh: the current record already took a slot of its own (by
	// copy), or extends the shape it follows; a record takes at most one
	// slot, so a stream without an order costs one copy per record at
	// most.
	fresh bool
}

// other is, on a miss at position pos of the current shape, another
// shape that has at pos the key data holds at i: it becomes the current
// one. ok false: none has.
func (s *shapeSet) other(data []byte, i, pos int) (sh *memberShape, end int, ok bool) {
	for k := range s.used {
		if k == s.cur || pos >= len(s.shapes[k]) {
			continue
		}
		if m := &s.shapes[k][pos]; m.at(data, i) > 0 {
			s.cur, s.fresh = k, false
			return m, m.at(data, i), true
		}
	}
	return nil, 0, false
}

// record makes key (field f) the member at position pos of the current
// record's shape, keeping the shape it diverges from for the records of
// its kind: the first divergence of a record copies the shape's members
// before pos into a slot of its own.
func (s *shapeSet) record(pos int, key string, f int) {
	if pos >= maxShape {
		return
	}
	cur := s.shapes[s.cur]
	switch {
	case s.used == 0:
		s.used, s.fresh = 1, true
		s.shapes[0] = append(s.shapes[0][:0], newShape(key, f))
	case pos == len(cur): // a longer record than the shape: it grows
		s.shapes[s.cur] = append(cur, newShape(key, f))
	case s.fresh:
		cur[pos] = newShape(key, f)
	default:
		k := s.used
		if k == maxShapes {
			if k = s.next; k == s.cur {
				k = (k + 1) % maxShapes
			}
			s.next = (k + 1) % maxShapes
		} else {
			s.used++
		}
		s.shapes[k] = append(append(s.shapes[k][:0], cur[:pos]...), newShape(key, f))
		s.cur, s.fresh = k, true
	}
}
