package cli

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// logs -n above what one answer holds says so instead of cutting silently.
func TestTailLines(t *testing.T) {
	n, note, err := tailLines(100)
	require.NoError(t, err)
	require.Equal(t, 100, n)
	require.Empty(t, note)
	n, note, err = tailLines(5000)
	require.NoError(t, err)
	require.Equal(t, api.LogsLinesMax, n)
	require.Contains(t, note, "-n 5000: showing the last 1000 lines")
	_, _, err = tailLines(0)
	require.ErrorContains(t, err, "give a number of lines from 1 to 1000")
}
