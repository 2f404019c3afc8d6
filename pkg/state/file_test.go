package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleOperatorState has lists of both modes, an empty list, an empty
// item, binary bytes and a large item.
func sampleOperatorState() *OperatorState {
	o := NewOperatorState()
	o.Set("offsets", Split, listOf("p0:10", "p1:20", "p2:30"))
	o.Set("splits", Union, listOf("a", "b"))
	o.Set("none", Split, nil)
	o.Set("blobs", Split, [][]byte{{}, {0, 1, 0xff}, bytes.Repeat([]byte("x"), 100_000)})
	return o
}

func sampleKeyed(t testing.TB, n int) (*KeyedBackend, states) {
	b := NewKeyedBackend(128, KeyGroupRange{0, 128})
	s := declareStates(t, b)
	for i := 0; i < n; i++ {
		s.write(t, []byte(fmt.Sprint("key-", i)), valuesFor(i))
	}
	return b, s
}

func TestEncodeDecodeOperatorState(t *testing.T) {
	o := sampleOperatorState()
	data, sum := Encode(o, nil)
	assert.Equal(t, Summary{Lists: map[string]int{"blobs": 3, "none": 0, "offsets": 3, "splits": 2}}, sum)
	s, err := Decode(data)
	require.NoError(t, err)
	assert.False(t, s.keyed)
	assert.Empty(t, s.tables)
	require.Len(t, s.lists, 4)
	names := []string{}
	for _, l := range s.lists {
		names = append(names, l.Name)
		want := o.lists[l.Name]
		assert.Equal(t, want.Mode, l.Mode, l.Name)
		require.Len(t, l.Items, len(want.Items), l.Name)
		for i := range want.Items {
			assert.True(t, bytes.Equal(want.Items[i], l.Items[i]), "%s[%d]", l.Name, i)
		}
	}
	assert.Equal(t, []string{"blobs", "none", "offsets", "splits"}, names, "lists in name order")
}

func TestEncodeDecodeEmpty(t *testing.T) {
	data, sum := Encode(NewOperatorState(), nil)
	assert.Equal(t, Summary{}, sum)
	assert.Len(t, data, len(fileMagic)+2+1+1+4, "magic, version, no lists, not keyed, checksum")
	s, err := Decode(data)
	require.NoError(t, err)
	assert.Equal(t, &Snapshot{}, s)

	// An empty keyed backend.
	b := NewKeyedBackend(128, KeyGroupRange{10, 20})
	data, sum = Encode(NewOperatorState(), b)
	assert.Equal(t, &KeyGroupRange{10, 20}, sum.KeyGroups)
	assert.Zero(t, sum.Keys)
	s, err = Decode(data)
	require.NoError(t, err)
	assert.True(t, s.keyed)
	assert.Equal(t, 128, s.maxParallelism)
	assert.Equal(t, KeyGroupRange{10, 20}, s.rng)
	assert.Empty(t, s.tables)
}

// TestEncodeDecodeKeyed: value, reducing and map state survive a snapshot
// and restore into a backend of the same key groups.
func TestEncodeDecodeKeyed(t *testing.T) {
	const n = 1000
	b, _ := sampleKeyed(t, n)
	o := sampleOperatorState()
	data, sum := Encode(o, b)
	assert.Equal(t, int64(3*n-n/3-1), sum.Keys, "counts and sums for every key, tags for two thirds")
	assert.Equal(t, b.NumKeys(), sum.Keys)
	assert.Equal(t, &KeyGroupRange{0, 128}, sum.KeyGroups)
	assert.Len(t, sum.Lists, 4)

	s, err := Decode(data)
	require.NoError(t, err)
	require.True(t, s.keyed)
	assert.Equal(t, 128, s.maxParallelism)
	require.Len(t, s.tables, 3)
	kinds := map[string]tableKind{}
	for _, tb := range s.tables {
		kinds[tb.Name] = tb.Kind
	}
	assert.Equal(t, map[string]tableKind{"counts": kindValue, "sums": kindValue, "tags": kindMap}, kinds)

	nb := NewKeyedBackend(128, KeyGroupRange{0, 128})
	nb.Restore([]*Snapshot{s})
	assert.Equal(t, sum.Keys, nb.NumKeys(), "restored, not yet declared, keys count")
	ns := declareStates(t, nb)
	assert.Equal(t, sum.Keys, nb.NumKeys())
	for i := 0; i < n; i++ {
		ns.check(t, []byte(fmt.Sprint("key-", i)), valuesFor(i))
	}

	// A restored table nobody declared (yet) is carried over to the next
	// snapshot as it is.
	pass := NewKeyedBackend(128, KeyGroupRange{0, 128})
	pass.Restore([]*Snapshot{s})
	_, err = NewValue(pass, "counts", Codec[int64](Int64Codec{}))
	require.NoError(t, err)
	data2, sum2 := Encode(NewOperatorState(), pass)
	assert.Equal(t, sum.Keys, sum2.Keys)
	s2, err := Decode(data2)
	require.NoError(t, err)
	again := NewKeyedBackend(128, KeyGroupRange{0, 128})
	again.Restore([]*Snapshot{s2})
	as := declareStates(t, again)
	for i := 0; i < n; i++ {
		as.check(t, []byte(fmt.Sprint("key-", i)), valuesFor(i))
	}
}

