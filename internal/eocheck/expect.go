package eocheck

import "fmt"

// Expectation is the input a job was given: for each split s in
// [0, splits), n sequence numbers first, first+stride, first+2*stride, …
// Build one with Expect or Datagen.
type Expectation struct {
	splits []progression
}

// progression is one split's sequence numbers.
type progression struct {
	first, stride, n int64
}

// Expect is an input of splits splits, each holding sequence numbers 0,
// 1, …, perSplit-1.
func Expect(splits int, perSplit int64) Expectation {
	e := Expectation{splits: make([]progression, splits)}
	for s := range e.splits {
		e.splits[s] = progression{first: 0, stride: 1, n: max(perSplit, 0)}
	}
	return e
}

// Datagen is the input of a datagen source with format checked: count
// values start, start+1, … dealt into splits splits (the parallelism of
// its first run), split s holding start+s, start+s+splits, … — each
// record's seq is its value.
func Datagen(splits int, start, count int64) Expectation {
	e := Expectation{splits: make([]progression, splits)}
	for s := range e.splits {
		n := int64(0)
		if rest := count - int64(s); rest > 0 {
			n = (rest + int64(splits) - 1) / int64(splits)
		}
		e.splits[s] = progression{first: start + int64(s), stride: int64(splits), n: n}
	}
	return e
}

// Splits is the number of splits.
func (e Expectation) Splits() int { return len(e.splits) }

// Records is the number of records the input held.
func (e Expectation) Records() int64 {
	var n int64
	for _, p := range e.splits {
		n += p.n
	}
	return n
}

func (e Expectation) String() string {
	return fmt.Sprintf("%d records in %d splits", e.Records(), len(e.splits))
}

// index returns the position of seq in its split's progression, false when
// seq is not one of them.
func (p progression) index(seq int64) (int64, bool) {
	d := seq - p.first
	if d < 0 || d%p.stride != 0 || d/p.stride >= p.n {
		return 0, false
	}
	return d / p.stride, true
}

// seq is the sequence number at position i.
func (p progression) seq(i int64) int64 { return p.first + i*p.stride }
