package expr

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// keysSink reads the members named in want (field: the index in want)
// and counts its lookups.
type keysSink struct {
	want    []string
	lookups int
}

func (k *keysSink) lookup(key []byte, escaped bool, _ int) (int, string, bool) {
	k.lookups++
	if escaped {
		return -1, "", false
	}
	for f, w := range k.want {
		if w == string(key) {
			return f, w, true
		}
	}
	return -1, string(key), true
}

// scanAll is what scanMembers hands over for data, and whether it read it.
func scanAll(data []byte, set *shapeSet, sink keySink) ([]found, bool) {
	return scanMembers(data, set, sink, []found{})
}

// The remembered shapes decide what a scan costs, never what it finds:
// each record read with the shapes of the records before it (in both
// orders, and after itself) gives what it gives read with none.
func TestShapesChangeNothing(t *testing.T) {
	records := append(append(append([]string{}, nativeRecords...), dupRecords...), bid,
		`{"event_type":2, "auction":1000,"bidder":1001}`, `{"event_type":2,"auction":1000 ,"bidder":1001}`,
		`{"event_type":2,"auction":"x\"y","bidder":1.5}`, `{"event_type":2,"auction":1000,"bidder":1001,"auction":7}`)
	want := []string{"event_type", "auction", "a", "b", "s", "extra"}
	for _, order := range [][]string{records, reversed(records)} {
		set := &shapeSet{}
		for _, rec := range order {
			cold, cok := scanAll([]byte(rec), nil, &keysSink{want: want})
			for range 2 {
				warm, wok := scanAll([]byte(rec), set, &keysSink{want: want})
				require.Equal(t, cok, wok, rec)
				if cok {
					require.Equal(t, cold, warm, rec)
				}
			}
		}
	}
}

// A stream that interleaves kinds of record (Nexmark's persons, auctions
// and bids) finds each kind's order in the set: after the first of each,
// no key is looked up again.
func TestShapeSetKeepsEachKind(t *testing.T) {
	recs := nexmarkEvents(t, 500)
	set := &shapeSet{}
	sink := &keysSink{want: []string{"event_type", "auction", "price"}}
	for _, r := range recs[:100] {
		_, ok := scanAll(r.Value, set, sink)
		require.True(t, ok)
	}
	require.Equal(t, 3, set.used, "a shape per kind")
	sink.lookups = 0
	for _, r := range recs[100:] {
		_, ok := scanAll(r.Value, set, sink)
		require.True(t, ok)
	}
	require.Zero(t, sink.lookups)
}

// FuzzShapesChangeNothing: any record gives the same members read with
// the shapes of a bid, of itself, or none. Run by make fuzz.
func FuzzShapesChangeNothing(f *testing.F) {
	for _, rec := range append(append(append([]string{}, nativeRecords...), dupRecords...), bid) {
		f.Add([]byte(rec))
	}
	want := []string{"event_type", "auction", "a", "b", "s", "extra", ""}
	f.Fuzz(func(t *testing.T, data []byte) {
		cold, cok := scanAll(data, nil, &keysSink{want: want})
		set := &shapeSet{}
		_, _ = scanAll([]byte(bid), set, &keysSink{want: want})
		for range 3 {
			warm, wok := scanAll(data, set, &keysSink{want: want})
			require.Equal(t, cok, wok, "%q", data)
			if cok {
				require.Equal(t, cold, warm, "%q", data)
			}
		}
	})
}
