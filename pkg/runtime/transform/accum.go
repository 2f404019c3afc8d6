package transform

// accum is a reduce's accumulator in keyed state: its JSON when a Fold
// can read it (expr.ExactJSON: the JSON decodes as the value), else the
// VM's value. Either way a snapshot holds the JSON the JSON codec writes,
// so the two forms and older snapshots restore alike.
type accum struct {
	json []byte  // the accumulator, when !vm; owned by the state
	at   []int32 // where a Fold's members are in json (expr.Fold.Places); empty: unknown
	v    any     // the accumulator, when vm
	vm   bool
}

// value is the accumulator as the VM reads it.
func (a *accum) value() (any, error) {
	if a.vm {
		return a.v, nil
	}
	return jsonCodec{}.Decode(a.json)
}

// setJSON keeps b (copied into the accumulator's own buffer) with the
// places of its members (nil: unknown).
func (a *accum) setJSON(b []byte, at []int32) {
	a.json, a.at, a.v, a.vm = append(a.json[:0], b...), append(a.at[:0], at...), nil, false
}

func (a *accum) setValue(v any) { a.json, a.at, a.v, a.vm = a.json[:0], a.at[:0], v, true }

// accumCodec writes an accumulator as jsonCodec does.
type accumCodec struct{}

func (accumCodec) Append(dst []byte, a *accum) []byte {
	if a.vm {
		return jsonCodec{}.Append(dst, a.v)
	}
	return append(dst, a.json...)
}

func (accumCodec) Decode(b []byte) (*accum, error) {
	if _, err := (jsonCodec{}).Decode(b); err != nil {
		return nil, err // as before: a snapshot that is not JSON fails its restore
	}
	return &accum{json: append([]byte(nil), b...)}, nil
}
