package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func line(i int) string { return fmt.Sprintf("line %03d", i) } // 8 bytes and a newline

// A follower reads every complete line once, in order, across rotations
// of job.out; a partial line waits until it is whole.
func TestJobOutFollowAcrossRotations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.out")
	o, err := openJobOut(path, 95) // ten lines of 9 bytes a file
	require.NoError(t, err)
	defer o.Close()
	tail, err := o.Tail(10)
	require.NoError(t, err)
	require.Empty(t, tail.lines)
	pos := tail.next

	var got []string
	read := func() {
		r, err := o.ReadFrom(pos)
		require.NoError(t, err)
		require.Zero(t, r.skipped)
		got, pos = append(got, r.lines...), r.next
	}
	var want []string
	for i := range 47 {
		_, err := o.Write([]byte(line(i) + "\n"))
		require.NoError(t, err)
		want = append(want, line(i))
		if i%7 == 0 { // reads between some writes: at most one rotation apart
			read()
		}
	}
	read()
	require.Equal(t, want, got)

	_, err = o.Write([]byte("half"))
	require.NoError(t, err)
	read()
	require.Equal(t, want, got, "no partial line")
	_, err = o.Write([]byte(" done\n"))
	require.NoError(t, err)
	read()
	require.Equal(t, "half done", got[len(got)-1])

	// The tail spans job.out.1 when job.out holds fewer lines.
	tail, err = o.Tail(12)
	require.NoError(t, err)
	require.Len(t, tail.lines, 12)
	require.Equal(t, "half done", tail.lines[11])
	require.Equal(t, line(46), tail.lines[10])
	require.Equal(t, pos, tail.next)
}

// A follower that fell behind by more than the two files learns how much
// it missed and goes on with the oldest line kept.
func TestJobOutFollowerBehind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.out")
	o, err := openJobOut(path, 95)
	require.NoError(t, err)
	defer o.Close()
	for i := range 40 {
		_, err := o.Write([]byte(line(i) + "\n"))
		require.NoError(t, err)
	}
	r, err := o.ReadFrom(0)
	require.NoError(t, err)
	require.Equal(t, int64(20*9), r.skipped, "two files of ten lines were rotated away")
	require.Equal(t, line(20), r.lines[0])
	require.Len(t, r.lines, 20)

	// A position past the end (another daemon's) starts at the end.
	r, err = o.ReadFrom(1 << 40)
	require.NoError(t, err)
	require.Empty(t, r.lines)
	r, err = o.ReadFrom(r.next)
	require.NoError(t, err)
	require.Empty(t, r.lines)
}

// Lines are cut at 4 KiB; a job that ended before this daemon started is
// read from its file; a missing file is empty output.
func TestJobOutReadLimits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "job.out")
	long := strings.Repeat("é", outputLineMax) // 2 bytes each
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintln(&b, line(i))
	}
	b.WriteString(long + "\n")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	o := outputOf(path)
	tail, err := o.Tail(3)
	require.NoError(t, err)
	require.Equal(t, []string{line(1998), line(1999)}, tail.lines[:2])
	require.LessOrEqual(t, len(tail.lines[2]), outputLineMax+len("…"))
	require.True(t, strings.HasSuffix(tail.lines[2], "é…"), "cut at a character")
	require.Equal(t, int64(b.Len()), tail.next)

	r, err := o.ReadFrom(0)
	require.NoError(t, err)
	require.Len(t, r.lines, outputLinesMax, "one answer holds at most 1000 lines")
	r, err = o.ReadFrom(r.next)
	require.NoError(t, err)
	require.Len(t, r.lines, outputLinesMax)
	r, err = o.ReadFrom(r.next)
	require.NoError(t, err)
	require.Len(t, r.lines, 1)
	require.True(t, strings.HasSuffix(r.lines[0], "é…"))

	none := outputOf(filepath.Join(dir, "missing.out"))
	tail, err = none.Tail(10)
	require.NoError(t, err)
	require.Empty(t, tail.lines)
	r, err = none.ReadFrom(0)
	require.NoError(t, err)
	require.Empty(t, r.lines)
}