// TestEncodeCopies: Encode is the synchronous part of a snapshot; state
// changed afterwards must not show in the bytes.
func TestEncodeCopies(t *testing.T) {
	b, st := sampleKeyed(t, 10)
	o := NewOperatorState()
	item := []byte("before")
	o.Set("l", Split, [][]byte{item})
	data, _ := Encode(o, b)
	copy(item, "AFTER!")
	st.write(t, []byte("key-1"), keyValues{count: 999, sum: 999})
	s, err := Decode(data)
	require.NoError(t, err)
	assert.Equal(t, "before", string(s.lists[0].Items[0]))
	nb := NewKeyedBackend(128, KeyGroupRange{0, 128})
	nb.Restore([]*Snapshot{s})
	declareStates(t, nb).check(t, []byte("key-1"), valuesFor(1))
}

func validFile(t testing.TB) []byte {
	b, _ := sampleKeyed(t, 20)
	o := NewOperatorState()
	o.Set("offsets", Split, listOf("p0:10", "p1:20"))
	data, _ := Encode(o, b)
	return data
}

// fixChecksum recomputes the footer so corruption reaches the parser.
func fixChecksum(data []byte) []byte {
	out := append([]byte(nil), data...)
	if len(out) >= len(fileMagic)+2+4 {
		binary.LittleEndian.PutUint32(out[len(out)-4:], checksum(out[:len(out)-4]))
	}
	return out
}

// TestDecodeFlippedByte: every single flipped byte is detected, with an
// error that says what kind of damage it is.
func TestDecodeFlippedByte(t *testing.T) {
	data := validFile(t)
	for i := range data {
		bad := append([]byte(nil), data...)
		bad[i] ^= 0x5a
		_, err := Decode(bad)
		require.Error(t, err, "flipped byte %d not detected", i)
		switch {
		case i < len(fileMagic):
			assert.Contains(t, err.Error(), "bad magic")
		case i < len(fileMagic)+2:
			assert.Contains(t, err.Error(), "version")
		default:
			assert.Contains(t, err.Error(), "checksum mismatch")
		}
	}
}

