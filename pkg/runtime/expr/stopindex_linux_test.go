//go:build linux

package expr

import (
	"math/rand/v2"
	"runtime/debug"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// guarded maps three pages, the outer two unreadable, and returns the
// middle one: a read past either end of it faults.
func guarded(t *testing.T) []byte {
	ps := syscall.Getpagesize()
	m, err := syscall.Mmap(-1, 0, 3*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(m) })
	require.NoError(t, syscall.Mprotect(m[:ps], syscall.PROT_NONE))
	require.NoError(t, syscall.Mprotect(m[2*ps:], syscall.PROT_NONE))
	return m[ps : 2*ps : 2*ps]
}

var guardSink byte

// stopIndex reads nothing outside b: b against an unreadable page after
// it or before it, every length to 80 and every start, random contents.
// (First, that a read past the page does fault.)
func TestStopIndexReadsNothingOutsideB(t *testing.T) {
	page := guarded(t)
	ps := len(page)
	func() {
		debug.SetPanicOnFault(true)
		defer debug.SetPanicOnFault(false)
		defer func() { require.NotNil(t, recover(), "a read past the page faults") }()
		guardSink = *(*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(page)), ps))
	}()
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 10000; iter++ {
		n := r.IntN(80)
		b := page[ps-n : ps : ps] // ends at the page after
		if iter%2 == 1 {
			b = page[0:n:n] // starts right after the page before
		}
		for i := range b {
			c := byte(0x20 + r.IntN(0x5f))
			switch r.IntN(12) {
			case 0:
				c = '"'
			case 1:
				c = '\\'
			case 2:
				c = byte(r.IntN(256))
			}
			b[i] = c
		}
		for from := 0; from <= n; from++ {
			want := stopIndexSlow(b, from)
			require.Equal(t, want, stopIndex(b, from), "%q from %d", b, from)
			require.Equal(t, want, stopIndexGo(b, from), "%q from %d", b, from)
		}
	}
	require.Equal(t, 0, stopIndex(nil, 0))
	require.Equal(t, 0, stopIndex(page[ps:ps:ps], 0))
}
