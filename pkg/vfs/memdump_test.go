package vfs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDump(t *testing.T) {
	m := NewMem()
	durableDir(t, m, "/d")
	writeFile(t, m, "/d/f", "abc", true)
	appendString(t, m, "/d/f", "de")
	require.Equal(t, "/d/ durable=true\n/d/f size=5 synced=3 durable=false\n", m.Dump())
	require.Equal(t, m.Dump(), m.String())
}