func TestDecodeTruncated(t *testing.T) {
	data := validFile(t)
	for n := 0; n < len(data); n++ {
		_, err := Decode(data[:n])
		require.Error(t, err, "truncated to %d bytes", n)
		switch {
		case n < len(fileMagic):
			assert.Contains(t, err.Error(), "bad magic", n)
		case n < len(fileMagic)+2+4:
			assert.Contains(t, err.Error(), "truncated", n)
		default:
			assert.Contains(t, err.Error(), "corrupt or truncated", n)
		}
		// Even with a checksum that matches, a cut body is malformed.
		if n >= len(fileMagic)+2+4 {
			_, err = Decode(fixChecksum(data[:n]))
			require.Error(t, err, "truncated to %d bytes, checksum fixed", n)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	valid := validFile(t)
	version := func(v uint16) []byte {
		b := append([]byte(nil), valid...)
		binary.LittleEndian.PutUint16(b[len(fileMagic):], v)
		return fixChecksum(b)
	}
	body := func(parts ...[]byte) []byte {
		b := append([]byte(fileMagic), 1, 0)
		for _, p := range parts {
			b = append(b, p...)
		}
		return fixChecksum(append(b, 0, 0, 0, 0))
	}
	uv := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "bad magic"},
		{"zip file", []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00\x00\x00\x00\x00"), "bad magic"},
		{"metadata file", []byte("FGMETA\r\n\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"), "bad magic"},
		{"magic only", []byte(fileMagic), "truncated"},
		{"version 0", version(0), "format version 0 is not supported (this build reads version 1)"},
		{"version 2", version(2), "format version 2 is not supported (this build reads version 1)"},
		{"version 65535", version(65535), "version 65535"},
		{"checksum", append(append([]byte(nil), valid[:len(valid)-1]...), valid[len(valid)-1]^1), "checksum mismatch"},
		{"trailing bytes", fixChecksum(append(append([]byte(nil), valid[:len(valid)-4]...), 7, 7, 7, 0, 0, 0, 0)), "3 trailing bytes"},
		{"lists beyond the data", body(uv(1000)), "malformed: truncated"},
		{"list item longer than the data", body(uv(1), uv(1), []byte("l"), []byte{1}, uv(1), uv(500)), "malformed: truncated"},
		{"name longer than the data", body(uv(1), uv(99)), "malformed: truncated"},
		{"huge item count", body(uv(1), uv(1), []byte("l"), []byte{1}, uv(math.MaxUint64)), "malformed: truncated"},
		{"no keyed flag", body(uv(0)), "malformed: truncated"},
		{"keyed header cut", body(uv(0), []byte{1}, uv(128)), "malformed: truncated"},
		{"keyed tables beyond the data", body(uv(0), []byte{1}, uv(128), uv(0), uv(128), uv(5)), "malformed: truncated"},
		{"keyed entries beyond the data", body(uv(0), []byte{1}, uv(128), uv(0), uv(128), uv(1), uv(1), []byte("t"), []byte{1}, uv(1), uv(3), uv(math.MaxUint32)), "malformed: truncated"},
		{"bad varint", body([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), "malformed: truncated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestRestoreCorruptEntry: a value its codec cannot read fails the
// declaration, naming the state and the key group.
func TestRestoreCorruptEntry(t *testing.T) {
	b := NewKeyedBackend(128, KeyGroupRange{0, 128})
	b.restoreRaw(&rawTable{Name: "counts", Kind: kindValue, Groups: map[int][]rawGroup{5: {encodeEntries([]entry{{Key: []byte("k"), Value: []byte{0xff}}})}}})
	_, err := NewValue(b, "counts", Codec[int64](Int64Codec{}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `restore keyed state "counts" key group 5`)

	b = NewKeyedBackend(128, KeyGroupRange{0, 128})
	b.restoreRaw(&rawTable{Name: "tags", Kind: kindMap, Groups: map[int][]rawGroup{
		9: {encodeEntries([]entry{{Key: []byte("k"), Value: binary.AppendUvarint(nil, 1<<40)}})}}})
	_, err = NewMap(b, "tags", Codec[string](StringCodec{}), Codec[[]byte](BytesCodec{}))
	require.Error(t, err, "a map entry claiming 2^40 user keys in 6 bytes")
	assert.Contains(t, err.Error(), `restore keyed state "tags" key group 9`)
}

func TestCodecs(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 1 << 40, math.MaxInt64, math.MinInt64} {
		b := Int64Codec{}.Append([]byte("prefix"), v)
		got, err := Int64Codec{}.Decode(b[len("prefix"):])
		require.NoError(t, err)
		assert.Equal(t, v, got)
	}
	for _, bad := range [][]byte{nil, {0x80}, {0x01, 0x02}, bytes.Repeat([]byte{0xff}, 11)} {
		_, err := Int64Codec{}.Decode(bad)
		assert.Error(t, err, "%x", bad)
	}
	in := []byte("abc")
	out, err := BytesCodec{}.Decode(in)
	require.NoError(t, err)
	in[0] = 'X'
	assert.Equal(t, "abc", string(out), "BytesCodec.Decode copies: the input points into a snapshot buffer")
	assert.Equal(t, "xyabc", string(BytesCodec{}.Append([]byte("xy"), []byte("abc"))))
}

func TestChecksumIsCRC32C(t *testing.T) {
	// The CRC-32C check value (RFC 3720 B.4 / the "123456789" test vector).
	assert.Equal(t, uint32(0xe3069283), checksum([]byte("123456789")))
}
