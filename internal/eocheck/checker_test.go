package eocheck

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// lines encodes records given as split:seq pairs.
func lines(pairs ...[2]int64) string {
	var b []byte
	for _, p := range pairs {
		b = datagen.AppendChecked(b, int(p[0]), p[1])
		b = append(b, '\n')
	}
	return string(b)
}

func seqs(split int64, from, to int64) [][2]int64 {
	var out [][2]int64
	for s := from; s <= to; s++ {
		out = append(out, [2]int64{split, s})
	}
	return out
}

func check(t *testing.T, e Expectation, files map[string]string) *Report {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	r, err := e.Check(fsys, "out")
	require.NoError(t, err)
	return r
}

func TestCheckExactlyOnce(t *testing.T) {
	r := check(t, Expect(2, 5), map[string]string{
		"out/b1/part-0-0": lines(seqs(0, 0, 2)...),
		"out/b1/part-1-0": lines(seqs(1, 0, 4)...),
		"out/b2/part-0-1": lines(seqs(0, 3, 4)...),
		// not committed: never read
		"out/b2/.part-0-2.inprogress.x": lines(seqs(0, 3, 4)...),
		"out/.tmp/part-0-9":             "garbage\n",
		"elsewhere/part-0-0":            lines(seqs(0, 0, 4)...),
	})
	require.True(t, r.OK(), r.String())
	require.Equal(t, 3, r.Files)
	require.Equal(t, int64(10), r.Records)
	require.Equal(t, int64(10), r.Distinct)
	require.Contains(t, r.String(), "exactly once: 10 records of 2 splits in 3 files")
}

func TestCheckLost(t *testing.T) {
	r := check(t, Expect(2, 10), map[string]string{
		"out/a": lines(append(seqs(0, 0, 2), seqs(0, 6, 8)...)...),
		"out/b": lines(seqs(1, 0, 9)...),
	})
	require.False(t, r.OK())
	require.Equal(t, int64(4), r.Lost)
	require.Equal(t, int64(4), r.Splits[0].Lost)
	require.Equal(t, []Range{{3, 5, 3}, {9, 9, 1}}, r.Splits[0].Missing)
	require.Zero(t, r.Splits[1].Lost)
	require.Contains(t, r.String(), "missing seq 3..5 (3), 9")
	require.True(t, r.Duplicated+r.OutOfOrder+r.Corrupt+r.Unexpected == 0)
}

func TestCheckNothingCommitted(t *testing.T) {
	r := check(t, Datagen(2, 1, 6), map[string]string{"out/.part-0-0.inprogress.x": lines(seqs(0, 1, 3)...)})
	require.Equal(t, int64(6), r.Lost)
	require.Zero(t, r.Files)
}

func TestCheckDuplicated(t *testing.T) {
	r := check(t, Expect(1, 4), map[string]string{
		"out/a": lines(seqs(0, 0, 3)...),
		"out/b": lines(seqs(0, 2, 3)...), // committed twice, in two files
		"out/c": lines([2]int64{0, 1}, [2]int64{0, 1}),
	})
	require.Equal(t, int64(4), r.Duplicated)
	require.Equal(t, int64(4), r.Splits[0].Duplicated)
	require.Zero(t, r.Lost)
	require.Zero(t, r.OutOfOrder, "equal numbers are duplicates, not disorder")
	require.False(t, r.OK())
	require.True(t, r.AtLeastOnce())
	require.Contains(t, r.String(), "duplicate split 0 seq 2")
}

func TestCheckOutOfOrder(t *testing.T) {
	r := check(t, Expect(2, 6), map[string]string{
		// within one file, split 0 goes back; split 1 interleaved in order
		"out/a": lines([2]int64{0, 0}, [2]int64{1, 0}, [2]int64{0, 2}, [2]int64{0, 1}, [2]int64{1, 1}, [2]int64{0, 3}),
		// a later file may hold lower numbers: no order across files
		"out/b": lines([2]int64{1, 5}, [2]int64{1, 4}),
		"out/c": lines([2]int64{1, 2}, [2]int64{1, 3}, [2]int64{0, 4}, [2]int64{0, 5}),
	})
	require.Equal(t, int64(2), r.OutOfOrder)
	require.Equal(t, int64(1), r.Splits[0].OutOfOrder)
	require.Equal(t, int64(1), r.Splits[1].OutOfOrder)
	require.Zero(t, r.Lost+r.Duplicated)
	require.Contains(t, r.String(), "out of order: split 0 seq 1 after seq 2")
	require.Contains(t, r.String(), "out/a:4:")
}

func TestCheckCorrupt(t *testing.T) {
	bad := []byte(lines([2]int64{0, 2}))
	bad[len(`{"split":0,"seq":`)] = '3' // seq 3 with the crc of seq 2
	long := strings.Repeat("x", maxLine+10) + "\n"
	r := check(t, Expect(1, 5), map[string]string{
		"out/a": lines(seqs(0, 0, 1)...) + string(bad) + "not json\n" + long + lines(seqs(0, 3, 4)...) + "{\"split\":0",
	})
	require.Equal(t, int64(4), r.Corrupt) // crc, syntax, too long, torn last line
	require.Equal(t, int64(1), r.Lost, "the corrupt record is not counted as seen")
	require.Equal(t, int64(4), r.Records)
	require.Equal(t, int64(8), r.Lines)
	require.Contains(t, r.String(), "checksum mismatch: split 0 seq 3")
}

func TestCheckUnexpected(t *testing.T) {
	r := check(t, Datagen(2, 1, 6), map[string]string{ // split 0: 1 3 5; split 1: 2 4 6
		"out/a": lines([2]int64{0, 1}, [2]int64{0, 3}, [2]int64{0, 5}, [2]int64{1, 2}, [2]int64{1, 4}, [2]int64{1, 6},
			[2]int64{2, 1},  // no split 2
			[2]int64{0, 2},  // seq of split 1 in split 0
			[2]int64{1, 8},  // past the count
			[2]int64{-1, 0}, // negative split
		),
	})
	require.Equal(t, int64(4), r.Unexpected)
	require.Equal(t, int64(1), r.Splits[0].Unexpected)
	require.Equal(t, int64(1), r.Splits[1].Unexpected)
	require.Zero(t, r.Lost+r.Duplicated+r.Corrupt)
	require.Contains(t, r.String(), "unexpected split 2")
}

func TestCheckerOnAStream(t *testing.T) {
	c := Expect(1, 3).NewChecker()
	c.File("stream")
	for _, seq := range []int64{0, 1, 1, 2} {
		c.Line(datagen.AppendChecked(nil, 0, seq))
	}
	r := c.Report()
	require.True(t, r.AtLeastOnce())
	require.Equal(t, int64(1), r.Duplicated)
}

func TestCheckMemFS(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/out/bucket", 0o755))
	write := func(name, data string) {
		f, err := mem.Create(name)
		require.NoError(t, err)
		_, err = f.Write([]byte(data))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	write("/out/bucket/part-0-0", lines(seqs(0, 0, 1)...))
	write("/out/bucket/.part-0-1.inprogress.abc", lines(seqs(0, 2, 2)...))
	r, err := Expect(1, 2).Check(FS(mem, "/"), "out")
	require.NoError(t, err)
	require.True(t, r.OK(), r.String())
	r, err = Expect(1, 2).Check(FS(mem, "/out"), ".")
	require.NoError(t, err)
	require.True(t, r.OK(), r.String())
	_, err = Expect(1, 2).Check(FS(mem, "/"), "missing")
	require.Error(t, err)
}
